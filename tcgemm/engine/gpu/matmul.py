"""tcgemm.matmul: D = alpha * A @ B + beta * C on ordinary arrays, row- or column-major.

The kernel is tcgemm.engine.dispatch's choice for the GPU, the shape and the types: on sm_90 Kernel 5.9
(wgmma, C in the inputs' 16-bit type or fp32) where its tiles fill the GPU, else Kernel 4.7 (mma.sync,
its tile planned per problem here: tcgemm.engine.plan.plan_kernel) for fp16 and Kernel D1's bf16 build
for bf16; int8 (exact int32), fp8 e4m3/e5m2 (sm_89 on; fp32 C) and fp32 as tf32 (allow_tf32=True) run
Kernel D1's build of the type, planned alike. D is in the inputs' type by default, summed in fp32
(out_dtype="float32" keeps the sums). Where the kernel's C is not the caller's (Kernel 4.7 stores fp32
only; Kernels 5.9 and D1 do not scale), the kernel writes A @ B into a buffer of its C (fp32, or int32
for int8) and one elementwise pass applies alpha and beta and rounds into D. Kernel D1 reads A row-major
and B column-major: an int8, fp8 or fp32 operand in the other order is copied into a buffer in D1's
order first (kept per stream for the next call). Nothing else is copied unless an operand's rows are
not 16-byte aligned or K is not a multiple of 16 bytes for D1 (see tcgemm.engine.gpu.gemm.prepare).
Arrays of other libraries (PyTorch tensors, bf16 and fp8 ones too, and anything with
__cuda_array_interface__ or __dlpack__) are viewed without a copy (tcgemm.engine.gpu.interop) and D comes
back as the caller's kind.

`python -m tcgemm.engine.gpu.matmul CASE M N K [TILE/SPLITS] [OFFSET] [DTYPE]` runs one checked call (the
compute-sanitizer tests), e.g. `python -m tcgemm.engine.gpu.matmul "A B" 129 257 75 16x64/3 3`, or of int8
inputs (Kernel D1) `python -m tcgemm.engine.gpu.matmul "A B" 129 257 75 planned 3 int8`.
"""
from __future__ import annotations

import sys
from collections import OrderedDict
from contextlib import nullcontext
from functools import lru_cache

import numpy as np

from tcgemm.engine.catalog import ELEMENTS, WMMA_CASES, WMMA_KERNELS
from tcgemm.engine.accuracy import verdict
from tcgemm.engine.dispatch import Dispatch, dispatch, output_dtype
from tcgemm.engine.dispatch import D1_ELEMENTS
from tcgemm.engine.kernel_types import MMA_ORDERS, ORDER_NAMES, storage_dtype
from tcgemm.errors import OperandError
from tcgemm.engine.plan import plan_kernel, tile_named
from tcgemm.engine.operands import INT32_MAX, INT32_MIN, memory_order
from tcgemm.engine.gpu import interop
from tcgemm.engine.gpu.compile import current_arch
from tcgemm.engine.gpu.device import checked_cupy, device_info, require_gpu
from tcgemm.engine.gpu.launch import StructLaunch
from tcgemm.engine.gpu.gemm import (case_operands, check_output, for_this_gpu, gpu_shape, kernel_spec, poisoned, prepare,
                                    prepared, reference, zero_padded)

WMMA_TILE = 16


