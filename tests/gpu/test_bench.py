"""The bench helpers the notebooks and `python -m tcgemm bench` call: compare, checks, config and
size sweeps, and time_spec, on small sizes."""
import numpy as np
import pytest

from tcgemm.engine.catalog import GEMM_KERNELS

pytestmark = pytest.mark.gpu


def test_compare_one_dtype_with_its_baseline_and_ceiling(capsys):
    from tcgemm.engine.gpu.bench import CUBLAS_SGEMM, compare_timings
    c = compare_timings(["s1", "s2"], 512, 512, 512, reps=5, warmup=2, ceiling=True)
    assert capsys.readouterr().out == ""            # no progress output unless a log is given
    assert [r.key for r in c.results] == ["cublas-sgemm", "s1", "s2"]
    assert c.baseline.name == CUBLAS_SGEMM and all(r.passed for r in c.results)
    assert c.ceiling.exact and c.ceiling_tflops > 0
    assert c.table.column("% FFMA")[1] == pytest.approx(100 * c.result("s1").tflops / c.ceiling_tflops)
    assert len(c.figure().axes[0].patches) == 3
    with pytest.raises(ValueError, match="one input and output type"):
        compare_timings(["k1.1", "s1"], 256, 256, 256)


def test_compare_logs_progress_when_asked():
    from tcgemm.engine.gpu.bench import compare_timings
    lines = []
    c = compare_timings(["k1.1"], 256, 256, 256, reps=3, warmup=1, log=lines.append)
    assert c.ceiling is None and "% mma.sync" not in [col.name for col in c.table.columns]
    assert lines[0].startswith("[") and lines[-1].endswith("done")


def test_time_in_rounds_times_each_kernel_against_cublas_in_every_round():
    from tcgemm.engine.gpu.bench import time_in_rounds
    lines = []
    table = time_in_rounds(["k1.1", "k4.4"], 512, 512, 512, rounds=3, reps=5, log=lines.append)
    rows = table.records()
    assert [r["Kernel"].split(":")[0] for r in rows] == ["Kernel 1.1", "Kernel 4.4"]
    assert all(r["verdict"] in ("ahead", "level", "behind") and r["% of cuBLAS (cublasGemmEx)"] > 0 for r in rows)
    assert "3 interleaved rounds" in table.caption and lines[-1].startswith("[") and "3/3" in lines[-1]
    with pytest.raises(ValueError, match="one input and output type"):
        time_in_rounds(["k1.1", "s1"], 256, 256, 256, rounds=2)


def test_checks_table_runs_every_kernel_at_every_shape():
    from tcgemm.engine.gpu.bench import check_kernels
    table = check_kernels(["k1.1", "cublas"], [(256, 512, 128), (512, 256, 256)])
    assert len(table.rows) == 4 and table.column("Check") == ["PASS"] * 4
    assert table.column("Kernel")[0] == GEMM_KERNELS["k1.1"].title


def test_bench_configs_lists_skipped_configurations():
    from tcgemm.engine.gpu.bench import bench_configs
    from tcgemm.engine.gpu.device import device_info
    spec = GEMM_KERNELS["k4.1"]                       # dynamic shared memory: 2 (BM + BN) BK stages bytes
    table = bench_configs("k4.1", [(32, 3), (64, 16)], 512, 512, 512, reps=3)
    assert table.column("Check")[0] == "PASS" and table.column("TFLOP/s")[0] > 0
    assert table.column("Shared KB")[0] >= 2 * (spec.tile_m + spec.tile_n) * 32 * 3 / 1024
    limit = device_info().shared_mem_per_block_optin // 1024   # 16 stages of BK=64 need 768 KB: no GPU has it
    assert table.column("Check")[1] == f"skipped: over this GPU's {limit} KB" and table.column("µs")[1] is None
    assert table.column("Shared KB")[1] == 768


def test_size_sweep_marks_shapes_a_kernel_cannot_run():
    from tcgemm.engine.gpu.bench import size_sweep
    spec = GEMM_KERNELS["k1.1"]
    odd = (spec.tile_m + 1, spec.tile_n, spec.tile_k)
    rows = size_sweep("k1.1", {"fits": [(256, 256, 256)], "odd": [odd]}, reps=3)
    assert [r["skipped"] for r in rows] == [False, True] and all(r["passed"] for r in rows)
    assert rows[0]["kernel_tflops"] > 0 and np.isnan(rows[1]["kernel_tflops"]) and rows[1]["cublas_tflops"] > 0


def test_time_spec_uses_the_kernels_input_dtype():
    from tcgemm.engine.gpu.bench import time_spec
    from tcgemm.engine.gpu.gemm import kernel_spec
    # The launch is prepared with the kernel's checks: fp16 operands for this fp32 kernel would be refused.
    timing = time_spec(kernel_spec("s1"), 256, 256, 256, reps=3)
    assert timing.median > 0 and timing.runs == 3


def test_accumulation_errors_grow_with_k_in_fp16_only():
    from tcgemm.engine.gpu.bench import accumulation_errors
    table = accumulation_errors(Ks=(256, 16384))
    assert table.column("K") == [256, 16384]
    fp16, fp32 = table.column("fp16 accumulate (HGEMM)"), table.column("fp32 accumulate (Kernel 1.1)")
    assert fp16[1] > fp16[0] and all(e16 > 10 * e32 for e16, e32 in zip(fp16, fp32))
    assert table.caption.startswith("Relative Frobenius error of 256 × 256 × K")



def test_switch_scaling_fits_each_switch_set():
    from tcgemm.pipelines.gpu.scaling import switch_scaling
    from tcgemm.engine.gpu.gemm import for_this_gpu
    spec = for_this_gpu(GEMM_KERNELS["k4.4"])
    scaling = switch_scaling(spec, [(), ("SKIP_SYNC",)], 1024, 1024, Ks=(1024, 4096), reps=3)
    assert list(scaling) == ["as written", "SKIP_SYNC"]
    for times, fit in scaling.values():
        assert len(times) == 2 and times[1] > times[0] and fit.loop_tflops > 0
    with pytest.raises(ValueError, match="no switch"):
        switch_scaling(spec, [("NOT_A_SWITCH",)], 1024, 1024, Ks=(1024, 4096))


def test_switch_cost_gives_each_size_both_times_and_the_share():
    from tcgemm.engine.gpu.bench import switch_cost
    table = switch_cost("k4.4", "SKIP_COPIES", (512, 1024), reps=5)
    assert [c.name for c in table.columns] == ["size", "as written, µs", "SKIP_COPIES, µs", "share of the time"]
    assert [row[0] for row in table.rows] == ["512³", "1024³"]
    for _, written, skipped, share in table.rows:
        assert 0 < float(skipped) < float(written)
        assert abs(float(share.rstrip("%")) - 100 * (1 - float(skipped) / float(written))) < 1
