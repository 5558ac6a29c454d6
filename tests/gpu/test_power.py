"""NVML beside a kernel run back to back: readings of this GPU, settled times that agree with the bench's
timing, and the ceiling probe's rate."""
import pytest

pytestmark = pytest.mark.gpu


def test_nvml_reads_this_gpu():
    import cupy
    from tcgemm.hopper.gpu.power import nvml_for
    nvml = nvml_for(cupy.cuda.runtime.getDevice())
    s = nvml.sample(0.0)
    assert 100 < s.sm_mhz < 5000 and s.reasons >= 0
    assert s.power_w is None or 5 < s.power_w < 2000
    assert nvml.limit_w() is None or 50 < nvml.limit_w() < 2000


def test_a_sustained_series_agrees_with_the_bench_timing():
    from tcgemm.engine.gpu.bench import on_random_operands, runner
    from tcgemm.hopper.gpu.power import sustain
    from tcgemm.engine.gpu.timing import time_launches
    from tcgemm.hopper.power import sustained_table
    run = on_random_operands(runner("cublas"), 2048, 2048, 2048)
    s = sustain("cuBLAS", run, seconds=0.6, settle_s=0.2, flop=2.0 * 2048**3)
    bench = time_launches(run).median * 1e6
    assert s.time_us() == pytest.approx(bench, rel=0.25)
    assert len(s.settled_samples()) >= 5 and s.clock_mhz() > 100
    assert s.end_s[-1] == pytest.approx(0.6, rel=0.5)
    assert sustained_table([s], reference="cuBLAS").column("% of cuBLAS") == [pytest.approx(100.0)]


def test_the_ceiling_probe_runs_sustained():
    from tcgemm.hopper.gpu.power import sustained_ceiling
    s = sustained_ceiling(warps_per_sm=8, rounds=256, seconds=0.4, settle_s=0.1)
    assert s.tflops() > 1 and not s.flushed
