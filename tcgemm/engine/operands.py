"""Check a kernel's operands before launch. Pure module: works on any array with numpy's attributes.

Every failure raises OperandError with a message that names the operand, what is wrong, and what
the kernel accepts, so that a bad call never turns into a silent wrong answer.
"""
from __future__ import annotations

import numpy as np

from tcgemm.engine.kernel_types import ITEMSIZE, STORAGE_DTYPES, GemmKernel, WmmaKernel, storage_dtype
from tcgemm.errors import OperandError

INT32_MAX = 2**31 - 1
INT32_MIN = -2**31


def describe_layout(x) -> str:
    flags = x.flags
    if flags.c_contiguous and flags.f_contiguous:
        return "both row- and column-major"
    if flags.c_contiguous:
        return "row-major (C-contiguous)"
    if flags.f_contiguous:
        return "column-major (Fortran-contiguous)"
    return f"non-contiguous (strides {x.strides})"


def memory_order(name: str, x, prefer: str = "C", title: str = "the kernel") -> str:
    """'C' for a row-major x, 'F' for a column-major one (`prefer` where x is both, e.g. one row);
    OperandError for anything else."""
    flags = x.flags
    if flags.c_contiguous and flags.f_contiguous:
        return prefer
    if flags.c_contiguous or flags.f_contiguous:
        return "C" if flags.c_contiguous else "F"
    raise OperandError(f"{name} is {describe_layout(x)}; {title} reads A and B row-major or column-major "
                       f"(a .T view of a row-major array is column-major): pass cupy.ascontiguousarray({name})")


def leading_dimension(x, order: str) -> int:
    """Elements from one row of the stored matrix to the next: along axis 0 of a row-major x, along
    axis 1 of a column-major one (a single row or column: its length)."""
    axis = 0 if order == "C" else 1
    return x.strides[axis] // x.itemsize if x.shape[axis] > 1 else x.shape[1 - axis]


def _check_array(name: str, x, want_order: str, want_dtype: str = "float16", title: str = "the kernel",
                 element: str = "") -> None:
    for attr in ("dtype", "shape", "flags", "strides"):
        if not hasattr(x, attr):
            raise OperandError(f"{name} must be a 2-D cupy.ndarray, got {type(x).__name__}")
    if x.dtype != np.dtype(storage_dtype(want_dtype)):
        if want_dtype in STORAGE_DTYPES:
            raise OperandError(f"{name} has dtype {x.dtype}; {title} takes {want_dtype} inputs as their bit patterns, "
                               f"{storage_dtype(want_dtype)} (CuPy has no {want_dtype}: e.g. "
                               f"cupy.asarray(tcgemm.numerics.elements.encode(values, 'bf16')))")
        if element and want_dtype.startswith("uint"):
            raise OperandError(f"{name} has dtype {x.dtype}; {title} takes {element} inputs as their bit patterns, "
                               f"{want_dtype} (encode values with tcgemm.numerics.elements.encode(values, '{element}'))")
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


def _overlap(x, y) -> bool:
    x0, y0 = _address(x), _address(y)
    return x0 < y0 + y.nbytes and y0 < x0 + x.nbytes


def _check_start(kernel: GemmKernel | WmmaKernel, name: str, x) -> None:
    """x starts at a multiple of kernel.alignment bytes, where the kernel can load (and store) it."""
    if _address(x) % kernel.alignment:
        raise OperandError(f"{name} starts at an address that is not a multiple of {kernel.alignment} bytes; "
                           f"{kernel.title} {kernel.alignment_reason}: pass a copy, cupy.array({name})")


def _check_output(kernel: GemmKernel | WmmaKernel, C, M: int, N: int, A, B, name: str = "C",
                  verb: str = "writes") -> None:
    """C is an (M, N) array of the kernel's output dtype in the order it writes (row-major; column-major
    for Kernel 5.13), in memory of its own (and aligned, for a kernel that says so: kernel.aligned_c)."""
    for attr in ("dtype", "shape", "flags", "strides", "nbytes"):
        if not hasattr(C, attr):
            raise OperandError(f"{name} must be a 2-D cupy.ndarray, got {type(C).__name__}")
    if tuple(C.shape) != (M, N):
        raise OperandError(f"{name} has shape {tuple(C.shape)}; A @ B is {M}x{N}, so {name} must have shape ({M}, {N})")
    stored = storage_dtype(kernel.out_dtype)
    if C.dtype != np.dtype(stored):
        held = f" (as its bit patterns, {stored})" if stored != kernel.out_dtype else ""
        raise OperandError(f"{name} has dtype {C.dtype}; {kernel.typed_title} {verb} {kernel.out_dtype}{held}: "
                           f"allocate {name} with cupy.empty(({M}, {N}), dtype='{stored}')")
    if getattr(kernel, "c_order", "C") == "F":
        if not C.flags.f_contiguous:
            raise OperandError(f"{name} is {describe_layout(C)}; {kernel.title} {verb} it column-major (F-contiguous): "
                               f"allocate {name} with cupy.empty(({N}, {M}), dtype='{kernel.out_dtype}').T")
    elif not C.flags.c_contiguous:
        raise OperandError(f"{name} is {describe_layout(C)}; {kernel.title} {verb} it row-major (C-contiguous): "
                           f"allocate {name} with cupy.empty(({M}, {N}), dtype='{kernel.out_dtype}')")
    if kernel.aligned_c:
        _check_start(kernel, name, C)
    for other, x in (("A", A), ("B", B)):
        if verb == "writes" and _overlap(C, x):
            raise OperandError(f"{name} overlaps {other} in memory; the kernel would overwrite its own input: "
                               f"give {name} memory of its own")


