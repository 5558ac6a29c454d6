"""Check a kernel's operands before launch. Pure module: works on any array with numpy's attributes.

Every failure raises OperandError with a message that names the operand, what is wrong, and what
the kernel accepts, so that a bad call never turns into a silent wrong answer.
"""
from __future__ import annotations

import numpy as np

from tcgemm.catalog import GemmKernel
from tcgemm.errors import OperandError

INT32_MAX = 2**31 - 1


def _describe_layout(x) -> str:
    flags = x.flags
    if flags.c_contiguous and flags.f_contiguous:
        return "both row- and column-major"
    if flags.c_contiguous:
        return "row-major (C-contiguous)"
    if flags.f_contiguous:
        return "column-major (Fortran-contiguous)"
    return f"non-contiguous (strides {x.strides})"


def _check_array(name: str, x, want_order: str, want_dtype: str = "float16", title: str = "the kernel") -> None:
    for attr in ("dtype", "shape", "flags", "strides"):
        if not hasattr(x, attr):
            raise OperandError(f"{name} must be a 2-D cupy.ndarray, got {type(x).__name__}")
    if x.dtype != np.dtype(want_dtype):
        raise OperandError(
            f"{name} has dtype {x.dtype}; {title} takes {want_dtype} inputs "
            f"(convert with {name}.astype('{want_dtype}'))"
        )
    if len(x.shape) != 2:
        raise OperandError(f"{name} must be a 2-D matrix, got {len(x.shape)} dimensions with shape {tuple(x.shape)}")
    along = "contiguous along K" if (name == "A") == (want_order == "C") else \
        "each K slice of it contiguous, as the kernel copies it"
    if want_order == "C" and not x.flags.c_contiguous:
        raise OperandError(
            f"{name} is {_describe_layout(x)}; {title} needs it row-major (C-contiguous, {along}): "
            f"pass cupy.ascontiguousarray({name})"
        )
    if want_order == "F" and not x.flags.f_contiguous:
        other = "Bt.T for a row-major (N, K) Bt" if name == "B" else "At.T for a row-major (K, M) At"
        raise OperandError(
            f"{name} is {_describe_layout(x)}; {title} needs it column-major (Fortran-contiguous, {along}): "
            f"pass cupy.asfortranarray({name}), or {other}"
        )


def check_gemm_operands(kernel: GemmKernel, A, B) -> tuple[int, int, int]:
    """Validate C = A @ B for `kernel` and return (M, N, K)."""
    _check_array("A", A, kernel.a_order, kernel.in_dtype, kernel.title)
    _check_array("B", B, kernel.b_order, kernel.in_dtype, kernel.title)
    M, K = (int(s) for s in A.shape)
    Kb, N = (int(s) for s in B.shape)
    if K != Kb:
        raise OperandError(f"inner dimensions differ: A is {M}x{K} but B is {Kb}x{N}; A.shape[1] must equal B.shape[0]")
    return check_gemm_shape(kernel, M, N, K)


def check_gemm_shape(kernel: GemmKernel, M: int, N: int, K: int) -> tuple[int, int, int]:
    """Check that `kernel` accepts an M x N x K problem (tile multiples, 32-bit indices); return it."""
    for name, size in (("M", M), ("N", N), ("K", K)):
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
            raise OperandError(f"{name} must be an integer, got {size!r}")
    M, N, K = int(M), int(N), int(K)
    for name, size, tile in (("M", M, kernel.tile_m), ("N", N, kernel.tile_n), ("K", K, kernel.tile_k)):
        if size <= 0:
            raise OperandError(f"{name} must be positive, got {size}")
        if size % tile and not kernel.any_shape:
            raise OperandError(
                f"{kernel.title} needs {name} to be a multiple of {tile} (its tile), got {name}={size}; "
                f"pad to {-(-size // tile) * tile} or use a kernel that handles any shape"
            )
    for name, size in (("M*K", M * K), ("K*N", K * N), ("M*N", M * N)):
        if size > INT32_MAX:
            raise OperandError(f"{name}={size} overflows the kernels' 32-bit indices (at most {INT32_MAX})")
    return M, N, K
