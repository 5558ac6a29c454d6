"""The cuBLAS baselines: cublasGemmEx with fp16 inputs, fp32 output and CUBLAS_COMPUTE_32F (against
the Tensor Core kernels) or int8 inputs, int32 output and CUBLAS_COMPUTE_32I (against the WMMA IMMA
kernel), and cublasSgemm with TF32 off (against the CUDA-core SGEMM kernels). Against Kernel D1's other
input types: cublasGemmEx with bf16 inputs (CUBLAS_COMPUTE_32F), with fp32 inputs on tf32 Tensor Cores
(CUBLAS_COMPUTE_32F_FAST_TF32), and, since cublasGemmEx has no fp8, cublasLtMatmul with e4m3 inputs
(`prepare_lt_fp8`; cuBLASLt has no e5m2 x e5m2 product).

cuBLAS is column-major. Our C = A @ B, with A row-major (M, K), B column-major (K, N) and C row-major
(M, N), is the column-major product C^T = B^T A^T: cuBLAS's first operand is our B buffer read
transposed (N x K, leading dimension K), its second is our A buffer as a column-major K x M matrix
(leading dimension K), and its output is our C buffer as a column-major N x M matrix (leading dimension N).
"""
from __future__ import annotations

import ctypes
import weakref
from functools import lru_cache

import numpy as np

from tcgemm.engine.catalog import ELEMENTS
from tcgemm.engine.kernel_types import storage_dtype
from tcgemm.engine.gpu.device import require_gpu

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
# input type (tcgemm.engine.catalog.ELEMENTS) -> (cuBLAS type of A and B, of C, compute type name, alpha = 1 and
# beta = 0 in the scale type)
_GEMM_EX = {
    "fp16": ("CUDA_R_16F", "CUDA_R_32F", "CUBLAS_COMPUTE_32F", np.float32),
    "bf16": ("CUDA_R_16BF", "CUDA_R_32F", "CUBLAS_COMPUTE_32F", np.float32),
    "tf32": ("CUDA_R_32F", "CUDA_R_32F", "CUBLAS_COMPUTE_32F_FAST_TF32", np.float32),
    "int8": ("CUDA_R_8I", CUDA_R_32I, "CUBLAS_COMPUTE_32I", np.int32),
}
_BY_DTYPE = {"float16": "fp16", "int8": "int8"}     # the input type of A's dtype where no element is named


def gemm_ex(A, B, C, element: str | None = None) -> None:
    """C = A @ B by cublasGemmEx, once: prepare_gemm_ex(A, B, C, element)()."""
    prepare_gemm_ex(A, B, C, element)()


def _check_arrays(A, B, C, element: str, what: str, out_dtype: str | None = None):
    """(M, N, K) of A row-major M x K, B column-major K x N, C row-major M x N in element's dtypes (C in
    `out_dtype`'s where given)."""
    e = ELEMENTS[element]
    c_dtype = e.out_dtype if out_dtype is None else storage_dtype(out_dtype)
    if not (A.flags.c_contiguous and B.flags.f_contiguous and C.flags.c_contiguous):
        raise ValueError(f"{what} expects A row-major, B column-major, C row-major")
    if A.dtype != e.dtype or B.dtype != e.dtype or C.dtype != c_dtype:
        raise ValueError(f"{what} with {element} inputs expects {e.dtype} A and B and a {c_dtype} C, "
                         f"got {A.dtype}, {B.dtype} and {C.dtype}")
    return A.shape[0], B.shape[1], A.shape[1]


# The C types cublasGemmEx may write from fp16 or bf16 inputs with CUBLAS_COMPUTE_32F (as Kernel 5.9 does).
_C_TYPES = {"float32": "CUDA_R_32F", "float16": "CUDA_R_16F", "bfloat16": "CUDA_R_16BF"}