def matmul(A, B, *, out=None, alpha=1, beta=0, C=None, kernel: str | None = None, out_dtype: str | None = None,
           allow_tf32: bool = False):
    """D = alpha * A @ B + beta * C, into `out` (or a new row-major array); returns D.

    A: (M, K) and B: (K, N) of one type: float16, bfloat16 (a PyTorch tensor), int8, float8_e4m3fn or
    float8_e5m2 (PyTorch tensors; sm_89 and sm_90), or float32 with `allow_tf32` (multiplied as tf32, each
    input rounded to it), each row-major or column-major (a .T view of a row-major array is
    column-major), with any offset; CuPy arrays, PyTorch tensors or any array with
    __cuda_array_interface__ or __dlpack__ (D comes back as the same kind). D: in the inputs' type (int8:
    int32, exact; fp8 and tf32: float32, as there is no fp8 C), or `out_dtype` ("float32" for fp16 and
    bf16; "float16" or "bfloat16" for fp8, rounded from the fp32 sums), or out's type. C: (M, N) row-major
    in D's type, read only where beta != 0 (int8: alpha and beta integers, D wraps around as int32 does);
    out=C updates C in place. `kernel`: a key of tcgemm.engine.catalog to run instead of
    tcgemm.engine.dispatch's choice (e.g. "k4.7", "k5.7", "k5.9", "w1.1"). A call repeated on arrays at
    the same addresses, of the same shapes, strides and dtypes, on the same stream, skips the checks and
    launches what the first call did (_Repeat)."""
    cupy = checked_cupy()
    device = cupy.cuda.runtime.getDevice()
    key = _repeat_key(A, B, out, C, alpha, beta, kernel, out_dtype, allow_tf32, device)
    repeat = _REPEATS.get(key) if key is not None else None
    if repeat is not None and (D := repeat(out, key[-1])) is not None:
        return D
    stream = interop.torch_stream() if interop.is_torch(A) else nullcontext()
    a, b = interop.view("A", A, device), interop.view("B", B, device)
    o = interop.view("out", out, device) if out is not None else None
    c = interop.view("C", C, device) if C is not None else None
    if a.dtype != b.dtype:
        raise OperandError(f"A is {a.dtype} and B is {b.dtype}; tcgemm.matmul takes two matrices of one type")
    out_dtype = output_dtype(a.dtype, out_dtype if out_dtype is not None or o is None else o.dtype, allow_tf32)
    D = into = o.array if o else None
    if out is None and a.array.ndim == b.array.ndim == 2 and a.array.shape[1] == b.array.shape[0]:
        D, into = interop.new_result(A, a.array.shape[0], b.array.shape[1], out_dtype, device)
    with stream:
        _, launches = _call(a.array, b.array, into, alpha, beta, c.array if c else None, a.dtype, out_dtype, kernel,
                            allow_tf32, fresh=out is None)
    if key is not None and launches is not None:
        if repeat is None:
            repeat = _remember(key, _Repeat(out is None, into.shape, out_dtype, A))
        repeat.add(into.data.ptr, launches)
    return out if out is not None else D


class _Repeat:
    """A call's launches (StructLaunch, bound once), holding the caller's arrays by address
    (PreparedGemm.repeat_launches), for the next call with arrays at the same addresses, shapes, strides and
    dtypes on the same stream (_repeat_key, whose last item is the stream): that call allocates D as the
    first did and launches, nothing else, where D lands at an address a call of this kind has written
    before (the memory pool hands back the blocks of the Ds its caller dropped: up to ADDRESSES of them
    are kept); else it goes the whole way, and its launches are added."""

    __slots__ = ("by_address", "fresh", "new_d", "torch")
    ADDRESSES = 4

    def __init__(self, fresh: bool, shape: tuple[int, int], out_dtype: str, A):
        self.by_address, self.fresh, self.torch = {}, fresh, interop.is_torch(A)
        self.new_d = interop.result_maker(A, shape, out_dtype)

    def add(self, c_ptr: int, launches: tuple) -> None:
        if len(self.by_address) >= self.ADDRESSES:
            self.by_address.pop(next(iter(self.by_address)))
        self.by_address[c_ptr] = launches

    def __call__(self, out, stream: int):
        """D of this call on `stream`, or None where it must go the whole way."""
        if not self.fresh:
            D, ptr = out, next(iter(self.by_address))
        else:
            D = self.new_d()
            ptr = D.data_ptr() if self.torch else D.data.ptr
        launches = self.by_address.get(ptr)
        if launches is None:
            return None
        for launch in launches:
            launch.on(stream)
        return D


REPEATS = 32        # kinds of call whose launches are kept, the oldest dropped first
_REPEATS: "OrderedDict[tuple, _Repeat]" = OrderedDict()


