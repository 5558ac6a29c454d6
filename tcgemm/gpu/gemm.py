"""Launch the book's GEMM kernels, through one checked path: `prepare` checks the operands once and
returns a launch that does nothing but launch; `launch` and `gemm` are one-shot uses of it."""
from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from tcgemm.catalog import ELEMENTS, GEMM_KERNELS, ITEMSIZE, GemmKernel
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


def kernel_function(spec: GemmKernel):
    """The compiled kernel of this configuration, allowed its dynamic shared memory (both done once
    per configuration, GPU and version of the source: see tcgemm.gpu.compile). UnsupportedOnGPUError
    where the kernel needs a newer GPU (Kernel 5.0: sm_90)."""
    return _kernel_function(spec, current_arch(), source_versions(spec.source))


@lru_cache(maxsize=None)
def _kernel_function(spec: GemmKernel, arch: str, versions: tuple):
    if reason := spec.unsupported(arch):
        raise UnsupportedOnGPUError(reason)
    fn = (get_arch_specific_function if spec.arch_specific else get_function)(spec.source, spec.entry, spec.defines)
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


def _aligned_buffer(x, order: str):
    """A zero-filled buffer for x, in x's memory order, with the contiguous dimension rounded up to
    k_align(x) elements, and the view of it that x is copied into."""
    rows, cols = x.shape
    align = k_align(x)
    if order == "C":
        buffer = _gpu().zeros((rows, -(-cols // align) * align), dtype=x.dtype)
        return buffer, buffer[:, :cols]
    buffer = _gpu().zeros((-(-rows // align) * align, cols), dtype=x.dtype, order="F")
    return buffer, buffer[:rows, :]


class PreparedGemm:
    """out = alpha * A @ B + beta * addend with one kernel configuration, on operands checked once
    (tcgemm.gpu.gemm.prepare). Calling it launches the kernel on the current stream, with the function,
    grid and arguments fetched when it was prepared: no checks, no lookups. A kernel edited since then
    is not picked up: prepare again.

    An operand the kernel cannot read where it lies (rows not 16-byte aligned: see _needs_staging) is
    copied, on every call, into a zero-padded buffer allocated here: `staged` names them. A TMA kernel
    (Kernel 5.0) gets the tensor maps of A and B in their place, encoded here once, each in the memory
    order the kernel was compiled for (Kernel 5.7: either), and one of C if it stores C by TMA (5.6)."""

    __slots__ = ("spec", "A", "B", "C", "M", "N", "K", "staged", "_copies", "_launch", "_reduce")

    def __init__(self, spec: GemmKernel, A, B, C, K: int, alpha=1.0, beta=0.0, addend=None):
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

    def __call__(self) -> None:
        for staged, operand in self._copies:
            staged[...] = operand
        self._launch()
        if self._reduce is not None:
            self._reduce[0](*self._reduce[1:])


def poisoned(shape, dtype):
    """A new GPU array filled with NaN, or for an integer dtype with its most negative value."""
    fill = np.iinfo(dtype).min if np.issubdtype(dtype, np.integer) else np.nan
    return _gpu().full(shape, fill, dtype=dtype)


def prepare(spec: GemmKernel, A, B, C=None, *, alpha=1, beta=0, addend=None) -> PreparedGemm:
    """Check C = alpha * A @ B + beta * addend for the kernel configuration `spec` once (GPU arrays on the
    current device, dtypes, memory orders, shape multiples, 32-bit index limits; C's shape, dtype and
    order; alpha, beta and the addend: Kernel 4.7 only), fetch the compiled kernel, and return the launch.
    A: (M, K), B: (K, N) in the kernel's input dtype and orders (tcgemm.catalog); C: (M, N) row-major
    in its output dtype, or None for a new one, `poisoned`, so an element the kernel fails to write
    cannot pass a check."""
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


_LAST_LAUNCH: list = [None, None]     # (spec, operand signatures and scalars; its prepared launch)


def prepared(spec: GemmKernel, A, B, C, *, alpha=1, beta=0, addend=None) -> PreparedGemm:
    """prepare(...), or the launch prepared the time before when this call has the same configuration,
    the same arrays and the same scalars (that launch holds the arrays, so their memory cannot have
    been freed and reused); C None always prepares anew, into a new C."""
    arrays = (A, B, C, addend)
    key = (spec, alpha, beta) + tuple(None if x is None else _signature(x) for x in arrays) if C is not None and all(
        x is None or (hasattr(x, "data") and hasattr(x, "device")) for x in arrays) else None
    if key is None or _LAST_LAUNCH[0] != key:
        _LAST_LAUNCH[:] = [key, prepare(spec, A, B, C, alpha=alpha, beta=beta, addend=addend)]
    return _LAST_LAUNCH[1]


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