def prepare_gemm_ex(A, B, C, element: str | None = None, out_dtype: str | None = None):
    """C = A @ B by cublasGemmEx, checked once, as a callable that only sets the handle up and calls
    cuBLAS: A row-major M x K, B column-major K x N, C row-major M x N, with `element` inputs (a key of
    _GEMM_EX; None: fp16 or int8, by A's dtype): fp16 or bf16 A and B with an fp32 C (CUBLAS_COMPUTE_32F),
    fp32 ones rounded to tf32 (CUBLAS_COMPUTE_32F_FAST_TF32), or int8 A and B with an int32 C
    (CUBLAS_COMPUTE_32I, exact). The int8 path wants 4-byte aligned operands and leading dimensions that
    are multiples of 4, so K and N must be multiples of 4 there. `out_dtype` (fp16 and bf16 inputs only):
    C in float32, float16 or bfloat16 (held as uint16 bits), accumulated in fp32 and rounded once."""
    cupy = require_gpu()
    from cupy_backends.cuda.libs import cublas
    from cupy_backends.cuda.api import runtime

    kind = _BY_DTYPE.get(A.dtype.name) if element is None else element
    if kind not in _GEMM_EX:
        raise ValueError(f"cublasGemmEx baseline: no input type {kind or A.dtype.name!r}; "
                         f"it takes {', '.join(_GEMM_EX)} (fp8: prepare_lt_fp8)")
    if out_dtype is not None and (kind not in ("fp16", "bf16") or out_dtype not in _C_TYPES):
        raise ValueError(f"cuBLAS baseline: a {out_dtype} C from {kind} inputs is not offered here; fp16 and bf16 "
                         f"inputs take a C of {', '.join(_C_TYPES)}")
    M, N, K = _check_arrays(A, B, C, kind, "cuBLAS baseline", out_dtype)
    if kind == "int8" and (K % 4 or N % 4 or any(x.data.ptr % 4 for x in (A, B, C))):
        raise ValueError(f"cuBLAS int8 GEMM needs K and N multiples of 4 and 4-byte aligned arrays, got K={K}, N={N}")
    in_type, out_type, compute, scale = _GEMM_EX[kind]
    out_type = out_type if out_dtype is None else _C_TYPES[out_dtype]
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


# cuBLASLt's C API, the few calls and enum values the fp8 baseline needs (library_types.h, cublasLt.h).
CUDA_R_32F, CUDA_R_8F_E4M3 = 0, 28
CUBLAS_COMPUTE_32F, CUBLAS_OP_T = 68, 1
CUBLASLT_MATMUL_DESC_TRANSA, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 3, 1
CUBLASLT_MATMUL_DESC_FAST_ACCUM = 25       # an int8_t: 1 lets the fp8 GEMM skip its promotions to fp32
LT_WORKSPACE_BYTES = 32 * 2**20