def _repeat_key(A, B, out, C, alpha, beta, kernel, out_dtype, allow_tf32, device) -> tuple | None:
    """What a call must share with an earlier one to reuse its launch; None for a call that does not
    reuse (a C to add, scalars of other types than int and float, arrays neither CuPy nor torch)."""
    if C is not None or type(alpha) not in (int, float) or type(beta) not in (int, float):
        return None
    a, b = interop.signature(A), interop.signature(B)
    o = interop.signature(out) if out is not None else ()
    if a is None or b is None or o is None:
        return None
    return a, b, o, alpha, beta, kernel, out_dtype, allow_tf32, device, interop.stream_of(A)


def _remember(key: tuple, repeat: _Repeat) -> _Repeat:
    _REPEATS[key] = repeat
    if len(_REPEATS) > REPEATS:
        _REPEATS.popitem(last=False)
    return repeat


@lru_cache(maxsize=4096)
def _dispatch(arch: str, sms: int, M: int, N: int, K: int, in_dtype: str, out_dtype: str, scaled: bool,
              mma_orders: bool, allow_tf32: bool) -> Dispatch:
    return dispatch(arch, sms, M, N, K, in_dtype, out_dtype, scaled, mma_orders, allow_tf32)


def chosen(M: int, N: int, K: int, in_dtype: str = "float16", out_dtype: str | None = None, scaled: bool = False,
           kernel: str | None = None, mma_orders: bool = True, allow_tf32: bool = False) -> Dispatch:
    """What tcgemm.matmul runs for this problem on this GPU (tcgemm.engine.dispatch), or with `kernel`;
    `mma_orders`: A row-major and B column-major; `allow_tf32`: float32 inputs run as tf32."""
    out = output_dtype(in_dtype, out_dtype, allow_tf32)
    if kernel is None:
        return _dispatch(current_arch(), device_info().sm_count, M, N, K, in_dtype, out, scaled, mma_orders,
                         allow_tf32)
    spec = kernel_spec(kernel) if kernel not in WMMA_KERNELS else WMMA_KERNELS[kernel]
    element = D1_ELEMENTS[in_dtype] if getattr(spec, "elements", ()) else ""
    dtypes = getattr(spec, "dtypes", ())
    kernel_out = out if (in_dtype, out) in dtypes and not (scaled and dtypes) else \
        ("float32" if dtypes else ELEMENTS[element].out_dtype if element else spec.out_dtype)
    return Dispatch(kernel, in_dtype, kernel_out, out, f"{M}×{N}×{K}: {spec.title} (asked for)", element)


def _matmul(A, B, out, alpha, beta, C, in_dtype: str, out_dtype: str, kernel: str | None, allow_tf32: bool = False):
    """D = alpha * A @ B + beta * C on CuPy arrays, into out (or a new array): matmul's path after the views."""
    return _call(A, B, out, alpha, beta, C, in_dtype, out_dtype, kernel, allow_tf32)[0]


