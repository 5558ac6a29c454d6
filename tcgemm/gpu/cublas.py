"""The cuBLAS baselines: cublasGemmEx with fp16 inputs, fp32 output and CUBLAS_COMPUTE_32F (against
the Tensor Core kernels), and cublasSgemm with TF32 off (against the CUDA-core SGEMM kernels).

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


def gemm_ex(A, B, C) -> None:
    """C (fp32, row-major M x N) = A (fp16 row-major M x K) @ B (fp16 column-major K x N)."""
    cupy = require_gpu()
    from cupy_backends.cuda.libs import cublas
    from cupy_backends.cuda.api import runtime

    M, K = A.shape
    N = B.shape[1]
    if not (A.flags.c_contiguous and B.flags.f_contiguous and C.flags.c_contiguous):
        raise ValueError("cuBLAS baseline expects A row-major, B column-major, C row-major")
    if A.dtype != np.float16 or B.dtype != np.float16 or C.dtype != np.float32:
        raise ValueError("cuBLAS baseline expects fp16 A and B and an fp32 C")
    handle = _handle(cupy, cublas)
    cublas.gemmEx(
        handle, cublas.CUBLAS_OP_T, cublas.CUBLAS_OP_N, N, M, K,
        _ONE.ctypes.data, B.data.ptr, runtime.CUDA_R_16F, K,
        A.data.ptr, runtime.CUDA_R_16F, K,
        _ZERO.ctypes.data, C.data.ptr, runtime.CUDA_R_32F, N,
        cublas.CUBLAS_COMPUTE_32F, cublas.CUBLAS_GEMM_DEFAULT,
    )


def sgemm(A, B, C) -> None:
    """C (fp32 row-major M x N) = A (fp32 column-major M x K) @ B (fp32 row-major K x N), FFMA only.

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
    handle = _handle(cupy, cublas)
    cublas.sgemm(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_T, N, M, K,
                 _ONE.ctypes.data, B.data.ptr, N, A.data.ptr, M, _ZERO.ctypes.data, C.data.ptr, N)

