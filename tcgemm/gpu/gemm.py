"""Launch the book's GEMM kernels, the WMMA kernels among them, through one checked path: `prepare`
checks the operands once and returns a launch that does nothing but launch; `launch` and `gemm` are
one-shot uses of it. Every check of a kernel's output uses the operands, the poisoned output, the
reference and the comparison defined here (random_operands, poisoned, reference, check_output)."""
from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from tcgemm.catalog import ELEMENTS, GEMM_KERNELS, ITEMSIZE, OPERAND_ORDERS, WMMA_CASES, GemmKernel, WmmaKernel
from tcgemm.check import Check, ExactCheck, compare, compare_exact
from tcgemm.errors import UnsupportedOnGPUError
from tcgemm.hw import peak_for
from tcgemm.plan import MMA_SYNC_SHARE, GpuShape, plan
from tcgemm.tma import MAP_BYTES, c_map, gemm_maps
from tcgemm.validate import check_addend, check_device, check_gemm_operands, check_gemm_shape, leading_dimension
from tcgemm.gpu.compile import current_arch, get_arch_specific_function, get_function, source_versions
from tcgemm.gpu.device import device_info, require_gpu
from tcgemm.gpu.tma import StructLaunch, encode

def k_align(x) -> int:
    """Elements of x per 16-byte copy (fp16: 8): any-shape kernels need rows of a multiple of this."""
    return 16 // x.itemsize


def kernel_spec(key: str) -> GemmKernel:
    try:
        return GEMM_KERNELS[key]
    except KeyError:
        raise KeyError(f"unknown kernel {key!r}; the kernels are: {', '.join(GEMM_KERNELS)}") from None


_gpu = lru_cache(maxsize=None)(require_gpu)    # cupy, its checks done once per process


def for_this_gpu(spec: GemmKernel) -> GemmKernel:
    """The configuration of `spec` that fits this GPU's shared memory per block, as the driver reports
    it (opt-in maximum). On the book's target architectures that is tcgemm.arch's figure, so the launcher
    picks what tcgemm.catalog.configured picks offline (tests/gpu/test_arch.py checks both)."""
    return _for_smem(spec, _smem_optin(_gpu().cuda.runtime.getDevice()))


@lru_cache(maxsize=None)
def _smem_optin(device: int) -> int:
    return device_info().shared_mem_per_block_optin


@lru_cache(maxsize=None)
def _for_smem(spec: GemmKernel, limit: int) -> GemmKernel:
    return spec.for_smem(limit)


def kernel_function(spec: GemmKernel | WmmaKernel):
    """The compiled kernel of this configuration, allowed its dynamic shared memory (both done once
    per configuration, GPU and version of the source: see tcgemm.gpu.compile). UnsupportedOnGPUError
    where the kernel needs a newer GPU (Kernel 5.0: sm_90)."""
    return _kernel_function(spec, current_arch(), source_versions(spec.source))


@lru_cache(maxsize=None)
def _kernel_function(spec: GemmKernel | WmmaKernel, arch: str, versions: tuple):
    if reason := spec.unsupported(arch):
        raise UnsupportedOnGPUError(reason)
    # A WMMA kernel's macros follow from the memory orders it was configured for (WmmaKernel.defines).
    defines = spec.defines(spec.a_order, spec.b_order) if isinstance(spec, WmmaKernel) else spec.defines
    fn = (get_arch_specific_function if spec.arch_specific else get_function)(spec.source, spec.entry, defines)
    if spec.smem_bytes > 48 * 1024 and fn.max_dynamic_shared_size_bytes < spec.smem_bytes:
        fn.max_dynamic_shared_size_bytes = spec.smem_bytes
    return fn


REDUCE_THREADS = 256


def reduce_function(spec: GemmKernel):
    """The kernel that adds the partial C of a split-K launch (kernels/k4.6_tile_plans.cu)."""
    return get_function(spec.source, "reduce_splits", spec.defines)