def _call(A, B, out, alpha, beta, C, in_dtype: str, out_dtype: str, kernel: str | None, allow_tf32: bool = False,
          fresh: bool = False) -> tuple:
    """(D, the launch by address where one kernel wrote D from A and B as they are, else None), out being
    a D allocated for this call alone where `fresh`."""
    if A.ndim != 2 or B.ndim != 2:
        raise OperandError(f"A @ B needs 2-D A (M, K) and B (K, N), got shapes {tuple(A.shape)} and {tuple(B.shape)}")
    if A.shape[1] != B.shape[0]:
        raise OperandError(f"inner dimensions differ: A is {A.shape[0]}x{A.shape[1]} but B is {B.shape[0]}x{B.shape[1]}; "
                           "A.shape[1] must equal B.shape[0]")
    (M, K), N = A.shape, B.shape[1]
    scaled = (alpha, beta) != (1, 0)
    orders = (memory_order("A", A, "C"), memory_order("B", B, "F"))
    d = chosen(M, N, K, in_dtype, out_dtype, scaled, kernel, orders == MMA_ORDERS, allow_tf32)
    if d.key in WMMA_KERNELS:
        return _padded_wmma(d.key, A, B, out, alpha, beta, C), None
    cupy = checked_cupy()
    reordered = d.element and orders != MMA_ORDERS
    if reordered:       # Kernel D1 reads A row-major and B column-major only
        A, B, orders = *_in_mma_orders(A, B, orders), MMA_ORDERS
    turned = kernel_spec(d.key).c_order == "F"     # Kernel 5.13: C^T = B^T A^T, C^T column-major being C
    if turned:
        if scaled or C is not None:
            raise OperandError(f"{kernel_spec(d.key).title} computes A @ B turned round and takes no alpha, beta "
                               "or C: leave kernel= to tcgemm.matmul's choice for D = alpha A B + beta C")
        orders = tuple("F" if o == "C" else "C" for o in reversed(orders))     # of B.T and A.T
    spec = _configured(d, orders if kernel_spec(d.key).either_order else (), *((N, M) if turned else (M, N)), K,
                       cupy.cuda.runtime.getDevice())
    if d.kernel_out != d.out_dtype or (scaled and not spec.signature.scaled):
        return _with_epilogue(spec, A, B, out, alpha, beta, C, d.out_dtype, fresh, reordered)
    if out is not None and (d.element or turned):       # the kernel's own checks would call it C, or C^T
        _check_result("out", out, M, N, d.out_dtype)
    if out is None:
        out, fresh = cupy.empty((M, N), dtype=storage_dtype(d.out_dtype)), True
    run = prepared(spec, B.T, A.T, out.T) if turned else prepared(spec, A, B, out, alpha=alpha, beta=beta, addend=C)
    run()
    # Held by address only: a D allocated here goes back to the pool when its caller drops it, and the
    # next call's D lands where this one's did.
    launches = run.repeat_launches() if C is None and not reordered else None
    if launches is not None:
        return out, launches
    if fresh:
        run.forget_output()
    return out, None


@lru_cache(maxsize=4096)
def _configured(d: Dispatch, orders: tuple, M: int, N: int, K: int, device: int):
    """The configuration of d's kernel for this GPU (`device`), types, memory orders and, where it is
    planned, problem: worked out once per call signature."""
    spec = for_this_gpu(kernel_spec(d.key))
    if d.element:       # Kernel D1: its build for the inputs' type
        spec = spec.with_element(d.element)
    if spec.dtypes:
        spec = spec.with_dtypes(d.in_dtype, d.kernel_out)
    if d.tile_n and spec.tile_widths:
        spec = spec.with_tile_n(d.tile_n)
    if d.cluster:
        spec = spec.with_cluster(*d.cluster)
    if orders:
        spec = spec.with_orders(*orders)
    if spec.planned and min(M, N, K) > 0:   # else prepare says what is wrong
        spec = plan_kernel(spec, M, N, K, gpu_shape(), current_arch())
    return spec


def _with_epilogue(spec, A, B, out, alpha, beta, C, out_dtype: str, fresh: bool = False, reordered: bool = False):
    """A @ B into a buffer of the kernel's C (fp32; int32 for int8), then D = alpha * AB + beta * C rounded
    to out_dtype (int32: exact, wrapping around): (D, the two launches by address for a repeated call, or
    None where a C is added, an operand was staged or reordered). A split K's partials go straight to the
    pass, which adds them up: two launches, not three."""
    cupy = checked_cupy()
    M, N = A.shape[0], B.shape[1]
    scalars = _scalars(out_dtype, alpha, beta)
    if out is None:
        out, fresh = cupy.empty((M, N), dtype=storage_dtype(out_dtype)), True
    else:
        _check_result("out", out, M, N, out_dtype)
    if beta != 0:
        if C is None:
            raise OperandError(f"beta={beta} needs a C to scale: pass C, a ({M}, {N}) {out_dtype} array")
        _check_result("C", C, M, N, out_dtype)
    scratch = _scratch((M, N), cupy.cuda.get_current_stream().ptr, storage_dtype(spec.out_dtype))
    run = prepared(spec, A, B, scratch)
    fused = run.partials is not None    # a split K: the pass adds the partials up, in reduce_splits' place
    run(reduce=not fused)
    epilogue = _epilogue_pass(out_dtype, run.partials if fused else scratch, C if beta != 0 else None, *scalars,
                              splits=spec.splits if fused else 1)
    kernel, grid, block, args = epilogue(out)
    kernel(grid, block, args)
    launches = run.repeat_launches(reduce=not fused) if C is None and not reordered else None
    if launches is not None:    # the pass bound too, D by address and the kernel's C held
        return out, launches + (StructLaunch(*epilogue(np.uint64(out.data.ptr))),)
    return out, None