def check_addend(kernel: GemmKernel | WmmaKernel, addend, out, M: int, N: int, alpha, beta, A, B) -> None:
    """alpha and beta are real numbers (integers in int32's range for a kernel that scales in int32); the
    C of alpha * A @ B + beta * C, needed where beta != 0, is a row-major (M, N) array of the output
    dtype that is either the output itself or apart from it."""
    integer = kernel.signature.scaled and np.dtype(kernel.out_dtype).kind == "i"
    for name, value in (("alpha", alpha), ("beta", beta)):
        if integer and (isinstance(value, bool) or not isinstance(value, (int, np.integer))
                        or not INT32_MIN <= value <= INT32_MAX):
            raise OperandError(f"{name}={value!r}: {kernel.title} takes integer alpha and beta in int32's range")
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise OperandError(f"{name}={value!r}: {kernel.title} takes real alpha and beta")
    if (alpha, beta) != (1, 0) and not kernel.signature.scaled:
        raise OperandError(f"{kernel.title} computes A @ B only (alpha=1, beta=0); use Kernel 4.7 (tcgemm.matmul) "
                           "for alpha * A @ B + beta * C")
    if beta != 0 and addend is None:
        raise OperandError(f"beta={beta} needs a C to scale: pass C, a ({M}, {N}) {kernel.out_dtype} array")
    if addend is None:
        return
    _check_output(kernel, addend, M, N, A, B, name="C", verb="reads")
    same = _address(addend) == _address(out) and addend.shape == out.shape
    if not same and _overlap(addend, out):
        raise OperandError("C overlaps out in memory without being out: pass out=C to update C in place, "
                           "or give out memory of its own")


def check_gemm_operands(kernel: GemmKernel | WmmaKernel, A, B, C=None,
                        device: int | None = None) -> tuple[int, int, int]:
    """Validate C = A @ B for `kernel` (a GEMM or a WMMA kernel of tcgemm.engine.catalog) and return (M, N, K).
    C, if given, is the output to write; `device`, if given, is the current GPU, where A, B (and C) must
    live."""
    if device is not None:
        for name, x in (("A", A), ("B", B)) + ((("C", C),) if C is not None else ()):
            check_device(name, x, device)
    _check_array("A", A, kernel.a_order, kernel.in_dtype, kernel.typed_title, kernel.element)
    _check_array("B", B, kernel.b_order, kernel.in_dtype, kernel.typed_title, kernel.element)
    _check_b_box(kernel)
    if not kernel.any_shape:
        for name, x in (("A", A), ("B", B)):
            _check_start(kernel, name, x)
    M, K = (int(s) for s in A.shape)
    Kb, N = (int(s) for s in B.shape)
    if K != Kb:
        raise OperandError(f"inner dimensions differ: A is {M}x{K} but B is {Kb}x{N}; A.shape[1] must equal B.shape[0]")
    check_gemm_shape(kernel, M, N, K)
    if C is not None:
        _check_output(kernel, C, M, N, A, B, name="out" if kernel.signature.scaled else "C")
    return M, N, K


# TMA copies a row-major (N-major) B in boxes of one 128-byte swizzle row of N (tcgemm.engine.tma.mn_box).
MN_BOX_BYTES = 128


def _check_b_box(kernel: GemmKernel | WmmaKernel) -> None:
    """A tile narrower than one box of a row-major B (Kernel 5.14's 32 columns) reads B column-major only."""
    if isinstance(kernel, GemmKernel) and kernel.tile_widths and kernel.mn_major("B") and \
            kernel.tile_n * ITEMSIZE[kernel.in_dtype] < MN_BOX_BYTES:
        raise OperandError(f"{kernel.typed_title} at {kernel.tile_n} columns reads B column-major only: TMA copies a "
                           f"row-major B in boxes of {MN_BOX_BYTES // ITEMSIZE[kernel.in_dtype]} columns, wider than "
                           "the tile; pass B column-major (B.T.copy().T) or pick a width of 64 or more")


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
    grid = () if kernel.schedule.persistent else kernel.grid(M, N)   # persistent: a block per SM
    for axis, blocks, limit in zip("xyz", grid, GRID_LIMITS):
        if blocks > limit:
            raise OperandError(f"{kernel.title} would launch {blocks} blocks along grid {axis} for M={M}, "
                               f"N={N}; CUDA allows at most {limit}: split the product into smaller GEMMs")
    return M, N, K
