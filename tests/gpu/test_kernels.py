"""Every GEMM kernel on fresh random inputs over several shapes, and every bad-input error."""
import numpy as np
import pytest

from tcgemm.catalog import GEMM_KERNELS
from tcgemm.errors import KernelCompileError, OperandError

pytestmark = pytest.mark.gpu


def shapes(spec):
    tm, tn, tk = spec.tile_m, spec.tile_n, spec.tile_k
    return [(tm, tn, tk), (2 * tm, 3 * tn, 5 * tk), (384, 256, 1024), (256, 512, 96), (1024, 1024, 4096)]


@pytest.mark.parametrize("key", list(GEMM_KERNELS))
def test_kernel_matches_reference(key):
    from tcgemm.gpu.bench import check_runner, runner
    spec = GEMM_KERNELS[key]
    for M, N, K in shapes(spec):
        for seed in (None, None):  # fresh inputs each time
            check = check_runner(runner(key), M, N, K, seed)
            assert check.passed, f"{key} at {M}x{N}x{K}: {check}"


def test_cublas_baseline_matches_reference():
    from tcgemm.gpu.bench import check_runner, runner
    for M, N, K in [(128, 256, 64), (1024, 512, 2048)]:
        check = check_runner(runner("cublas"), M, N, K)
        assert check.passed, str(check)


def test_every_output_element_is_written():
    import cupy
    from tcgemm.gpu.bench import random_operands
    from tcgemm.gpu.gemm import gemm
    A, B = random_operands(64, 64, 32)
    C = gemm("k1.1", A, B)
    assert C.dtype == np.float32 and bool(cupy.isfinite(C).all())


@pytest.fixture
def good():
    from tcgemm.gpu.bench import random_operands
    return random_operands(64, 64, 32)


@pytest.mark.parametrize("key", list(GEMM_KERNELS))
def test_bad_inputs_are_named(key, good):
    import cupy
    from tcgemm.gpu.gemm import gemm
    A, B = good
    cases = [
        ((cupy.asnumpy(A), B), "host"),
        ((A.astype(np.float32), B), "dtype float32"),
        ((A, cupy.ascontiguousarray(B)), "B is row-major"),
        ((cupy.asfortranarray(A), B), "A is column-major"),
        ((A[:, :16], B), "non-contiguous|inner dimensions"),
        ((A, B[:16]), "non-contiguous|inner dimensions"),
    ]
    spec = GEMM_KERNELS[key]
    M = spec.tile_m * 2 + (8 if spec.tile_m > 8 else 1)
    from tcgemm.gpu.bench import random_operands
    cases.append((random_operands(M, 64, 32), f"multiple of {spec.tile_m}"))
    for (a, b), pattern in cases:
        with pytest.raises(OperandError, match=pattern):
            gemm(key, a, b)


def test_unknown_kernel(good):
    from tcgemm.gpu.gemm import gemm
    with pytest.raises(KeyError, match="k1.0"):
        gemm("nope", *good)


def test_compile_error_shows_the_nvrtc_log():
    import cupy
    from tcgemm.gpu.compile import _compile
    arch = f"sm_{cupy.cuda.Device().compute_capability}"
    with pytest.raises(KernelCompileError, match="broken.cu(.|\n)*undefined_name"):
        _compile("broken.cu", 'extern "C" __global__ void k() { undefined_name = 1; }', "test", arch)


def test_bench_times_and_checks():
    from tcgemm.gpu.bench import CUBLAS, bench
    results = bench(["k1.1", "hgemm"], 512, 512, 512, reps=5, warmup=2, log=None)
    assert [r.name for r in results] == [CUBLAS, GEMM_KERNELS["k1.1"].title, GEMM_KERNELS["hgemm"].title]
    assert all(r.passed and r.timing.median > 0 for r in results)
