"""Launch the book's GEMM kernels, through one checked path: `prepare` checks the operands once and
returns a launch that does nothing but launch; `launch` and `gemm` are one-shot uses of it."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from tcgemm.catalog import GEMM_KERNELS, GemmKernel
from tcgemm.hw import peak_for
from tcgemm.plan import MMA_SYNC_SHARE, GpuShape, plan
from tcgemm.validate import check_gemm_operands, check_gemm_shape
from tcgemm.gpu.compile import current_arch, get_function, source_versions
from tcgemm.gpu.device import device_info, require_gpu

K_ALIGN = 8   # fp16 per 16-byte copy: any-shape kernels need rows of a multiple of 8


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
    per configuration, GPU and version of the source: see tcgemm.gpu.compile)."""
    return _kernel_function(spec, current_arch(), source_versions(spec.source))


@lru_cache(maxsize=None)
def _kernel_function(spec: GemmKernel, arch: str, versions: tuple):
    fn = get_function(spec.source, spec.entry, spec.defines)
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
    """`spec` (a planned kernel, Kernel 4.6) with the tile and splits tcgemm.plan picks for M x N x K."""
    chosen = plan(M, N, K, gpu_shape())
    return spec.with_tile(chosen.tile, chosen.splits)


class PreparedGemm:
    """C = A @ B with one kernel configuration, on operands checked once (tcgemm.gpu.gemm.prepare).
    Calling it launches the kernel on the current stream, with the function, grid and arguments
    fetched when it was prepared: no checks, no lookups. A kernel edited since then is not picked
    up: prepare again."""

    __slots__ = ("spec", "A", "B", "C", "M", "N", "K", "_fn", "_grid", "_block", "_args", "_smem", "_reduce")

    def __init__(self, spec: GemmKernel, A, B, C, K: int, kernel_operands=None):
        self.spec, self.A, self.B, self.C = spec, A, B, C
        (self.M, self.N), self.K = C.shape, K
        Ak, Bk = kernel_operands or (A, B)
        self._fn = kernel_function(spec)
        self._grid, self._block, self._smem = spec.grid(self.M, self.N), spec.block, spec.smem_bytes
        out, self._reduce = C, None
        if spec.splits > 1:     # partial C per split into a workspace, then one pass adds them into C
            out = _gpu().empty(spec.splits * self.M * self.N, dtype=np.float32)
            count = self.M * self.N
            self._reduce = (reduce_function(spec), (min(8 * device_info().sm_count, -(-count // REDUCE_THREADS)),), (REDUCE_THREADS,),
                            (out, C, np.int32(count), np.int32(spec.splits)))
        self._args = (Ak, Bk, out, np.int32(self.M), np.int32(self.N), np.int32(Ak.shape[1]))

    def __call__(self) -> None:
        self._fn(self._grid, self._block, self._args, shared_mem=self._smem)
        if self._reduce is not None:
            self._reduce[0](*self._reduce[1:])


class PaddedGemm(PreparedGemm):
    """The padding path of the any-shape kernels, for K not a multiple of K_ALIGN: each call copies
    A and B into zero-padded buffers (allocated once; the zeros add nothing to C), then launches:
    two copies more per call (M*K and K*N elements), and every call reads the current A and B."""

    __slots__ = ("_copies",)

    def __init__(self, spec: GemmKernel, A, B, C, K: int):
        cupy = _gpu()
        (M, _), N = A.shape, B.shape[1]
        Kp = -(-K // K_ALIGN) * K_ALIGN
        Ap = cupy.zeros((M, Kp), dtype=A.dtype)
        Bp = cupy.zeros((Kp, N), dtype=B.dtype, order="F")
        self._copies = ((Ap[:, :K], A), (Bp[:K, :], B))
        super().__init__(spec, A, B, C, K, (Ap, Bp))

    def __call__(self) -> None:
        for padded, operand in self._copies:
            padded[...] = operand
        super().__call__()


def prepare(spec: GemmKernel, A, B, C=None) -> PreparedGemm:
    """Check C = A @ B for the kernel configuration `spec` once (GPU arrays on the current device,
    dtypes, memory orders, shape multiples, 32-bit index limits; C's shape, dtype and order), fetch
    the compiled kernel, and return the launch. A: (M, K), B: (K, N) in the kernel's input dtype and
    orders (tcgemm.catalog); C: (M, N) row-major in its output dtype, or None for a new one filled
    with NaN, so an element the kernel fails to write cannot pass a check."""
    cupy = _gpu()
    M, N, K = check_gemm_operands(spec, A, B, C, device=cupy.cuda.runtime.getDevice())
    if spec.planned:
        spec = planned(spec, M, N, K)
        check_gemm_shape(spec, M, N, K)     # the split's partials must fit 32-bit indices too
    if C is None:
        C = cupy.full((M, N), np.nan, dtype=spec.out_dtype)
    return (PaddedGemm if spec.any_shape and K % K_ALIGN else PreparedGemm)(spec, A, B, C, K)


def _signature(x) -> tuple:
    return (x.data.ptr, x.shape, x.strides, x.dtype.char, x.device.id)


_LAST_LAUNCH: list = [None, None]     # (spec and operand signatures, its prepared launch)


def launch(spec: GemmKernel, A, B, C) -> None:
    """C = A @ B with `spec`, checked. A launch with the same configuration and the same arrays as
    the one before reuses that one's checks and setup (its prepared launch holds the arrays, so the
    memory cannot have been freed and reused); anything else is prepared, i.e. checked, anew."""
    key = (spec, _signature(A), _signature(B), _signature(C)) if all(
        hasattr(x, "data") and hasattr(x, "device") for x in (A, B, C)) else None
    if key is None or _LAST_LAUNCH[0] != key:
        _LAST_LAUNCH[:] = [key, prepare(spec, A, B, C)]
    _LAST_LAUNCH[1]()


def gemm(key: str, A, B, spec: GemmKernel | None = None):
    """C = A @ B with the kernel `key` of tcgemm.catalog, into a new C. A: (M, K) row-major fp16;
    B: (K, N) column-major fp16 (fp32 kernels: the other way round). `spec` overrides the
    configuration the launcher would pick (e.g. kernel_spec(key).with_config(32, 5))."""
    run = prepare(for_this_gpu(kernel_spec(key)) if spec is None else spec, A, B)
    run()
    return run.C
