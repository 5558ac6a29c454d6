"""Launch the book's GEMM kernels, the WMMA kernels among them, through one checked path: `prepare`
checks the operands once and returns a launch that does nothing but launch; `launch` and `gemm` are
one-shot uses of it. Every check of a kernel's output uses the operands, the poisoned output, the
reference and the comparison defined here (random_operands, poisoned, reference, check_output).

A kernel's launch is built by the builder of its signature (tcgemm.engine.kernel_types.Signature): those of
the plain, BLAS and WMMA signatures are here; a signature's `builder_module` registers its builder
(`register_builder`) when imported, which the launcher does the first time it needs it (the tensor
maps' builder: tcgemm.engine.gpu.tma)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial
from importlib import import_module
from typing import Any, Callable

import numpy as np

from tcgemm.engine.catalog import GEMM_KERNELS, WMMA_CASES
from tcgemm.engine.accuracy import Check, ExactCheck, compare_outputs, compare_exact
from tcgemm.errors import UnsupportedOnGPUError
from tcgemm.hw import peak_for
from tcgemm.engine import bfloat16
from tcgemm.engine.kernel_types import OPERAND_ORDERS, GemmKernel, Signature, WmmaKernel, storage_dtype
from tcgemm.engine.plan import MMA_SYNC_SHARE, GpuShape, plan_kernel
from tcgemm.engine.operands import check_addend, check_device, check_gemm_operands, check_gemm_shape, leading_dimension
from tcgemm.engine.gpu.compile import (current_arch, get_arch_specific_function, get_function, get_text_function,
                                      source_versions)
from tcgemm.engine.gpu.device import checked_cupy, device_info
from tcgemm.engine.gpu.launch import StructLaunch, active_clusters, bound

def k_align(x) -> int:
    """Elements of x per 16-byte copy (fp16: 8): any-shape kernels need rows of a multiple of this."""
    return 16 // x.itemsize


def kernel_spec(key: str) -> GemmKernel:
    try:
        return GEMM_KERNELS[key]
    except KeyError:
        raise KeyError(f"unknown kernel {key!r}; the kernels are: {', '.join(GEMM_KERNELS)}") from None


_gpu = checked_cupy    # cupy, its checks done once per process


def for_this_gpu(spec: GemmKernel) -> GemmKernel:
    """The configuration of `spec` that fits this GPU's shared memory per block, as the driver reports
    it (opt-in maximum). On the book's target architectures that is tcgemm.arch's figure, so the launcher
    picks what tcgemm.engine.catalog.configured picks offline (tests/gpu/test_arch.py checks both)."""
    return _for_smem(spec, _smem_optin(_gpu().cuda.runtime.getDevice()))


@lru_cache(maxsize=None)
def _smem_optin(device: int) -> int:
    return device_info().shared_mem_per_block_optin


@lru_cache(maxsize=None)
def _for_smem(spec: GemmKernel, limit: int) -> GemmKernel:
    return spec.for_smem(limit)


def kernel_function(spec: GemmKernel | WmmaKernel):
    """The compiled kernel of this configuration, allowed its dynamic shared memory (both done once
    per configuration, GPU and version of the source: see tcgemm.engine.gpu.compile). UnsupportedOnGPUError
    where the kernel needs a newer GPU (Kernel 5.0: sm_90)."""
    return _kernel_function(spec, current_arch(), source_versions(spec.source))


@lru_cache(maxsize=None)
def _kernel_function(spec: GemmKernel | WmmaKernel, arch: str, versions: tuple):
    if reason := spec.unsupported(arch):
        raise UnsupportedOnGPUError(reason)
    # A WMMA kernel's macros follow from the memory orders it was configured for (WmmaKernel.defines).
    defines = spec.defines(spec.a_order, spec.b_order) if isinstance(spec, WmmaKernel) else spec.defines
    fn = _compiled(spec, spec.entry, defines)
    if spec.smem_bytes > 48 * 1024 and fn.max_dynamic_shared_size_bytes < spec.smem_bytes:
        fn.max_dynamic_shared_size_bytes = spec.smem_bytes
    return fn


def _compiled(spec: GemmKernel | WmmaKernel, entry: str, defines: tuple):
    """The function `entry` of the kernel's source, kernels/<source> or the text given in its place (a
    reader's edit: tcgemm.practice.workbench)."""
    if spec.text:
        return get_text_function(spec.text, spec.source, entry, defines, spec.arch_specific)
    return (get_arch_specific_function if spec.arch_specific else get_function)(spec.source, entry, defines)


