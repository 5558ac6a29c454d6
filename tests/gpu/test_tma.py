"""Kernel 5.0 (TMA loads) on the GPU: right on random inputs at 4096^3 and at the shapes its tile allows,
in every configuration, on any stream; its tensor maps the same bytes from either binding; a prepared
launch as cheap as the others; a clear error on a bad shape and on a GPU older than Hopper."""
import numpy as np
import pytest

from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.errors import OperandError, UnsupportedOnGPUError
from tcgemm.engine.tma import gemm_maps

pytestmark = pytest.mark.gpu

K50 = GEMM_KERNELS["k5.0"]


@pytest.fixture
def hopper():
    from tcgemm.engine.gpu.compile import current_arch
    if reason := K50.unsupported(current_arch()):
        pytest.skip(reason)


def test_older_gpus_get_a_clear_error():
    from tcgemm.engine.gpu.bench import random_operands
    from tcgemm.engine.gpu.compile import current_arch
    from tcgemm.engine.gpu.gemm import run_kernel
    if K50.unsupported(current_arch()) is None:
        pytest.skip("this GPU runs Kernel 5.0")
    with pytest.raises(UnsupportedOnGPUError, match=f"needs sm_90.*{current_arch()}"):
        run_kernel("k5.0", *random_operands(128, 256, 64))
    from tcgemm.engine.gpu.bench import why_not           # `python -m tcgemm bench` skips it, saying why
    assert "needs sm_90" in why_not(K50, 4096, 4096, 4096)


@pytest.mark.parametrize("M, N, K", [(4096, 4096, 4096), (128, 256, 64), (384, 1280, 448), (1152, 512, 8192)])
def test_matches_reference(hopper, M, N, K):
    from tcgemm.engine.gpu.bench import check_runner, runner
    check = check_runner(runner("k5.0"), M, N, K)
    assert check.passed, f"k5.0 at {M}x{N}x{K}: {check}"


def test_stages_released_by_a_block_barrier_match_reference(hopper):
    """BLOCK_SYNC=1 (4.4's __syncthreads per K tile instead of the empty mbarriers), in every configuration."""
    from tcgemm.engine.gpu.bench import check_runner, runner
    for tile_k, stages in K50.configs + ((64, 2),):
        spec = K50.with_config(tile_k, stages).with_switches("BLOCK_SYNC")
        for M, N, K in [(128, 256, tile_k), (384, 512, 17 * tile_k)]:
            check = check_runner(runner("k5.0", spec), M, N, K)
            assert check.passed, f"{spec.variant} at {M}x{N}x{K}: {check}"


@pytest.mark.parametrize("M, N, K, message", [
    (100, 256, 64, "M to be a multiple of 128"),
    (128, 200, 64, "N to be a multiple of 256"),
    (128, 256, 40, "K to be a multiple of 64"),
])
def test_bad_shapes_are_named(hopper, M, N, K, message):
    from tcgemm.engine.gpu.bench import random_operands
    from tcgemm.engine.gpu.gemm import run_kernel
    with pytest.raises(OperandError, match=message):
        run_kernel("k5.0", *random_operands(M, N, K))


def test_runs_on_the_current_stream(hopper):
    """Prepared on the legacy stream, kept busy so that its NaN fill of C comes late; launched on a
    non-blocking stream, which must wait for that fill (PreparedGemm's set-up event)."""
    import cupy
    from tcgemm.engine.gpu.bench import random_operands, reference
    from tcgemm.engine.gpu.gemm import for_this_gpu, prepare
    from tests.gpu.test_launch import keep_busy
    A, B = random_operands(256, 512, 1024)
    prepare(for_this_gpu(K50), A, B)()          # compiled and loaded before the race
    keep_busy(cupy.cuda.Stream.null)
    run = prepare(for_this_gpu(K50), A, B)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        run()
    stream.synchronize()
    assert float(cupy.abs(run.C - reference(A, B)).max()) < 1e-2


def test_both_bindings_encode_the_same_map(hopper):
    from tcgemm.engine.gpu import tma
    from tcgemm.engine.gpu.bench import random_operands
    from tcgemm.engine.gpu.gemm import for_this_gpu
    if tma.binding() != "cuda.bindings":
        pytest.skip("cuda-python (cuda.bindings) is not installed: only the ctypes path to check")
    A, _ = random_operands(512, 256, 1024)
    tile_map = gemm_maps(for_this_gpu(K50), 512, 256, 1024)[0]
    assert np.array_equal(tma.encode(tile_map, A.data.ptr), tma.encode(tile_map, A.data.ptr, via="ctypes"))


def test_the_driver_refuses_what_the_checks_let_through(hopper):
    """A map the documented limits allow but a broken request (here: the ctypes path with an interleave
    that needs rank 3) comes back as an OperandError naming cuTensorMapEncodeTiled, not a crash."""
    from tcgemm.engine.gpu import tma
    from tcgemm.engine.gpu.bench import random_operands
    A, _ = random_operands(128, 256, 64)
    with pytest.raises(OperandError, match="cuTensorMapEncodeTiled refused the map"):
        tma._encode_ctypes((6, 2, A.data.ptr, (64, 128), (128,), (64, 128), (1, 1), 1, 3, 3, 0))


def test_a_prepared_launch_costs_little_host_time(hopper):
    from tcgemm.engine.gpu.bench import random_operands
    from tcgemm.engine.gpu.gemm import for_this_gpu, prepare
    from tests.gpu.test_launch import PREPARED_US, host_us_per_call
    spec = for_this_gpu(K50)
    us = host_us_per_call(prepare(spec, *random_operands(spec.tile_m, spec.tile_n, spec.tile_k)))
    assert us < PREPARED_US, f"a prepared Kernel 5.0 launch takes {us:.1f} us of host time"