class _HeuristicResult(ctypes.Structure):     # cublasLtMatmulHeuristicResult_t
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspace_size", ctypes.c_size_t), ("state", ctypes.c_int),
                ("waves", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


def _lt_call(lib, name: str, *args) -> None:
    status = getattr(lib, name)(*args)
    if status != 0:
        raise RuntimeError(f"cuBLASLt: {name} returned cublasStatus_t {status}")


@lru_cache(maxsize=None)
def _cublaslt(device: int):
    """libcublasLt (found as CuPy finds its CUDA libraries, by cuda.pathfinder) and a handle on `device`."""
    from cuda.pathfinder import load_nvidia_dynamic_lib

    lib = ctypes.CDLL(load_nvidia_dynamic_lib("cublasLt").abs_path)
    ptr, p_ptr, size, i64 = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_int64
    lib.cublasLtCreate.argtypes = [p_ptr]
    lib.cublasLtMatmulDescCreate.argtypes = [p_ptr, ctypes.c_int, ctypes.c_int]
    lib.cublasLtMatmulDescSetAttribute.argtypes = [ptr, ctypes.c_int, ptr, size]
    lib.cublasLtMatrixLayoutCreate.argtypes = [p_ptr, ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, i64]
    lib.cublasLtMatmulPreferenceCreate.argtypes = [p_ptr]
    lib.cublasLtMatmulPreferenceSetAttribute.argtypes = [ptr, ctypes.c_int, ptr, size]
    lib.cublasLtMatmulAlgoGetHeuristic.argtypes = [ptr] * 7 + [ctypes.c_int, ctypes.POINTER(_HeuristicResult),
                                                               ctypes.POINTER(ctypes.c_int)]
    lib.cublasLtMatmul.argtypes = [ptr] * 14 + [size, ptr]
    for name in ("cublasLtMatmulDescDestroy", "cublasLtMatrixLayoutDestroy", "cublasLtMatmulPreferenceDestroy"):
        getattr(lib, name).argtypes = [ptr]
    handle = ptr()
    _lt_call(lib, "cublasLtCreate", ctypes.byref(handle))
    return lib, handle


def prepare_lt_fp8(A, B, C, element: str = "e4m3", fast_accum: bool = False):
    """C = A @ B by cublasLtMatmul with e4m3 inputs (uint8 bit patterns, as Kernel D1 takes them) and an
    fp32 C (CUBLAS_COMPUTE_32F), with CUBLASLT_MATMUL_DESC_FAST_ACCUM set to `fast_accum` (cuBLASLt's
    default, 0, promises periodic promotion of the partial sums to higher precision; 1 lets the GEMM skip
    it, faster and less accurate), checked and planned once (cuBLASLt's heuristic, up to 32 MiB of
    workspace), as a callable that only calls cuBLASLt. Its fp8 GEMM wants both operands K-major (the
    "TN" form): in the column-major terms of the module docstring, our B buffer read transposed and our A
    buffer as it lies, exactly as cublasGemmEx is called. fp8 needs sm_89 or later, K a multiple of 16
    and 16-byte aligned operands; cuBLASLt has no e5m2 x e5m2 product."""
    cupy = require_gpu()
    if element != "e4m3":
        raise ValueError(f"cuBLASLt has no fp8 GEMM with {element} x {element} inputs (e5m2 only beside e4m3)")
    M, N, K = _check_arrays(A, B, C, element, "cuBLASLt fp8 baseline")
    if K % 16 or any(x.data.ptr % 16 for x in (A, B, C)):
        raise ValueError(f"cuBLASLt's fp8 GEMM needs K a multiple of 16 and 16-byte aligned arrays, got K={K}")
    lib, handle = _cublaslt(cupy.cuda.runtime.getDevice())
    new = lambda: ctypes.c_void_p()
    desc, a_layout, b_layout, c_layout, pref = new(), new(), new(), new(), new()
    _lt_call(lib, "cublasLtMatmulDescCreate", ctypes.byref(desc), CUBLAS_COMPUTE_32F, CUDA_R_32F)
    transa = ctypes.c_int32(CUBLAS_OP_T)
    _lt_call(lib, "cublasLtMatmulDescSetAttribute", desc, CUBLASLT_MATMUL_DESC_TRANSA, ctypes.addressof(transa),
             ctypes.sizeof(transa))
    fast = ctypes.c_int8(1 if fast_accum else 0)
    _lt_call(lib, "cublasLtMatmulDescSetAttribute", desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, ctypes.addressof(fast),
             ctypes.sizeof(fast))
    for layout, kind, rows, cols, ld in ((a_layout, CUDA_R_8F_E4M3, K, N, K), (b_layout, CUDA_R_8F_E4M3, K, M, K),
                                         (c_layout, CUDA_R_32F, N, M, N)):
        _lt_call(lib, "cublasLtMatrixLayoutCreate", ctypes.byref(layout), kind, rows, cols, ld)
    _lt_call(lib, "cublasLtMatmulPreferenceCreate", ctypes.byref(pref))
    workspace_bytes = ctypes.c_uint64(LT_WORKSPACE_BYTES)
    _lt_call(lib, "cublasLtMatmulPreferenceSetAttribute", pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
             ctypes.addressof(workspace_bytes), ctypes.sizeof(workspace_bytes))
    found, count = _HeuristicResult(), ctypes.c_int(0)
    _lt_call(lib, "cublasLtMatmulAlgoGetHeuristic", handle, desc, a_layout, b_layout, c_layout, c_layout, pref,
             1, ctypes.byref(found), ctypes.byref(count))
    if count.value < 1:
        raise RuntimeError(f"cuBLASLt offers no e4m3 GEMM for {M}x{N}x{K} on this GPU")
    workspace = cupy.empty(LT_WORKSPACE_BYTES, dtype=np.uint8)
    one, zero = np.ones(1, dtype=np.float32), np.zeros(1, dtype=np.float32)
    args = (handle, desc, one.ctypes.data, B.data.ptr, a_layout, A.data.ptr, b_layout, zero.ctypes.data,
            C.data.ptr, c_layout, C.data.ptr, c_layout, ctypes.addressof(found.algo), workspace.data.ptr,
            LT_WORKSPACE_BYTES)

    def run() -> None:
        _lt_call(lib, "cublasLtMatmul", *args, cupy.cuda.get_current_stream().ptr)
    run.operands = (A, B, C, workspace, one, zero, found)
    destroy = [("cublasLtMatmulDescDestroy", desc), ("cublasLtMatmulPreferenceDestroy", pref)] + \
        [("cublasLtMatrixLayoutDestroy", layout) for layout in (a_layout, b_layout, c_layout)]
    weakref.finalize(run, lambda: [getattr(lib, name)(x) for name, x in destroy])
    return run