REDUCE_THREADS = 256


def reduce_function(spec: GemmKernel):
    """The kernel that adds the partial C of a split-K launch (kernels/k4.6_tile_plans.cu)."""
    return _compiled(spec, "reduce_splits", spec.defines)


@lru_cache(maxsize=None)
def gpu_shape() -> GpuShape:
    """This GPU as tcgemm.engine.plan's model sees it: SMs, shared memory, registers, the mma.sync ceiling
    (datasheet x MMA_SYNC_SHARE) and the DRAM bandwidth (2 transfers per memory clock x bus width)."""
    info = device_info()
    attrs = _gpu().cuda.Device().attributes
    peak = peak_for(info.name)
    ceiling = (peak.tflops if peak else 100.0) * MMA_SYNC_SHARE.get(info.arch, 1.0)
    dram = 2 * attrs["MemoryClockRate"] * 1e3 * attrs["GlobalMemoryBusWidth"] / 8 / 1e9
    return GpuShape(info.name, info.sm_count, attrs["MaxSharedMemoryPerMultiprocessor"],
                    info.shared_mem_per_block_optin, attrs["MaxRegistersPerMultiprocessor"],
                    attrs["MaxThreadsPerMultiProcessor"], ceiling, dram)


def _needs_staging(spec: GemmKernel, x, order: str, K: int) -> bool:
    """Whether operand x must be copied into an aligned buffer before the kernel can read it: its
    16-byte copies need rows of a multiple of k_align(x) elements that start 16-byte aligned (Kernel 4.7
    reads the edges of M, N and K itself; Kernels 4.5, 4.6 and D1 need K a multiple of it; the other
    kernels refuse an unaligned operand, in tcgemm.engine.operands)."""
    if spec.either_order:
        return x.data.ptr % 16 != 0 or leading_dimension(x, order) % k_align(x) != 0
    return spec.any_shape and (x.data.ptr % 16 != 0 or K % k_align(x) != 0)


def zero_padded(x, rows: int, cols: int, order: str):
    """A zero-filled (rows, cols) buffer in memory order `order`, in x's dtype, and the view of its
    top-left corner that x is to be copied into."""
    buffer = _gpu().zeros((rows, cols), dtype=x.dtype, order=order)
    return buffer, buffer[:x.shape[0], :x.shape[1]]


