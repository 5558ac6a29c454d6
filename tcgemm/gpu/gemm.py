"""Launch wrappers of the book's GEMM kernels: check the operands, then launch."""
from __future__ import annotations

import numpy as np

from ..catalog import GEMM_KERNELS, GemmKernel
from ..errors import OperandError
from ..validate import check_gemm_operands
from .compile import get_function
from .device import require_gpu


def kernel_spec(key: str) -> GemmKernel:
    try:
        return GEMM_KERNELS[key]
    except KeyError:
        raise KeyError(f"unknown kernel {key!r}; the kernels are: {', '.join(GEMM_KERNELS)}") from None


def _require_device_array(cupy, name, x):
    if not isinstance(x, cupy.ndarray):
        where = "a numpy array in host memory" if isinstance(x, np.ndarray) else type(x).__name__
        raise OperandError(f"{name} is {where}; the kernels read GPU memory: pass cupy.asarray({name})")
    if x.device.id != cupy.cuda.Device().id:
        raise OperandError(f"{name} lives on GPU {x.device.id}, but the current device is {cupy.cuda.Device().id}")


def gemm(key: str, A, B):
    """C = A @ B with the kernel `key` of tcgemm.catalog. A: (M, K) row-major fp16; B: (K, N) column-major fp16.

    C is allocated filled with NaN, so an element the kernel fails to write cannot pass a check.
    """
    spec = kernel_spec(key)
    cupy = require_gpu()
    _require_device_array(cupy, "A", A)
    _require_device_array(cupy, "B", B)
    M, N, K = check_gemm_operands(spec, A, B)
    C = cupy.full((M, N), np.nan, dtype=spec.out_dtype)
    launch(spec, A, B, C)
    return C


def launch(spec: GemmKernel, A, B, C) -> None:
    """Launch without checks on operands already validated (the bench loop calls this)."""
    M, K = A.shape
    N = B.shape[1]
    fn = get_function(spec.source, spec.entry)
    fn(spec.grid(M, N), spec.block, (A, B, C, np.int32(M), np.int32(N), np.int32(K)))
