"""The CUDA-core SGEMM side: the cuBLAS SGEMM baseline really runs in fp32, the FFMA ceiling is
exact, and the SGEMM kernels refuse the Tensor Core kernels' operands with a clear error."""
import numpy as np
import pytest

from tcgemm.errors import OperandError
from tcgemm.hw import peak_for

pytestmark = pytest.mark.gpu


def test_cublas_sgemm_is_fp32_not_tf32():
    """TF32 keeps 10 mantissa bits: its relative error at K=4096 would be ~1e-3, fp32's is ~1e-6."""
    from tcgemm.engine.gpu.bench import check_runner, runner
    check = check_runner(runner("cublas-sgemm"), 512, 768, 4096)
    assert check.passed and check.rel_fro < 1e-5, check


@pytest.mark.parametrize("key", ["s1", "s2", "s3"])
def test_sgemm_kernels_refuse_tensor_core_operands(key):
    from tcgemm.engine.gpu.bench import random_operands
    from tcgemm.engine.gpu.gemm import run_kernel
    A16, B16 = random_operands(128, 128, 64)                    # fp16, A row-major, B column-major
    with pytest.raises(OperandError, match="takes float32"):
        run_kernel(key, A16, B16)
    with pytest.raises(OperandError, match="A is row-major.*column-major"):
        run_kernel(key, A16.astype(np.float32), B16.astype(np.float32))


def test_sgemm_result_equals_float64_product_to_fp32_rounding():
    import cupy
    from tcgemm.engine.gpu.bench import random_operands
    from tcgemm.engine.gpu.gemm import run_kernel
    A, B = random_operands(256, 384, 1024, dtype="float32")
    exact = cupy.asnumpy(A).astype(np.float64) @ cupy.asnumpy(B).astype(np.float64)
    for key in ("s1", "s2", "s3"):
        err = np.abs(cupy.asnumpy(run_kernel(key, A, B)) - exact).max() / np.abs(exact).max()
        assert err < 1e-5, (key, err)


def test_ffma_ceiling_is_exact_and_below_the_datasheet():
    from tcgemm.engine.gpu.device import device_info
    from tcgemm.engine.gpu.ffma_ceiling import measure
    best = measure(blocks_per_sm=(2, 8), trips=256)
    assert best.exact and best.tflops > 0
    peak = peak_for(device_info().name)
    if peak and peak.fp32:
        assert best.tflops < 1.05 * peak.fp32