def _aligned_buffer(x, order: str):
    """zero_padded for x in x's memory order, the contiguous dimension rounded up to k_align(x) elements."""
    rows, cols = x.shape
    align = k_align(x)
    if order == "C":
        return zero_padded(x, rows, -(-cols // align) * align, order)
    return zero_padded(x, -(-rows // align) * align, cols, order)


@dataclass(frozen=True)
class LaunchParts:
    """What a signature's builder makes a launch of: the compiled kernel `fn` of `spec` and its grid; A and
    B as the kernel reads them (the aligned buffers where staged); `out`, where it writes (C, or the
    workspace of a split's partials); the problem's M, N and K; and the scaling the kernel applies itself,
    alpha * A @ B + beta * addend (alpha 1 and beta 0 onto `out` where a split's reduce applies the real
    one; `addend` is C where none was given)."""
    spec: GemmKernel | WmmaKernel
    fn: Any
    grid: tuple[int, int, int]
    A: Any
    B: Any
    out: Any
    M: int
    N: int
    K: int
    alpha: float
    beta: float
    addend: Any


Builder = Callable[[LaunchParts], Callable[[], None]]
_BUILDERS: dict[Signature, Builder] = {}


def register_builder(kind: Signature, build: Builder) -> None:
    """Build the launches of kernels with signature `kind` with `build` (LaunchParts -> a call that
    launches): called by the module that kind.builder_module names, when it is imported."""
    _BUILDERS[kind] = build


def builder(kind: Signature) -> Builder:
    """The launch builder of signature `kind`, its module imported the first time."""
    if kind not in _BUILDERS:
        import_module(kind.builder_module)
    if kind not in _BUILDERS:
        raise LookupError(f"{kind.builder_module} registers no launch builder for the signature {kind.name}")
    return _BUILDERS[kind]


def _int32(*values) -> tuple:
    return tuple(np.int32(v) for v in values)


def _launch(parts: LaunchParts, args: tuple) -> Callable[[], None]:
    return partial(parts.fn, parts.grid, parts.spec.block, args, shared_mem=parts.spec.smem_bytes)


def _plain_launch(parts: LaunchParts) -> Callable[[], None]:
    """(A, B, C, M, N, K), K the columns of A as the kernel reads it (rounded up where A was staged: the
    padding is zeros)."""
    return _launch(parts, (parts.A, parts.B, parts.out) + _int32(parts.M, parts.N, parts.A.shape[1]))


def _blas_launch(parts: LaunchParts) -> Callable[[], None]:
    """(A, B, C, M, N, K, lda, ldb, alpha, beta, C_in), alpha and beta in fp32."""
    spec = parts.spec
    lds = leading_dimension(parts.A, spec.a_order), leading_dimension(parts.B, spec.b_order)
    return _launch(parts, (parts.A, parts.B, parts.out) + _int32(parts.M, parts.N, parts.K, *lds) +
                   (np.float32(parts.alpha), np.float32(parts.beta), parts.addend))


def _wmma_launch(parts: LaunchParts) -> Callable[[], None]:
    """(A, B, C_in, D, M, N, K, alpha, beta), alpha and beta in D's type."""
    scalar = np.dtype(parts.spec.out_dtype).type
    return _launch(parts, (parts.A, parts.B, parts.addend, parts.out) + _int32(parts.M, parts.N, parts.K) +
                   (scalar(parts.alpha), scalar(parts.beta)))


register_builder(Signature.PLAIN, _plain_launch)
register_builder(Signature.BLAS, _blas_launch)
register_builder(Signature.WMMA, _wmma_launch)


class PreparedGemm:
    """out = alpha * A @ B + beta * addend with one kernel configuration (of GEMM_KERNELS, or a WMMA
    kernel compiled for the memory orders of A and B), on operands checked once (tcgemm.engine.gpu.gemm.prepare).
    Calling it launches the kernel on the current stream, with the function, grid and arguments fetched
    when it was prepared: no checks, no lookups. A kernel edited since then is not picked up: prepare again.

    An operand the kernel cannot read where it lies (rows not 16-byte aligned: see _needs_staging) is
    copied, on every call, into a zero-padded buffer allocated here: `staged` names them. The launch is
    built by the builder of the kernel's signature (a TMA kernel's: the tensor maps of A and B, encoded
    once, in the memory orders it was compiled for, and one of C where it stores C by TMA). A split K
    writes partial products into a workspace that a second kernel adds up, scaled, into C.

    What is set up here on the GPU (the NaN fill of a new C, the zeroed staging buffers, memory from
    CuPy's pool) is queued on the stream that is current here; the launch may come on another, one that
    nothing orders after it (a non-blocking stream). So an event is recorded after the set-up, and a
    call waits for it on its own stream (cudaStreamWaitEvent) until the event is seen done; from then
    on a call launches and nothing else."""

    __slots__ = ("spec", "A", "B", "C", "M", "N", "K", "staged", "_copies", "_launch", "_reduce", "_ready",
                 "_workspace")

    def __init__(self, spec: GemmKernel | WmmaKernel, A, B, C, K: int, alpha=1.0, beta=0.0, addend=None):
        self.spec, self.A, self.B, self.C = spec, A, B, C
        (self.M, self.N), self.K = C.shape, K
        Ak, Bk = self._stage()
        fn = kernel_function(spec)
        out, addend, self._reduce, self._workspace = C, C if addend is None else addend, None, None
        if spec.splits > 1:     # partial C per split into a workspace, then one pass adds them into C
            out = self._workspace = _gpu().empty(spec.splits * self.M * self.N, dtype=storage_dtype(spec.out_dtype))
            self._reduce = self._reduce_launch(out, alpha, beta, addend)
            alpha, beta, addend = 1, 0, out
        clusters = active_clusters(fn, spec.cluster, spec.threads, spec.smem_bytes) if spec.cluster > 2 else None
        grid = spec.grid(self.M, self.N, device_info().sm_count, clusters)
        self._launch = builder(spec.signature)(LaunchParts(spec, fn, grid, Ak, Bk, out, self.M, self.N, K,
                                                           alpha, beta, addend))
        self._ready = _gpu().cuda.Event(block=False, disable_timing=True)
        self._ready.record()       # on the current stream, after everything queued above

    def _stage(self) -> list:
        """A and B as the kernel reads them: each that needs it replaced by an aligned buffer, into which
        every call copies it."""
        operands, self._copies, self.staged = [], [], ()
        for name, x, order in (("A", self.A, self.spec.a_order), ("B", self.B, self.spec.b_order)):
            if _needs_staging(self.spec, x, order, self.K):
                buffer, view = _aligned_buffer(x, order)
                self._copies.append((view, x))
                self.staged += (name,)
                x = buffer
            operands.append(x)
        return operands

    def _reduce_launch(self, partials, alpha, beta, addend) -> tuple:
        """reduce_splits of the kernel's source, its grid, block and arguments: the partials added into C,
        scaled where the kernel's signature scales."""
        count = self.M * self.N
        scaling = (np.float32(alpha), np.float32(beta), addend) if self.spec.signature.scaled else ()
        return (reduce_function(self.spec), (min(8 * device_info().sm_count, -(-count // REDUCE_THREADS)),),
                (REDUCE_THREADS,), (partials, self.C, np.int32(count), np.int32(self.spec.splits)) + scaling)

    def _wait_for_set_up(self) -> None:
        """Order this call's stream after the set-up (the event's stream, or any other), once it is done
        never again."""
        if self._ready.done:
            self._ready = None
        else:
            _gpu().cuda.get_current_stream().wait_event(self._ready)

    def __call__(self, reduce: bool = True) -> None:
        """Launch; a split K's partials added into C unless `reduce` is False (its caller adds up `partials`)."""
        if self._ready is not None:
            self._wait_for_set_up()
        for staged, operand in self._copies:
            staged[...] = operand
        self._launch()
        if self._reduce is not None and reduce:
            self._reduce[0](*self._reduce[1:])

    @property
    def partials(self):
        """A split K's partial products, spec.splits of M x N each in order (reduce_splits adds them into
        C); None without a split."""
        return self._workspace

    def forget_output(self) -> None:
        """Hold C by its address only, so that its memory goes back to CuPy's pool once its user drops it:
        for a C its caller allocated for one call and handed away (tcgemm.matmul). The launch may still
        run, into whatever C has the same address, shape and strides (the key `prepared` reuses it under).
        `self.C` becomes None."""
        if self.C is None:
            return
        self._launch = _by_address(self._launch, self.C)
        if self._reduce is not None:
            self._reduce = self._reduce[:3] + (_addresses(self._reduce[3], self.C),)
        self.C = None

    def repeat_launches(self, reduce: bool = True) -> tuple | None:
        """The kernel's launch (and a split's reduce_splits) bound once (tcgemm.engine.gpu.launch.StructLaunch,
        each launched by .on(stream)), for a call repeated on arrays at the same addresses, of the same
        shapes, strides and dtypes, on the same stream, after this one. From here on this launch holds A, B
        and C by their addresses only (forget_output for all three), so it keeps none of the caller's arrays
        alive. None, and nothing changed, where an operand is staged: each call copies it from the array."""
        if self.staged:
            return None
        self.forget_output()
        for x in (self.A, self.B):
            self._launch = _by_address(self._launch, x)
        self.A = self.B = None
        launches = (bound(self._launch),)
        if self._reduce is not None and reduce:
            launches += (StructLaunch(*self._reduce),)
        return launches


def _addresses(args: tuple, x) -> tuple:
    """args with the array x replaced by its address (a 64-bit kernel argument all the same)."""
    return tuple(np.uint64(a.data.ptr) if a is x else a for a in args)


def _by_address(launch, x):
    """A builder's launch that no longer holds the array x (see PreparedGemm.forget_output)."""
    if isinstance(launch, partial):       # _launch's partial(fn, grid, block, args, shared_mem=...)
        grid_block, args = launch.args[:-1], launch.args[-1]
        return partial(launch.func, *grid_block, _addresses(args, x), **launch.keywords)
    launch.forget(x)                      # a launch of its own kind (tcgemm.engine.gpu.launch.StructLaunch)
    return launch


def prepare(spec: GemmKernel | WmmaKernel, A, B, C=None, *, alpha=1, beta=0, addend=None) -> PreparedGemm:
    """Check C = alpha * A @ B + beta * addend for the kernel configuration `spec` once (GPU arrays on the
    current device, dtypes, memory orders, alignment, shape multiples, 32-bit index limits; C's shape,
    dtype and order; alpha, beta and the addend: Kernel 4.7 and the WMMA kernels only), fetch the compiled
    kernel, and return the launch. A: (M, K), B: (K, N) in the kernel's input dtype and orders
    (tcgemm.engine.catalog; a WMMA kernel: with_orders); C: (M, N) row-major in its output dtype, or None for a
    new one, `poisoned`, so an element the kernel fails to write cannot pass a check."""
    cupy = _gpu()
    M, N, K = check_gemm_operands(spec, A, B, C, device=cupy.cuda.runtime.getDevice())
    if spec.planned:     # callers that did not plan (tcgemm.engine.gpu.matmul does, before it gets here)
        spec = plan_kernel(spec, M, N, K, gpu_shape(), current_arch())
        check_gemm_shape(spec, M, N, K)     # the split's partials must fit 32-bit indices too
    if C is None:
        C = poisoned_output(spec, M, N)
    check_addend(spec, addend, C, M, N, alpha, beta, A, B)
    if addend is not None:
        check_device("C", addend, cupy.cuda.runtime.getDevice())
    return PreparedGemm(spec, A, B, C, K, alpha, beta, addend)


def _signature(x) -> tuple:
    return (x.data.ptr, x.shape, x.strides, x.dtype.char, x.device.id)


class LastLaunchCache:
    """The launch `prepared` made last, under the key of its call (the configuration, the signatures of
    its arrays and its scalars; None for a call that must not be reused). One entry: a run of calls on
    the same arrays reuses it, and any other call replaces it, so that it holds the arrays of one
    launch only, for as long as that launch may be asked for again."""

    __slots__ = ("key", "launch")

    def __init__(self) -> None:
        self.key, self.launch = None, None

    def get(self, key, make) -> PreparedGemm:
        """The cached launch if `key` (not None) is its key, else make(), cached under `key`."""
        if key is None or self.key != key:
            self.key, self.launch = key, make()
        return self.launch


_LAST_LAUNCH = LastLaunchCache()


def prepared(spec: GemmKernel | WmmaKernel, A, B, C, *, alpha=1, beta=0, addend=None) -> PreparedGemm:
    """prepare(...), or the launch prepared the time before when this call has the same configuration,
    the same arrays and the same scalars (that launch holds the arrays, so their memory cannot have
    been freed and reused); C None always prepares anew, into a new C."""
    arrays = (A, B, C, addend)
    key = (spec, alpha, beta) + tuple(None if x is None else _signature(x) for x in arrays) if C is not None and all(
        x is None or (hasattr(x, "data") and hasattr(x, "device")) for x in arrays) else None
    return _LAST_LAUNCH.get(key, lambda: prepare(spec, A, B, C, alpha=alpha, beta=beta, addend=addend))


def launch(spec: GemmKernel, A, B, C) -> None:
    """C = A @ B with `spec`, checked (once for a run of launches on the same arrays: see prepared)."""
    prepared(spec, A, B, C)()


def run_kernel(key: str, A, B, spec: GemmKernel | None = None):
    """C = A @ B with the kernel `key` of tcgemm.engine.catalog, into a new C. A: (M, K) row-major fp16;
    B: (K, N) column-major fp16 (fp32 kernels: the other way round). `spec` overrides the
    configuration the launcher would pick (e.g. kernel_spec(key).with_config(32, 5))."""
    run = prepare(for_this_gpu(kernel_spec(key)) if spec is None else spec, A, B)
    run()
    return run.C


# ---- the operands and results of every check ----------------------------------------------------

ADDEND_DTYPES = {"float16": "float32", "bfloat16": "float32", "float32": "float32", "int8": "int32"}   # C to add


def random_values(rng, size, dtype: str):
    """Random values of `dtype`, an array of `size` (a length or a shape), from the CuPy generator rng:
    floats uniform in [-1, 1) (drawn in fp32, then rounded; bfloat16 as its bits, tcgemm.engine.bfloat16),
    int8 uniform over all 256 values, int32 uniform in [-2^20, 2^20)."""
    if dtype == "bfloat16":
        return bfloat16.bits_of(random_values(rng, size, "float32"))
    if np.dtype(dtype).kind == "f":
        return (rng.random(size, dtype=np.float32) * 2 - 1).astype(dtype)
    bits = {"int8": 8, "int32": 21}[str(np.dtype(dtype))]
    return rng.integers(-2 ** (bits - 1), 2 ** (bits - 1), size=size, dtype=np.int64).astype(dtype)


def random_operands(M: int, N: int, K: int, seed: int | None = None, dtype: str = "float16",
                    orders: tuple[str, str] | None = None, *, offset: int = 0, addend: bool = False):
    """Random A (M, K) and B (K, N) of input dtype `dtype` (fp16 and fp32 uniform in [-1, 1), so never all
    zeros; int8 uniform over all 256 values), A and B in `orders` ('C' row-major, 'F' column-major; by
    default the orders the kernels of that dtype take: tcgemm.engine.kernel_types.OPERAND_ORDERS), and with `addend`
    a row-major C (M, N) to add, in the output dtype of those inputs (ADDEND_DTYPES; int32 in
    [-2^20, 2^20)): (A, B) or (A, B, C). `offset`: each array a view starting that many elements into an
    allocation of its own (16-byte aligned only where those elements make a multiple of 16 bytes)."""
    rng = _gpu().random.default_rng(seed)
    a_order, b_order = orders or OPERAND_ORDERS[dtype]

    def draw(rows, cols, order, kind):
        return random_values(rng, offset + rows * cols, kind)[offset:].reshape((rows, cols), order=order)

    A, B = draw(M, K, a_order, dtype), draw(K, N, b_order, dtype)
    return (A, B, draw(M, N, "C", ADDEND_DTYPES[dtype])) if addend else (A, B)


def case_operands(case: str, M: int, N: int, K: int, dtype: str = "float16", offset: int = 0,
                  seed: int | None = None):
    """random_operands with a C, A and B in the memory orders of `case` (a key of tcgemm.engine.catalog.WMMA_CASES:
    "A B" is both row-major, "A^T B^T" both column-major)."""
    if case not in WMMA_CASES:
        raise ValueError(f"unknown case {case!r}; the cases are: {', '.join(WMMA_CASES)}")
    return random_operands(M, N, K, seed, dtype, WMMA_CASES[case], offset=offset, addend=True)


def poisoned_output(spec: GemmKernel | WmmaKernel, M: int, N: int):
    """A poisoned (M, N) C in the order `spec` writes it: row-major, or a column-major view (Kernel 5.13)."""
    if getattr(spec, "c_order", "C") == "F":
        return poisoned((N, M), spec.out_dtype).T
    return poisoned((M, N), spec.out_dtype)


def poisoned(shape, dtype):
    """A new GPU array filled with NaN (bfloat16: a NaN's bits), or for an integer dtype with its most
    negative value."""
    if dtype == "bfloat16":
        return _gpu().full(shape, bfloat16.NAN_BITS, dtype=storage_dtype(dtype))
    fill = np.iinfo(dtype).min if np.issubdtype(dtype, np.integer) else np.nan
    return _gpu().full(shape, fill, dtype=dtype)


def reference(A, B, C=None, alpha=1, beta=0):
    """alpha * A @ B + beta * C in more precision than the kernels': float inputs (fp16, fp32) multiplied
    in fp64 (CuPy's fp64 matmul), the product rounded to fp32, then scaled in fp32. An fp32 product would
    not do for fp16 inputs: on a sum that cancels it is off by a few 1e-8 where a kernel can be exact.
    int8 inputs exactly, with int32's wrap-around: A @ B in fp64 (exact: every sum stays below 2^53),
    then alpha * AB + beta * C in int64, reduced mod 2^32. C is read only where beta != 0. uint16 A and B
    are bf16 bit patterns (the engine's bfloat16)."""
    if A.dtype == np.uint16:
        A, B = bfloat16.values_of(A), bfloat16.values_of(B)
    if np.dtype(A.dtype).kind == "i":
        ab = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.int64)
        wide = np.int64(alpha) * ab + (np.int64(beta) * C.astype(np.int64) if beta != 0 else 0)
        return ((wide + 2**31) % 2**32 - 2**31).astype(np.int32)
    ref = alpha * (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)
    return ref + beta * C if beta != 0 else ref


def check_output(out, ref, K: int | None = None, accumulator: str | None = None) -> Check | ExactCheck:
    """A kernel's output against `reference`, on the host: an integer one bit for bit
    (tcgemm.engine.accuracy.compare_exact), a float one under tcgemm.engine.accuracy's tolerance of its
    accumulator, for sums of K terms where K is given (tcgemm.engine.accuracy.tolerance), else the fixed one.
    `accumulator`: "float32" or "float16"; None: that of the output's dtype (HGEMM's fp16 C is summed in
    fp16). A 16-bit output of an fp32 accumulator (Kernel 5.9) is allowed its final rounding too; uint16
    output holds bf16 bits."""
    cupy = _gpu()
    out, ref = cupy.asnumpy(out), cupy.asnumpy(ref)
    if np.dtype(out.dtype).kind == "i":
        return compare_exact(out, ref)
    stored = "bfloat16" if out.dtype == np.uint16 else str(out.dtype)
    if stored == "bfloat16":
        out = bfloat16.values_of(out)
    accumulator = accumulator or ("float16" if stored == "float16" else "float32")
    rounded = stored if accumulator == "float32" and stored != "float32" else None
    return compare_outputs(out, ref, accumulator, K, rounded_to=rounded)
