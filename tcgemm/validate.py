"""Check a kernel's operands before launch. Pure module: works on any array with numpy's attributes.

Every failure raises OperandError with a message that names the operand, what is wrong, and what
the kernel accepts, so that a bad call never turns into a silent wrong answer.
"""
from __future__ import annotations

import numpy as np

from tcgemm.catalog import GemmKernel
from tcgemm.errors import OperandError

INT32_MAX = 2**31 - 1


def describe_layout(x) -> str:
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
            f"{name} is {describe_layout(x)}; {title} needs it row-major (C-contiguous, {along}): "
            f"pass cupy.ascontiguousarray({name})"
        )
    if want_order == "F" and not x.flags.f_contiguous:
        other = "Bt.T for a row-major (N, K) Bt" if name == "B" else "At.T for a row-major (K, M) At"
        raise OperandError(
            f"{name} is {describe_layout(x)}; {title} needs it column-major (Fortran-contiguous, {along}): "
            f"pass cupy.asfortranarray({name}), or {other}"
        )


def check_device(name: str, x, device: int) -> None:
    """x lives in the memory of GPU `device` (a cupy.ndarray there)."""
    where = getattr(getattr(x, "device", None), "id", None)
    if where is None:
        what = "a numpy array in host memory" if isinstance(x, np.ndarray) else f"a {type(x).__name__}"
        raise OperandError(f"{name} is {what}; the kernels read GPU memory: pass cupy.asarray({name})")
    if where != device:
        raise OperandError(f"{name} lives on GPU {where}, but the current device is GPU {device}: "
                           f"copy it with cupy.asarray({name}) under `with cupy.cuda.Device({device}):`")


def _address(x) -> int:
    """Where x's first element lives: x.data.ptr of a cupy.ndarray, numpy's array interface else."""
    ptr = getattr(getattr(x, "data", None), "ptr", None)
    return int(ptr) if ptr is not None else int(x.__array_interface__["data"][0])


def _check_output(kernel: GemmKernel, C, M: int, N: int, A, B) -> None:
    """C is a row-major (M, N) array of the kernel's output dtype, in memory of its own."""
    for attr in ("dtype", "shape", "flags", "strides", "nbytes"):
        if not hasattr(C, attr):
            raise OperandError(f"C must be a 2-D cupy.ndarray, got {type(C).__name__}")
    if tuple(C.shape) != (M, N):
        raise OperandError(f"C has shape {tuple(C.shape)}; A @ B is {M}x{N}, so C must have shape ({M}, {N})")
    if C.dtype != np.dtype(kernel.out_dtype):
        raise OperandError(f"C has dtype {C.dtype}; {kernel.title} writes {kernel.out_dtype}: allocate C with "
                           f"cupy.empty(({M}, {N}), dtype='{kernel.out_dtype}')")
    if not C.flags.c_contiguous:
        raise OperandError(f"C is {describe_layout(C)}; {kernel.title} writes it row-major (C-contiguous): "
                           f"allocate C with cupy.empty(({M}, {N}), dtype='{kernel.out_dtype}')")
    c_start = _address(C)
    for name, x in (("A", A), ("B", B)):
        start = _address(x)
        if c_start < start + x.nbytes and start < c_start + C.nbytes:
            raise OperandError(f"C overlaps {name} in memory; the kernel would overwrite its own input: "
                               "give C memory of its own")


def check_gemm_operands(kernel: GemmKernel, A, B, C=None, device: int | None = None) -> tuple[int, int, int]:
    """Validate C = A @ B for `kernel` and return (M, N, K). C, if given, is the output to write;
    `device`, if given, is the current GPU, where A, B (and C) must live."""
    if device is not None:
        for name, x in (("A", A), ("B", B)) + ((("C", C),) if C is not None else ()):
            check_device(name, x, device)
    _check_array("A", A, kernel.a_order, kernel.in_dtype, kernel.title)
    _check_array("B", B, kernel.b_order, kernel.in_dtype, kernel.title)
    M, K = (int(s) for s in A.shape)
    Kb, N = (int(s) for s in B.shape)
    if K != Kb:
        raise OperandError(f"inner dimensions differ: A is {M}x{K} but B is {Kb}x{N}; A.shape[1] must equal B.shape[0]")
    check_gemm_shape(kernel, M, N, K)
    if C is not None:
        _check_output(kernel, C, M, N, A, B)
    return M, N, K


GRID_LIMITS = (2**31 - 1, 65535, 65535)   # CUDA's largest grid, blocks along x, y and z


def _round_up(size: int, multiple: int) -> int:
    return -(-size // multiple) * multiple


def check_gemm_shape(kernel: GemmKernel, M: int, N: int, K: int) -> tuple[int, int, int]:
    """Check that `kernel` accepts an M x N x K problem (tile multiples, 32-bit indices, grid size);
    return it."""
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
                f"pad to {_round_up(size, tile)} or use a kernel that handles any shape"
            )
    # The kernels index A, B and C with 32-bit int, up to the edge of the last tile (and K padded).
    Mp, Np, Kp = _round_up(M, kernel.tile_m), _round_up(N, kernel.tile_n), _round_up(K, kernel.tile_k)
    splits = getattr(kernel, "splits", 1)    # a split-K launch writes splits partial C, one after another
    products = (("M*K", M * K, Mp * Kp), ("K*N", K * N, Kp * Np), ("M*N", M * N, Mp * Np)) + \
        ((("splits*M*N", splits * M * N, splits * Mp * Np),) if splits > 1 else ())
    for name, size, padded in products:
        if padded > INT32_MAX:
            tiles = f" ({padded} with M, N, K rounded up to whole tiles)" if padded != size else ""
            raise OperandError(
                f"{name}={size}{tiles} overflows the kernels' 32-bit int indices: M*K, K*N and M*N must "
                f"stay below 2**31 = {INT32_MAX + 1}; split the product into smaller GEMMs"
            )
    for axis, blocks, limit in zip("xyz", kernel.grid(M, N), GRID_LIMITS):
        if blocks > limit:
            raise OperandError(f"{kernel.title} would launch {blocks} blocks along grid {axis} for M={M}, "
                               f"N={N}; CUDA allows at most {limit}: split the product into smaller GEMMs")
    return M, N, K