def _scalars(out_dtype: str, alpha, beta) -> tuple:
    """alpha and beta as the epilogue pass takes them: fp32, or int32 for an int32 D (integers in its range)."""
    if out_dtype != "int32":
        return np.float32(alpha), np.float32(beta)
    for name, value in (("alpha", alpha), ("beta", beta)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not INT32_MIN <= value <= INT32_MAX:
            raise OperandError(f"{name}={value!r}: int8 inputs take integer alpha and beta in int32's range "
                               "(D is their exact int32 result)")
    return np.int32(alpha), np.int32(beta)


def _check_result(name: str, x, M: int, N: int, out_dtype: str) -> None:
    if tuple(x.shape) != (M, N) or x.dtype != np.dtype(storage_dtype(out_dtype)) or not x.flags.c_contiguous:
        raise OperandError(f"{name} must be a row-major ({M}, {N}) {out_dtype} array (D's type), got "
                           f"{tuple(x.shape)} {x.dtype}{'' if x.flags.c_contiguous else ', not row-major'}")


_SCRATCH: dict = {}


def _scratch(shape, stream: int, dtype: str = "float32"):
    """The buffer of A @ B for this shape, dtype and stream, kept for the next call (one per stream)."""
    cupy = checked_cupy()
    buffer = _SCRATCH.get(stream)
    if buffer is None or buffer.shape != shape or buffer.dtype != np.dtype(dtype) or \
            buffer.device.id != cupy.cuda.runtime.getDevice():
        buffer = _SCRATCH[stream] = cupy.empty(shape, dtype=dtype)
    return buffer


_REORDERED: dict = {}


def _in_mma_orders(A, B, orders: tuple) -> tuple:
    """(A, B) in the orders Kernel D1 reads, A row-major and B column-major: an operand in the other order
    copied, on the current stream, into a buffer kept for the next call (one per operand and stream)."""
    stream = checked_cupy().cuda.get_current_stream().ptr
    return tuple(x if order == want else _reordered(name, x, want, stream)
                 for name, x, order, want in zip("AB", (A, B), orders, MMA_ORDERS))


def _reordered(name: str, x, order: str, stream: int):
    """x copied into the buffer of operand `name` on `stream`, of x's shape and dtype in memory order `order`."""
    cupy = checked_cupy()
    buffer = _REORDERED.get((name, stream))
    contiguous = "c_contiguous" if order == "C" else "f_contiguous"
    if buffer is None or buffer.shape != x.shape or buffer.dtype != x.dtype or not getattr(buffer.flags, contiguous) \
            or buffer.device.id != cupy.cuda.runtime.getDevice():
        buffer = _REORDERED[(name, stream)] = cupy.empty(x.shape, dtype=x.dtype, order=order)
    buffer[...] = x
    return buffer


# The epilogue pass, per D type: the C type it stores, how it reads C into fp32 and writes fp32 as D's
# type (fp16: cuda_fp16.h's round to nearest; bf16: its bits, rounded to nearest even).
_STORED = {"float32": "float", "float16": "unsigned short", "bfloat16": "unsigned short", "int32": "int"}
_DECODE = {"float32": "c[i]", "float16": "__half2float(__ushort_as_half(c[i]))",
           "bfloat16": "__uint_as_float(((unsigned)c[i]) << 16)"}
_ENCODE = {"float32": "d[i] = v;", "float16": "d[i] = __half_as_ushort(__float2half_rn(v));",
           "bfloat16": "unsigned u = __float_as_uint(v); d[i] = (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);"}
# int32: in unsigned arithmetic, which wraps around mod 2^32 as tcgemm.engine.gpu.gemm.reference does.
_INT32_BODY = "d[i] = (int)((unsigned)alpha * (unsigned)s{});"
# t holds `splits` partial products of n elements each (a split K's, which the pass adds up in order from
# zero, as reduce_splits does), or the kernel's C (splits 1).
_EPILOGUE = """#include <cuda_fp16.h>
extern "C" __global__ void tcgemm_epilogue(const {t} *t, {d} *d, const {d} *c, long long n, {s} alpha, {s} beta,
                                           int splits) {{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {{
        {t} s = splits == 1 ? t[i] : ({t})0;
        for (int z = splits == 1; z < splits; ++z) s += t[z * n + i];
        {body}
    }}
}}
"""
EPILOGUE_THREADS = 256


def epilogue_source(out_dtype: str, with_c: bool) -> str:
    """The CUDA source of the elementwise pass D = alpha * t + beta * C (C only `with_c`) for a D of
    out_dtype, t the kernel's C or a split K's partials (no GPU needed)."""
    if out_dtype == "int32":
        t, scalar, body = "int", "int", _INT32_BODY.format(" + (unsigned)beta * (unsigned)c[i]" if with_c else "")
    else:
        t, scalar = "float", "float"
        body = f"float v = alpha * s{' + beta * ' + _DECODE[out_dtype] if with_c else ''}; {_ENCODE[out_dtype]}"
    return _EPILOGUE.format(t=t, d=_STORED[out_dtype], s=scalar, body=body)


@lru_cache(maxsize=None)
def _epilogue_kernel(out_dtype: str, with_c: bool):
    """epilogue_source's pass, compiled once."""
    return require_gpu().RawKernel(epilogue_source(out_dtype, with_c), "tcgemm_epilogue", options=("--std=c++17",))


def _epilogue_pass(out_dtype: str, t, C, alpha, beta, splits: int = 1):
    """The epilogue pass over t (the kernel's C, or its `splits` partials), as a function of the D it
    writes (an array or its address) giving its kernel, grid, block and arguments."""
    n = t.size // splits
    grid = (max(1, min(-(-n // EPILOGUE_THREADS), 8 * device_info().sm_count)),)
    kernel = _epilogue_kernel(out_dtype, C is not None)

    def parts(D) -> tuple:
        return kernel, grid, (EPILOGUE_THREADS,), (t, D, t if C is None else C, np.int64(n), alpha, beta,
                                                   np.int32(splits))
    return parts


def _padded(x, rows: int, cols: int, order: str):
    """x, or a zero-filled (rows, cols) array in x's memory order holding x in its top-left corner."""
    if x.shape == (rows, cols) and x.data.ptr % 32 == 0:
        return x
    padded, corner = zero_padded(x, rows, cols, order)
    corner[...] = x
    return padded


def _padded_wmma(key: str, A, B, out, alpha, beta, C):
    """The WMMA kernel on A, B (and C) zero-padded to whole 16 x 16 tiles and 32-byte aligned."""
    spec = WMMA_KERNELS[key]
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise OperandError(f"A @ B needs 2-D A (M, K) and B (K, N), got shapes {tuple(A.shape)} and {tuple(B.shape)}")
    (M, K), N = A.shape, B.shape[1]
    Mp, Np, Kp = (-(-size // WMMA_TILE) * WMMA_TILE for size in (M, N, K))
    Ap = _padded(A, Mp, Kp, memory_order("A", A))
    Bp = _padded(B, Kp, Np, memory_order("B", B))
    Cp = None
    if beta != 0:
        if C is None or C.shape != (M, N):
            raise OperandError(f"beta={beta} needs a C of shape ({M}, {N}) to scale")
        Cp = _padded(C, Mp, Np, "C")
    run = prepare(spec.with_orders(memory_order("A", Ap), memory_order("B", Bp)), Ap, Bp, alpha=alpha, beta=beta,
                  addend=Cp)
    run()
    D = run.C[:M, :N]
    if out is None:
        return checked_cupy().ascontiguousarray(D)
    if out.shape != (M, N) or out.dtype != np.dtype(spec.out_dtype):
        raise OperandError(f"out must be a ({M}, {N}) {spec.out_dtype} array, got {tuple(out.shape)} {out.dtype}")
    out[...] = D
    return out



# ---- checks and timings -----------------------------------------------------------------------

def check_matmul_order(case: str, M: int, N: int, K: int, alpha=1, beta=0, *, dtype: str = "float16", offset: int = 0,
          tile: str | None = None, seed: int | None = None):
    """tcgemm.matmul on fresh random operands of `case`, into a poisoned output, against the
    reference (fp16: fp32 tolerance of tcgemm.engine.accuracy; int8: bit for bit). `tile` ("64x128/3"): force
    that tile and split of Kernel 4.7 instead of the planned one."""
    A, B, C = case_operands(case, M, N, K, dtype, offset, seed)
    out = poisoned((M, N), C.dtype)
    if tile is None:
        matmul(A, B, out=out, alpha=alpha, beta=beta, C=C)
    else:
        name, splits = tile.split("/")
        spec = kernel_spec("k4.7").with_orders(*WMMA_CASES[case]).with_tile(tile_named(name), int(splits))
        prepare(spec, A, B, out, alpha=alpha, beta=beta, addend=C)()
    return check_output(out, reference(A, B, C, alpha, beta))


def order_timings(M: int = 4096, N: int = 4096, K: int = 4096, repeats: int = 2) -> "Table":
    """cuBLAS, Kernel 4.6 (fixed orders) and tcgemm.matmul (Kernel 4.7) in each memory-order case at one
    size, each checked on its output, then timed (median, L2 flushed), the whole list `repeats` times
    in turn so that a drift of the clock shows as a spread; the table has each run's median.
    % of K-major: relative to Kernel 4.7 with A row-major and B column-major (the orders mma.sync
    reads), in the same round."""
    from tcgemm.engine.gpu import cublas

    cupy = require_gpu()
    runs = []
    A, B, _ = case_operands("A B^T", M, N, K)
    D = cupy.empty((M, N), dtype=np.float32)
    runs.append(("cuBLAS (cublasGemmEx)", "", "A B^T", cublas.prepare_gemm_ex(A, B, D), A, B, D))
    k46 = prepare(for_this_gpu(kernel_spec("k4.6")), A, B)
    runs.append(("Kernel 4.6", k46.spec.variant, "A B^T", k46, A, B, k46.C))
    for case in ("A B^T", "A B", "A^T B^T", "A^T B"):
        A, B, _ = case_operands(case, M, N, K)
        run = prepare(for_this_gpu(kernel_spec("k4.7")).with_orders(*WMMA_CASES[case]), A, B,
                      cupy.empty((M, N), dtype=np.float32))
        runs.append(("Kernel 4.7", run.spec.with_orders("C", "F").variant, case, run, A, B, run.C))
    # The alternative to ldmatrix.trans for a row-major B: copy it into column-major order, then run.
    A, B, _ = case_operands("A B", M, N, K)
    Bf = cupy.empty((K, N), dtype=np.float16, order="F")
    k_major = prepare(for_this_gpu(kernel_spec("k4.7")), A, Bf, cupy.empty((M, N), dtype=np.float32))

    def copy_then_run(B=B):
        Bf[...] = B
        k_major()
    runs.append(("Kernel 4.7 after copying B column-major", k_major.spec.variant, "A B", copy_then_run, A, B,
                 k_major.C))
    runs = [((name, tile), case, run, A, B, out) for name, tile, case, run, A, B, out in runs]
    return order_table(runs, ["Kernel", "Tile"], M, N, K, repeats, base=2, operation="D = A @ B",
                       note="% of K-major: speed relative to Kernel 4.7 with A row-major and B column-major in "
                            "the same run (both operands K-major: no ldmatrix.trans)")


def order_table(runs, label_columns, M: int, N: int, K: int, repeats: int, base: int, operation: str,
                note: str) -> "Table":
    """Each run (labels, case, launch, A, B, its output) checked on its output against the fp32
    product, then timed (median, L2 flushed), the whole list `repeats` times in turn so that a drift of
    the clock shows as a spread; one row per run and round, its speed relative to run `base` (note says
    which that is) in the same round."""
    from tcgemm.engine.report import size_label
    from tcgemm.table import Column, Table
    from tcgemm.engine.gpu.device import device_info
    from tcgemm.engine.gpu.timing import median_rounds

    verdicts = []
    for _, _, run, A, B, out in runs:
        run()
        verdicts.append(verdict(check_output(out, reference(A, B))))
    rows = []
    for round_, times in enumerate(median_rounds([run[2] for run in runs], repeats)):
        for (labels, case, *_), seconds, shown in zip(runs, times, verdicts):
            a, b = (ORDER_NAMES[o] for o in WMMA_CASES[case])
            rows.append([round_ + 1, *labels, a, b, seconds * 1e6, 2 * M * N * K / seconds / 1e12,
                         100 * times[base] / seconds, shown])
    return Table(["Run", *label_columns, "A", "B", Column("µs", ".0f"), Column("TFLOP/s", ".1f"),
                  Column("% of K-major", ".0f", unit="%"), Column("Check", detail=True, verdict=True)], rows,
                 caption=f"{device_info().name}, {operation}, fp16 in, fp32 out, at {size_label(M, N, K)}",
                 notes=[f"µs: median of timed runs, L2 flushed before each; the list runs {repeats} times in turn",
                        note])


def _short(result) -> str:
    from tcgemm.table import Verdict

    if not result.passed:
        return verdict(result)
    return Verdict.of(result, f"PASS ({result.rel_fro:.0e})" if hasattr(result, "rel_fro") else "PASS (exact)")


def check_matmul_orders(shapes=((129, 257, 75), (1000, 1003, 1007), (1, 4096, 4096)), offsets=(0, 3)) -> "Table":
    """tcgemm.matmul in every memory-order case, fp16 and int8, at odd shapes, on arrays that start
    16-byte aligned and on views that do not (offset in elements), with alpha = 2, beta = -1 and a C:
    one row per input type, case and shape, one column per offset."""
    from tcgemm.engine.report import size_label
    from tcgemm.table import Column, Table

    rows = [[dtype, case, size_label(*mnk)] + [_short(check_matmul_order(case, *mnk, 2, -1, dtype=dtype, offset=offset))
                                               for offset in offsets]
            for dtype in ("float16", "int8") for case in WMMA_CASES for mnk in shapes]
    return Table(["Inputs", "Case", "M×N×K"] + [Column(f"offset {offset}", verdict=True) for offset in offsets],
                 rows, collapse=True, caption="tcgemm.matmul: D = 2 A B - C on fresh random inputs",
                 notes=["offset n: each array starts n elements into its allocation (3: not 16-byte aligned, so "
                        "the launcher copies it into an aligned buffer first)",
                        "fp16: relative error, within the fp32 tolerance of tcgemm.engine.accuracy; int8: every int32 "
                        "equal to the exact result"])


def _main(argv) -> None:
    case, M, N, K = argv[0], *(int(x) for x in argv[1:4])
    tile = argv[4] if len(argv) > 4 and argv[4] != "planned" else None
    offset = int(argv[5]) if len(argv) > 5 else 0
    dtype = argv[6] if len(argv) > 6 else "float16"
    result = check_matmul_order(case, M, N, K, 2, -1, dtype=dtype, offset=offset, tile=tile)
    print(case, M, N, K, tile or "planned", offset, dtype, result)
    if not result.passed:
        raise SystemExit(1)


if __name__ == "__main__":
    _main(sys.argv[1:])