@lru_cache(maxsize=None)
def gpu_shape() -> GpuShape:
    """This GPU as tcgemm.plan's model sees it: SMs, shared memory, registers, the mma.sync ceiling
    (datasheet x MMA_SYNC_SHARE) and the DRAM bandwidth (2 transfers per memory clock x bus width)."""
    info = device_info()
    attrs = _gpu().cuda.Device().attributes
    peak = peak_for(info.name)
    ceiling = (peak.tflops if peak else 100.0) * MMA_SYNC_SHARE.get(info.arch, 1.0)
    dram = 2 * attrs["MemoryClockRate"] * 1e3 * attrs["GlobalMemoryBusWidth"] / 8 / 1e9
    return GpuShape(info.name, info.sm_count, attrs["MaxSharedMemoryPerMultiprocessor"],
                    info.shared_mem_per_block_optin, attrs["MaxRegistersPerMultiprocessor"],
                    attrs["MaxThreadsPerMultiProcessor"], ceiling, dram)


def planned(spec: GemmKernel, M: int, N: int, K: int) -> GemmKernel:
    """`spec` (a planned kernel, Kernel 4.6) with the tile and splits tcgemm.plan picks for M x N x K.
    The plan counts K in fp16: another input type (Kernel D1) is planned as the fp16 problem of the same
    bytes, which has as many mma instructions, at the same rate per instruction (book/data_types.ipynb),
    among the tiles its build keeps in registers on this GPU (tcgemm.catalog.Element.max_warp_tile)."""
    limit = ELEMENTS[spec.element].max_warp_tile(current_arch()) if spec.element else None
    chosen = plan(M, N, -(-K * ITEMSIZE[spec.in_dtype] // ITEMSIZE["float16"]), gpu_shape(), limit)
    return spec.with_tile(chosen.tile, chosen.splits)


def _needs_staging(spec: GemmKernel, x, order: str, K: int) -> bool:
    """Whether operand x must be copied into an aligned buffer before the kernel can read it: its
    16-byte copies need rows of a multiple of k_align(x) elements that start 16-byte aligned (Kernel 4.7
    reads the edges of M, N and K itself; Kernels 4.5, 4.6 and D1 need K a multiple of it; the other
    kernels refuse an unaligned operand, in tcgemm.validate)."""
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


class PreparedGemm:
    """out = alpha * A @ B + beta * addend with one kernel configuration (of GEMM_KERNELS, or a WMMA
    kernel compiled for the memory orders of A and B), on operands checked once (tcgemm.gpu.gemm.prepare).
    Calling it launches the kernel on the current stream, with the function, grid and arguments fetched
    when it was prepared: no checks, no lookups. A kernel edited since then is not picked up: prepare again.

    An operand the kernel cannot read where it lies (rows not 16-byte aligned: see _needs_staging) is
    copied, on every call, into a zero-padded buffer allocated here: `staged` names them. A TMA kernel
    (Kernel 5.0) gets the tensor maps of A and B in their place, encoded here once, each in the memory
    order the kernel was compiled for (Kernel 5.7: either), and one of C if it stores C by TMA (5.6).

    What is set up here on the GPU (the NaN fill of a new C, the zeroed staging buffers, memory from
    CuPy's pool) is queued on the stream that is current here; the launch may come on another, one that
    nothing orders after it (a non-blocking stream). So an event is recorded after the set-up, and a
    call waits for it on its own stream (cudaStreamWaitEvent) until the event is seen done; from then
    on a call launches and nothing else."""

    __slots__ = ("spec", "A", "B", "C", "M", "N", "K", "staged", "_copies", "_launch", "_reduce", "_ready")

    def __init__(self, spec: GemmKernel | WmmaKernel, A, B, C, K: int, alpha=1.0, beta=0.0, addend=None):
        self.spec, self.A, self.B, self.C = spec, A, B, C
        (self.M, self.N), self.K = C.shape, K
        operands, self._copies, self.staged = [], [], ()
        for name, x, order in (("A", A, spec.a_order), ("B", B, spec.b_order)):
            if _needs_staging(spec, x, order, K):
                buffer, view = _aligned_buffer(x, order)
                self._copies.append((view, x))
                self.staged += (name,)
                x = buffer
            operands.append(x)
        Ak, Bk = operands
        fn = kernel_function(spec)
        out, self._reduce, count = C, None, self.M * self.N
        split = spec.splits > 1
        scaling = (np.float32(alpha), np.float32(beta), C if addend is None else addend)
        if split:     # partial C per split into a workspace, then one pass adds them into C
            out = _gpu().empty(spec.splits * count, dtype=spec.out_dtype)
            self._reduce = (reduce_function(spec), (min(8 * device_info().sm_count, -(-count // REDUCE_THREADS)),),
                            (REDUCE_THREADS,), (out, C, np.int32(count), np.int32(spec.splits)) +
                            (scaling if spec.blas_signature else ()))
        if spec.blas_signature:
            lda, ldb = leading_dimension(Ak, spec.a_order), leading_dimension(Bk, spec.b_order)
            args = (Ak, Bk, out, np.int32(self.M), np.int32(self.N), np.int32(K), np.int32(lda),
                    np.int32(ldb)) + ((np.float32(1), np.float32(0), out) if split else scaling)
        elif isinstance(spec, WmmaKernel):      # (A, B, C to add, D, M, N, K, alpha, beta), scalars in D's type
            scalar = np.dtype(spec.out_dtype).type
            args = (Ak, Bk, scaling[2], C, np.int32(self.M), np.int32(self.N), np.int32(K), scalar(alpha),
                    scalar(beta))
        else:
            args = (Ak, Bk, out, np.int32(self.M), np.int32(self.N), np.int32(Ak.shape[1]))
        grid = spec.grid(self.M, self.N, device_info().sm_count)
        if spec.tma:     # the maps span the operands as the kernel reads them (padded where staged)
            tile_maps = gemm_maps(spec, self.M, self.N, K, leading_dimension(Ak, spec.a_order),
                                  leading_dimension(Bk, spec.b_order))
            maps = tuple(encode(m, x.data.ptr) for m, x in zip(tile_maps, (Ak, Bk)))
            if spec.tma_store:   # no map where TMA cannot address C: the kernel stores it itself
                output = c_map(spec, self.M, self.N)
                maps += (np.zeros(MAP_BYTES, np.uint8) if output is None else encode(output, C.data.ptr),)
            self._launch = StructLaunch(fn, grid, spec.block, maps + args[2:], spec.smem_bytes)
        else:
            self._launch = partial(fn, grid, spec.block, args, shared_mem=spec.smem_bytes)
        self._ready = _gpu().cuda.Event(block=False, disable_timing=True)
        self._ready.record()       # on the current stream, after everything queued above

    def _wait_for_set_up(self) -> None:
        """Order this call's stream after the set-up (the event's stream, or any other), once it is done
        never again."""
        if self._ready.done:
            self._ready = None
        else:
            _gpu().cuda.get_current_stream().wait_event(self._ready)

    def __call__(self) -> None:
        if self._ready is not None:
            self._wait_for_set_up()
        for staged, operand in self._copies:
            staged[...] = operand
        self._launch()
        if self._reduce is not None:
            self._reduce[0](*self._reduce[1:])


def prepare(spec: GemmKernel | WmmaKernel, A, B, C=None, *, alpha=1, beta=0, addend=None) -> PreparedGemm:
    """Check C = alpha * A @ B + beta * addend for the kernel configuration `spec` once (GPU arrays on the
    current device, dtypes, memory orders, alignment, shape multiples, 32-bit index limits; C's shape,
    dtype and order; alpha, beta and the addend: Kernel 4.7 and the WMMA kernels only), fetch the compiled
    kernel, and return the launch. A: (M, K), B: (K, N) in the kernel's input dtype and orders
    (tcgemm.catalog; a WMMA kernel: with_orders); C: (M, N) row-major in its output dtype, or None for a
    new one, `poisoned`, so an element the kernel fails to write cannot pass a check."""
    cupy = _gpu()
    M, N, K = check_gemm_operands(spec, A, B, C, device=cupy.cuda.runtime.getDevice())
    if spec.planned:
        spec = planned(spec, M, N, K)
        check_gemm_shape(spec, M, N, K)     # the split's partials must fit 32-bit indices too
    if C is None:
        C = poisoned((M, N), spec.out_dtype)
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


def gemm(key: str, A, B, spec: GemmKernel | None = None):
    """C = A @ B with the kernel `key` of tcgemm.catalog, into a new C. A: (M, K) row-major fp16;
    B: (K, N) column-major fp16 (fp32 kernels: the other way round). `spec` overrides the
    configuration the launcher would pick (e.g. kernel_spec(key).with_config(32, 5))."""
    run = prepare(for_this_gpu(kernel_spec(key)) if spec is None else spec, A, B)
    run()
    return run.C


# ---- the operands and results of every check ----------------------------------------------------

ADDEND_DTYPES = {"float16": "float32", "float32": "float32", "int8": "int32"}   # C to add, by input dtype


def random_values(rng, size, dtype: str):
    """Random values of `dtype`, an array of `size` (a length or a shape), from the CuPy generator rng:
    floats uniform in [-1, 1) (drawn in fp32, then rounded), int8 uniform over all 256 values, int32
    uniform in [-2^20, 2^20)."""
    if np.dtype(dtype).kind == "f":
        return (rng.random(size, dtype=np.float32) * 2 - 1).astype(dtype)
    bits = {"int8": 8, "int32": 21}[str(np.dtype(dtype))]
    return rng.integers(-2 ** (bits - 1), 2 ** (bits - 1), size=size, dtype=np.int64).astype(dtype)


def random_operands(M: int, N: int, K: int, seed: int | None = None, dtype: str = "float16",
                    orders: tuple[str, str] | None = None, *, offset: int = 0, addend: bool = False):
    """Random A (M, K) and B (K, N) of input dtype `dtype` (fp16 and fp32 uniform in [-1, 1), so never all
    zeros; int8 uniform over all 256 values), A and B in `orders` ('C' row-major, 'F' column-major; by
    default the orders the kernels of that dtype take: tcgemm.catalog.OPERAND_ORDERS), and with `addend`
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
    """random_operands with a C, A and B in the memory orders of `case` (a key of tcgemm.catalog.WMMA_CASES:
    "A B" is both row-major, "A^T B^T" both column-major)."""
    if case not in WMMA_CASES:
        raise ValueError(f"unknown case {case!r}; the cases are: {', '.join(WMMA_CASES)}")
    return random_operands(M, N, K, seed, dtype, WMMA_CASES[case], offset=offset, addend=True)


def poisoned(shape, dtype):
    """A new GPU array filled with NaN, or for an integer dtype with its most negative value."""
    fill = np.iinfo(dtype).min if np.issubdtype(dtype, np.integer) else np.nan
    return _gpu().full(shape, fill, dtype=dtype)


def reference(A, B, C=None, alpha=1, beta=0):
    """alpha * A @ B + beta * C in more precision than the kernels': fp16 inputs upcast to fp32 (CuPy's
    fp32 matmul; TF32 is off by default), fp32 inputs to fp64, the product rounded to fp32, then scaled
    in fp32; int8 inputs exactly, with int32's wrap-around: A @ B in fp64 (exact: every sum stays below
    2^53), then alpha * AB + beta * C in int64, reduced mod 2^32. C is read only where beta != 0."""
    if np.dtype(A.dtype).kind == "i":
        ab = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.int64)
        wide = np.int64(alpha) * ab + (np.int64(beta) * C.astype(np.int64) if beta != 0 else 0)
        return ((wide + 2**31) % 2**32 - 2**31).astype(np.int32)
    wide = np.float64 if A.dtype == np.float32 else np.float32
    ref = alpha * (A.astype(wide) @ B.astype(wide)).astype(np.float32)
    return ref + beta * C if beta != 0 else ref


def check_output(out, ref, K: int | None = None) -> Check | ExactCheck:
    """A kernel's output against `reference`, on the host: an integer one bit for bit
    (tcgemm.check.compare_exact), a float one under tcgemm.check's tolerance of its precision (fp32 or
    fp16 accumulation), for sums of K terms where K is given (tcgemm.check.tolerance), else the fixed one."""
    cupy = _gpu()
    out, ref = cupy.asnumpy(out), cupy.asnumpy(ref)
    if np.dtype(out.dtype).kind == "i":
        return compare_exact(out, ref)
    return compare(out, ref, str(out.dtype), K)
