"""The cuBLAS baselines: cublasGemmEx with fp16 inputs, fp32 output and CUBLAS_COMPUTE_32F (against
the Tensor Core kernels) or int8 inputs, int32 output and CUBLAS_COMPUTE_32I (against the WMMA IMMA
kernel), and cublasSgemm with TF32 off (against the CUDA-core SGEMM kernels).

cuBLAS is column-major. Our C = A @ B, with A row-major (M, K), B column-major (K, N) and C row-major
(M, N), is the column-major product C^T = B^T A^T: cuBLAS's first operand is our B buffer read
transposed (N x K, leading dimension K), its second is our A buffer as a column-major K x M matrix
(leading dimension K), and its output is our C buffer as a column-major N x M matrix (leading dimension N).
"""
from __future__ import annotations

import numpy as np

from tcgemm.gpu.device import require_gpu

_ONE = np.ones(1, dtype=np.float32)
_ZERO = np.zeros(1, dtype=np.float32)


def _handle(cupy, cublas):
    """CuPy's cuBLAS handle on the current stream, host scalars, default math (no TF32)."""
    handle = cupy.cuda.device.get_cublas_handle()
    cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
    cublas.setMathMode(handle, cublas.CUBLAS_DEFAULT_MATH)
    cublas.setStream(handle, cupy.cuda.get_current_stream().ptr)
    return handle


CUDA_R_32I = 10   # cudaDataType_t of int32 (library_types.h); CuPy's runtime module does not export it
# in dtype -> (cuBLAS type of A and B, of C, compute type name, alpha = 1 and beta = 0 in the scale type)
_GEMM_EX = {
    "float16": ("CUDA_R_16F", "CUDA_R_32F", "CUBLAS_COMPUTE_32F", np.float32),
    "int8": ("CUDA_R_8I", CUDA_R_32I, "CUBLAS_COMPUTE_32I", np.int32),
}
_OUT_DTYPE = {"float16": np.float32, "int8": np.int32}


def gemm_ex(A, B, C) -> None:
    """C = A @ B by cublasGemmEx, once: prepare_gemm_ex(A, B, C)()."""
    prepare_gemm_ex(A, B, C)()


def prepare_gemm_ex(A, B, C):
    """C = A @ B by cublasGemmEx, checked once, as a callable that only sets the handle up and calls
    cuBLAS: A row-major M x K, B column-major K x N, C row-major M x N; fp16 A and B with an fp32 C
    (CUBLAS_COMPUTE_32F), or int8 A and B with an int32 C (CUBLAS_COMPUTE_32I, exact). The int8 path
    wants 4-byte aligned operands and leading dimensions that are multiples of 4, so K and N must be
    multiples of 4 there."""
    cupy = require_gpu()
    from cupy_backends.cuda.libs import cublas
    from cupy_backends.cuda.api import runtime

    M, K = A.shape
    N = B.shape[1]
    if not (A.flags.c_contiguous and B.flags.f_contiguous and C.flags.c_contiguous):
        raise ValueError("cuBLAS baseline expects A row-major, B column-major, C row-major")
    kind = A.dtype.name
    if kind not in _GEMM_EX or B.dtype != A.dtype or C.dtype != _OUT_DTYPE[kind]:
        raise ValueError("cuBLAS baseline expects fp16 A and B and an fp32 C, or int8 A and B and an int32 C")
    if kind == "int8" and (K % 4 or N % 4 or any(x.data.ptr % 4 for x in (A, B, C))):
        raise ValueError(f"cuBLAS int8 GEMM needs K and N multiples of 4 and 4-byte aligned arrays, got K={K}, N={N}")
    in_type, out_type, compute, scale = _GEMM_EX[kind]
    in_type = getattr(runtime, in_type)
    out_type = getattr(runtime, out_type) if isinstance(out_type, str) else out_type
    one, zero = np.ones(1, dtype=scale), np.zeros(1, dtype=scale)
    args = (cublas.CUBLAS_OP_T, cublas.CUBLAS_OP_N, N, M, K, one.ctypes.data, B.data.ptr, in_type, K,
            A.data.ptr, in_type, K, zero.ctypes.data, C.data.ptr, out_type, N,
            getattr(cublas, compute), cublas.CUBLAS_GEMM_DEFAULT)
    keep = (A, B, C, one, zero)     # alive as long as the callable

    def run() -> None:
        cublas.gemmEx(_handle(cupy, cublas), *args)
    run.operands = keep
    return run


def sgemm(A, B, C) -> None:
    """C = A @ B by cublasSgemm, once: prepare_sgemm(A, B, C)()."""
    prepare_sgemm(A, B, C)()


def prepare_sgemm(A, B, C):
    """C (fp32 row-major M x N) = A (fp32 column-major M x K) @ B (fp32 row-major K x N), FFMA only,
    checked once, as a callable.

    Column-major, our C is C^T (N x M, leading dimension N) = B^T A^T: B's buffer is B^T as a
    column-major N x K matrix (leading dimension N), A's buffer is A (M x K, leading dimension M),
    read transposed. The handle's math mode is set to CUBLAS_DEFAULT_MATH so TF32 stays off."""
    cupy = require_gpu()
    from cupy_backends.cuda.libs import cublas

    M, K = A.shape
    N = B.shape[1]
    if not (A.flags.f_contiguous and B.flags.c_contiguous and C.flags.c_contiguous):
        raise ValueError("cuBLAS SGEMM baseline expects A column-major, B row-major, C row-major")
    if A.dtype != np.float32 or B.dtype != np.float32 or C.dtype != np.float32:
        raise ValueError("cuBLAS SGEMM baseline expects fp32 A, B and C")
    args = (cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_T, N, M, K,
            _ONE.ctypes.data, B.data.ptr, N, A.data.ptr, M, _ZERO.ctypes.data, C.data.ptr, N)

    def run() -> None:
        cublas.sgemm(_handle(cupy, cublas), *args)
    run.operands = (A, B, C)
    return run
