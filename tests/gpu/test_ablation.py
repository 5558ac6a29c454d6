"""The ablation kernel (kernels/a1_ablation.cu) on the GPU: every switch, and FRESH_ACC, correct in every
configuration a launcher may pick, on shapes of one tile of K (fewer than the stages), many tiles,
and ragged tile counts; and the runner's measurements."""
import pytest

from tcgemm.engine.catalog import ABLATION_SWITCHES, GEMM_KERNELS

pytestmark = pytest.mark.gpu

SWITCHES = [name for name, _ in ABLATION_SWITCHES]


@pytest.mark.parametrize("tile_k, stages", GEMM_KERNELS["a1"].configs)
@pytest.mark.parametrize("switch", SWITCHES)
def test_every_variant_matches_reference(switch, tile_k, stages):
    from tcgemm.engine.gpu.bench import check_runner, runner
    from tcgemm.engine.gpu.device import device_info
    spec = GEMM_KERNELS["a1"].with_config(tile_k, stages).with_switches(switch)
    if spec.smem_bytes > device_info().shared_mem_per_block_optin:
        pytest.skip(f"{spec.variant} needs {spec.smem_bytes} bytes of shared memory")
    tm, tn, tk = spec.tile_m, spec.tile_n, spec.tile_k
    for M, N, K in [(tm, tn, tk), (3 * tm, 2 * tn, 17 * tk), (5 * tm, 3 * tn, 4096 - tk)]:
        for _ in range(2):      # fresh inputs each time
            check = check_runner(runner("a1", spec), M, N, K)
            assert check.passed, f"a1 ({spec.variant}) at {M}x{N}x{K}: {check}"


def test_measure_checks_and_times_each_variant():
    from tcgemm.pipelines.gpu.ablation import measure
    from tcgemm.pipelines.ablation import ablation_table
    ms = measure(256, 512, 1024, switches=("NO_XOR", "NO_VEC_STORE"), reps=3, warmup=1)
    assert [m.switch for m in ms] == [None, "NO_XOR", "NO_VEC_STORE"]
    assert all(m.passed and m.check.startswith("PASS") and m.timing.runs == 3 for m in ms)
    assert ablation_table(ms).column("Switch")[0] == ""


def test_fresh_acc_removes_the_bias_of_accumulating_inside_the_mma():
    """U[0,1) inputs: every partial sum grows, and Kernel 4.4's sums inside the mma come out low on average
    (the numerics chapter's bias); with FRESH_ACC the signed mean error is at least ten times smaller."""
    import cupy
    import numpy as np
    from tcgemm.engine.gpu.gemm import for_this_gpu, prepare
    rng = cupy.random.default_rng(7)
    M, N, K = 256, 256, 8192
    A = rng.random((M, K), dtype=np.float32).astype(np.float16)
    B = rng.random((N, K), dtype=np.float32).astype(np.float16).T
    ref = A.astype(np.float64) @ B.astype(np.float64)
    base = for_this_gpu(GEMM_KERNELS["a1"])
    mean = {}
    for switches in ((), ("FRESH_ACC",)):
        run = prepare(base.with_switches(*switches), A, B)
        run()
        mean[switches] = float(((run.C - ref) / ref).mean())
    assert mean[()] < 0 and abs(mean[("FRESH_ACC",)]) < abs(mean[()]) / 10, mean
