"""The kernels of the book, as data: where each lives, how it is launched, what it accepts.

Pure module: the launch wrappers (tcgemm.gpu), the SASS tests and the bench all read this one table.
Operand convention of the Tensor Core kernels (in_dtype float16): C = A @ B with
  A: (M, K) float16, row-major (C-contiguous),
  B: (K, N) float16, column-major (Fortran-contiguous), i.e. B.T is a C-contiguous (N, K) array,
  C: (M, N) row-major, float32 (or float16 where out_dtype says so).
The CUDA-core SGEMM kernels (in_dtype float32) read both operands along K the same way instead, as
the Maxas SGEMM does: A (M, K) column-major (A.T is a C-contiguous (K, M) array), B (K, N) row-major.
The C signature is  extern "C" __global__ void entry(const IN *A, const IN *B, OUT *C, int M, int N, int K)
Kernel 4.7 (`either_order`) takes A and B in either memory order, compiled in per case (`with_orders`),
and has the signature  (A, B, C, M, N, K, lda, ldb, alpha, beta, C_in): D = alpha * A @ B + beta * C_in
(`blas_signature`). Kernel 5.7 (`either_order` and `tma`) takes either order with the TMA signature.
Kernel 5.0 (`tma`) takes tensor maps of A and B (tcgemm.tma, 128 bytes each) in their place:
(const __grid_constant__ TensorMap a_map, const __grid_constant__ TensorMap b_map, C, M, N, K).
Kernel D1 takes every input type of mma.sync (ELEMENTS), compiled in per type (`with_element`), with
A row-major and B column-major whatever the type; bf16 and fp8 arrays hold the values' bit patterns.

Pipelined kernels are compiled with -DN_STAGES (and -DBK when their stages live in dynamic shared
memory); `configs` lists their (tile_k, stages) choices, fastest first, and `for_smem` picks the
first that fits a GPU's shared memory per block (`configured`: on a target architecture of
tcgemm.arch). `switches` lists other -D macros a kernel accepts (each 0 by default);
`with_switches` turns them on for one variant, e.g. to measure an alternative.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from tcgemm.arch import TARGET_ARCHS, arch_limits, arch_specific_target
from tcgemm.errors import OperandError
from tcgemm.fragments.layouts import MMA_VARIANTS, min_sm, variant_identifier


# Memory order ("C" row-major, "F" column-major) of A and of B, by input dtype.
OPERAND_ORDERS = {"float16": ("C", "F"), "float32": ("F", "C")}
ITEMSIZE = {"float16": 2, "float32": 4, "uint16": 2, "int8": 1, "uint8": 1}


@dataclass(frozen=True)
class Element:
    """An input type of Kernel D1: its mma.sync variant, how it is compiled in, how the host holds it."""
    name: str                # the book's name
    code: int                # -DELEMENT in kernels/d1_data_types.cu
    variant: str             # its mma.sync variant, a key of tcgemm.fragments.layouts.MMA_VARIANTS
    dtype: str               # of A and B: the values (fp16, tf32 as fp32, int8) or their bits (bf16, fp8)
    out_dtype: str           # of C, and of the accumulators
    warp_tile_limits: tuple[tuple[str, int], ...] = ()   # (arch, most elements of C per warp that build
                                                          # keeps in registers): planned tiles there stay within

    @property
    def ptx(self) -> str:
        """The PTX name of the type: f16, bf16, tf32, s8, e4m3, e5m2."""
        return MMA_VARIANTS[self.variant][1]

    @property
    def archs(self) -> tuple[str, ...]:
        """The target architectures whose mma.sync takes the type (fp8: sm_89 on)."""
        return tuple(a for a in TARGET_ARCHS if int(a[3:]) >= min_sm(self.variant))

    def max_warp_tile(self, arch: str) -> int | None:
        """The most elements of C per warp Kernel D1 may compute with this type on `arch`; None: any tile."""
        return dict(self.warp_tile_limits).get(arch)


# sm_90 has no fp8 mma.sync instruction: ptxas converts each fragment to fp16 (F2FP) and runs HMMA.16816.F32
# from a zero accumulator, adding C after (book/data_types.ipynb), which needs registers: Kernel D1's 64 x 64
# warp tiles spill there (and the 32 x 64 ones a few), its 32 x 32 ones do not.
FP8_WARP_TILE_LIMITS = (("sm_90", 32 * 32),)


ELEMENTS = {e.name: e for e in (
    Element("fp16", 0, "m16n8k16.f32", "float16", "float32"),
    Element("bf16", 1, "m16n8k16.bf16.f32", "uint16", "float32"),
    Element("tf32", 2, "m16n8k8.tf32.f32", "float32", "float32"),
    Element("int8", 3, "m16n8k32.s32", "int8", "int32"),
    Element("e4m3", 4, "m16n8k32.e4m3.f32", "uint8", "float32", FP8_WARP_TILE_LIMITS),
    Element("e5m2", 5, "m16n8k32.e5m2.f32", "uint8", "float32", FP8_WARP_TILE_LIMITS),
)}
ORDER_NAMES = {"C": "row-major", "F": "column-major"}


@dataclass(frozen=True)
class GemmKernel:
    key: str                 # the kernel's one name: CLI, bench table, file kernels/<key>_<entry>.cu
    title: str               # the name the book uses ("Kernel 4.0: ..."), starting with the key's label
    entry: str               # extern "C" function name
    block: tuple[int, int, int]
    tile_m: int              # M must be a multiple of this (one block computes tile_m x tile_n)
    tile_n: int
    tile_k: int              # K must be a multiple of this
    out_dtype: str = "float32"
    sass: tuple[str, ...] = ()   # instructions the book claims are in the compiled kernel
    stages: int = 0              # cp.async ring-buffer depth (-DN_STAGES); 0: no pipeline
    dynamic_smem: bool = False   # stages in dynamic shared memory, sized by tile_k (-DBK) and stages
    configs: tuple[tuple[int, int], ...] = ()   # (tile_k, stages) choices, fastest first
    any_shape: bool = False      # takes any M, N and any K that is a multiple of 8 (else padded)
    in_dtype: str = "float16"    # A and B; their memory orders follow from it (OPERAND_ORDERS)
    switches: tuple[tuple[str, str], ...] = ()   # (macro, what setting it to 1 does)
    on: tuple[str, ...] = ()     # the switches set to 1 in this variant
    warps: tuple[int, int] = ()  # warps along M and N, compiled in with the tile (-DBM -DBN -DWARPS_M
                                 # -DWARPS_N) by kernels whose tile is a macro (Kernel 4.6); () otherwise
    splits: int = 1              # blocks along K (gridDim.z) whose partial C are added by reduce_splits
    planned: bool = False        # the launcher picks tile and splits per problem (tcgemm.plan)
    either_order: bool = False   # A and B in either memory order (compiled in: -DA_COL_MAJOR -DB_COL_MAJOR),
                                 # with leading dimensions, alpha, beta and a C to add (Kernel 4.7)
    orders: tuple[str, ...] = () # the memory orders (A, B) of this variant ('C' row-, 'F' column-major);
                                 # () for OPERAND_ORDERS'
    switch_blocks: tuple[tuple[str, tuple[int, int, int]], ...] = ()   # (switch, block it launches with)
    in_bench: bool = True        # timed by `python -m tcgemm bench` by default (not the ablation kernel,
                                 # whose default build is Kernel 4.4 again)
    tma: bool = False            # copies by TMA: takes tensor maps of A and B (tcgemm.tma) in their place,
                                 # and TMA_SMEM_ALIGN bytes of shared memory more to align its stages
    archs: tuple[str, ...] = TARGET_ARCHS   # the target architectures it compiles for and runs on
    element: str = ""            # the input type compiled in (-DELEMENT), a key of ELEMENTS: Kernel D1 only
    arch_specific: bool = False  # built for the architecture-specific target (sm_90a: wgmma, setmaxnreg)
    persistent: bool = False     # one block per SM (per `cluster` SMs, a cluster) looping over the tiles
    cluster: int = 1             # blocks per thread-block cluster, along M; they share B's tile (multicast)
    tma_store: bool = False      # stores C by TMA through shared memory: takes a tensor map of C after those
                                 # of A and B, and TMA_STORE_SMEM bytes more (Kernel 5.6)

    @property
    def source(self) -> str:
        """The file in kernels/: the key, then the entry point, so a new step renames no file."""
        return f"{self.key}_{self.entry}.cu"

    @property
    def short_title(self) -> str:
        """The title's name part, for narrow tables: 'Kernel 5.8'."""
        return self.title.split(":")[0]

    @property
    def a_order(self) -> str:
        return (self.orders or (MMA_ORDERS if self.element else OPERAND_ORDERS[self.in_dtype]))[0]

    @property
    def b_order(self) -> str:
        return (self.orders or (MMA_ORDERS if self.element else OPERAND_ORDERS[self.in_dtype]))[1]

    def mn_major(self, operand: str) -> bool:
        """Whether operand 'A' or 'B' is MN-major here, i.e. contiguous along M (A column-major) or N
        (B row-major) instead of along K (mma's and wgmma's native order)."""
        if operand not in ("A", "B"):
            raise ValueError(f"operand must be 'A' or 'B', got {operand!r}")
        return (self.a_order == "F") if operand == "A" else (self.b_order == "C")

    @property
    def blas_signature(self) -> bool:
        """Takes leading dimensions, alpha, beta and a C to add (Kernel 4.7's signature); a TMA kernel
        takes the tensor maps instead, whichever memory orders it reads."""
        return self.either_order and not self.tma

    @property
    def scaled(self) -> bool:
        """Computes alpha * A @ B + beta * C (Kernel 4.7; the WMMA kernels too): tcgemm.validate refuses
        alpha and beta other than 1 and 0 for the rest."""
        return self.blas_signature

    # Where A and B must start (tcgemm.validate), but in an any-shape kernel, whose launcher copies an
    # unaligned operand into an aligned buffer: the kernels copy them in 16-byte chunks. C: anywhere.
    alignment = 16
    alignment_reason = "copies it in 16-byte chunks"
    aligned_c = False

    def grid(self, M: int, N: int, sm_count: int | None = None) -> tuple[int, int, int]:
        """Blocks along N, M and the K splits; a persistent kernel: as many blocks as SMs (`sm_count`),
        in whole clusters, and no more than there are tiles."""
        if not self.persistent:
            return (-(-N // self.tile_n), -(-M // self.tile_m), self.splits)
        if sm_count is None:
            raise ValueError(f"{self.title} is persistent: its grid needs the GPU's SM count")
        return (min(sm_count // self.cluster, self.cluster_tiles(M, N)) * self.cluster, 1, 1)

    def cluster_tiles(self, M: int, N: int) -> int:
        """Output tiles of a cluster's size (tile pairs for clusters of two) that cover M x N."""
        return -(-M // (self.tile_m * self.cluster)) * -(-N // self.tile_n)

    @property
    def flop_per_global_byte(self) -> float:
        """FLOP per byte of A and B one block copies from global memory: each K step brings a
        tile_m x tile_k slice of A and a tile_k x tile_n slice of B for 2 tile_m tile_n tile_k FLOP."""
        return 2 * self.tile_m * self.tile_n / (ITEMSIZE[self.in_dtype] * (self.tile_m + self.tile_n))

    @property
    def smem_bytes(self) -> int:
        """Dynamic shared memory per block: every stage of the A and B tiles."""
        tiles = ITEMSIZE[self.in_dtype] * (self.tile_m + self.tile_n) * self.tile_k
        extra = (TMA_SMEM_ALIGN if self.tma else 0) + (TMA_STORE_SMEM if self.tma_store else 0)
        return tiles * self.stages + extra if self.dynamic_smem else 0

    def unsupported(self, arch: str) -> str | None:
        """None when the kernel runs on `arch`; else one line why not."""
        if arch in self.archs:
            return None
        return f"{self.typed_title} needs {' or '.join(self.archs)} (this GPU is {arch})"

    @property
    def typed_title(self) -> str:
        """The title, with the input type compiled in where the kernel takes several (Kernel D1)."""
        return f"{self.title} ({self.element} inputs)" if self.element else self.title

    @property
    def defines(self) -> tuple[tuple[str, int], ...]:
        """The -D macros this variant is compiled with."""
        tile = (("BM", self.tile_m), ("BN", self.tile_n), ("WARPS_M", self.warps[0]),
                ("WARPS_N", self.warps[1])) if self.warps else ()
        orders = (("A_COL_MAJOR", int(self.a_order == "F")), ("B_COL_MAJOR", int(self.b_order == "F"))) \
            if self.orders else ()
        return tile + ((("BK", self.tile_k),) if self.dynamic_smem else ()) + \
               ((("N_STAGES", self.stages),) if self.stages else ()) + orders + tuple((name, 1) for name in self.on) + \
               ((("ELEMENT", ELEMENTS[self.element].code),) if self.element else ())

    def with_orders(self, a_order: str, b_order: str) -> "GemmKernel":
        """This kernel compiled for A and B in these memory orders ('C' row-major, 'F' column-major)."""
        if not self.either_order:
            raise ValueError(f"{self.title} reads A {self.a_order}- and B {self.b_order}-ordered only "
                             "('C' row-major, 'F' column-major)")
        for name, order in (("A", a_order), ("B", b_order)):
            if order not in ("C", "F"):
                raise ValueError(f"{name}'s memory order must be 'C' (row-major) or 'F' (column-major), got {order!r}")
        return replace(self, orders=() if (a_order, b_order) == OPERAND_ORDERS[self.in_dtype] else (a_order, b_order))

    def with_tile(self, tile, splits: int = 1) -> "GemmKernel":
        """This kernel compiled for a tcgemm.plan.TileConfig, with K split `splits` ways. The tile's BK
        counts fp16 (tile rows of 2 BK bytes); another input type keeps the bytes."""
        if not self.warps:
            raise ValueError(f"{self.title} fixes its tile in its source")
        if splits < 1:
            raise ValueError(f"splits must be at least 1, got {splits}")
        tile_k = tile.bk * ITEMSIZE["float16"] // ITEMSIZE[self.in_dtype]
        return replace(self, tile_m=tile.bm, tile_n=tile.bn, tile_k=tile_k, stages=tile.stages,
                       block=(tile.threads, 1, 1), warps=(tile.warps_m, tile.warps_n), splits=splits,
                       planned=False)

    def with_element(self, name: str) -> "GemmKernel":
        """This kernel compiled for input type `name` (a key of ELEMENTS: Kernel D1 only), its tile rows
        and pipeline configurations keeping their bytes."""
        if not self.element:
            raise ValueError(f"{self.title} takes {self.in_dtype} inputs only; Kernel D1 (key d1) takes "
                             f"each of {', '.join(ELEMENTS)}")
        if name not in ELEMENTS:
            raise ValueError(f"unknown input type {name!r}; {self.title} takes {', '.join(ELEMENTS)}")
        e = ELEMENTS[name]
        rescale = lambda k: k * ITEMSIZE[self.in_dtype] // ITEMSIZE[e.dtype]
        return replace(self, element=name, in_dtype=e.dtype, out_dtype=e.out_dtype, archs=e.archs,
                       tile_k=rescale(self.tile_k), configs=tuple((rescale(k), s) for k, s in self.configs))

    def with_switches(self, *names: str) -> "GemmKernel":
        known = [name for name, _ in self.switches]
        unknown = [n for n in names if n not in known]
        if unknown:
            known = ", ".join(known) or "none"
            raise ValueError(f"{self.title} has no switch {unknown[0]!r} (its switches: {known})")
        if not self.switch_blocks:
            return replace(self, on=tuple(names))
        base = GEMM_KERNELS[self.key].block
        return replace(self, on=tuple(names), block=next((b for n, b in self.switch_blocks if n in names), base))

    def with_config(self, tile_k: int, stages: int) -> "GemmKernel":
        if not self.stages:
            raise ValueError(f"{self.title} has no cp.async pipeline to configure")
        if tile_k != self.tile_k and not self.dynamic_smem:
            raise ValueError(f"{self.title} fixes tile_k = {self.tile_k} in its source")
        if stages < 2:
            raise ValueError(f"a ring buffer needs at least 2 stages, got {stages}")
        return replace(self, tile_k=tile_k, stages=stages)

    def for_smem(self, limit: int) -> "GemmKernel":
        """The first of `configs` whose shared memory fits `limit` bytes per block (self if none listed)."""
        if not self.configs:
            return self
        for tile_k, stages in self.configs:
            variant = self.with_config(tile_k, stages)
            if variant.smem_bytes <= limit:
                return variant
        smallest = min(self.with_config(*c).smem_bytes for c in self.configs)
        raise OperandError(f"{self.title} needs {smallest // 1024} KB of shared memory per block; "
                           f"this GPU allows {limit // 1024} KB")

    @property
    def variant(self) -> str:
        """A short name of the configuration, e.g. 'BK=64, 4 stages'."""
        if self.planned:
            return "tile planned per problem"
        parts = ([f"{self.tile_m}x{self.tile_n}"] if self.warps else []) + \
                ([f"BK={self.tile_k}"] if self.dynamic_smem else []) + \
                ([f"{self.stages} stages"] if self.stages else []) + \
                ([f"K split {self.splits} ways"] if self.splits > 1 else []) + \
                ([f"A {ORDER_NAMES[self.a_order]}, B {ORDER_NAMES[self.b_order]}"] if self.orders else []) + \
                list(self.on) + ([self.element] if self.element else [])
        return ", ".join(parts)

    @property
    def threads(self) -> int:
        x, y, z = self.block
        return x * y * z


@dataclass(frozen=True)
class ProbeKernel:
    key: str                 # its one name: the file is kernels/probe_<key>.cu
    entries: tuple[str, ...]
    sass: tuple[str, ...]

    @property
    def source(self) -> str:
        return f"probe_{self.key}.cu"


# Shared memory a TMA kernel allocates beyond its stages, to start them on a 1024-byte boundary: TMA's
# swizzle XORs bits 4-9 of the shared address, so a swizzled tile must start where the pattern starts.
TMA_SMEM_ALIGN = 1024
# Kernel 5.6's buffers of C: two TMA boxes of 64 x 32 fp32 per consumer warpgroup.
TMA_STORE_SMEM = 2 * 2 * 64 * 32 * 4
# (tile_k, stages) of the 128 x 256 kernels, fastest first on the H100: 192 KB fits sm_90 only,
# 144 KB fits sm_80 too, 96 KB fits every target (sm_86 and sm_89 allow 99 KB per block).
BIG_TILE_CONFIGS = ((64, 4), (64, 3), (32, 4))
WGMMA_CONFIGS = ((64, 4), (64, 3))   # (tile_k, stages) of Kernels 5.1-5.5: a tile row is one 128-byte swizzle row

# Kernels 5.1-5.5: TMA copies into the 128-byte swizzle and wgmma m64n256k16 from shared memory, 128 x 256
# tiles, built for sm_90a (book/hopper.ipynb). WGMMA_SASS: what every one of them compiles to; TMA_WGMMA_SASS:
# all of it but the HGMMA's shape, which Kernel 5.8's smaller tiles change.
TMA_WGMMA_SASS = ("UTMALDG.2D", "SYNCS.PHASECHK.TRANS64", "WARPGROUP.DEPBAR.LE")
WGMMA_SASS = ("HGMMA.64x256x16.F32",) + TMA_WGMMA_SASS
_HOPPER = dict(tile_m=128, tile_n=256, tile_k=64, stages=4, dynamic_smem=True, configs=WGMMA_CONFIGS, tma=True,
               archs=("sm_90",), arch_specific=True)
# Kernel 5.8: each consumer warpgroup its own 128 x 128 tile, two wgmma m64n128k16 per k16 step; a stage of
# 32 KB, so 6 fit in 227 KB beside the buffers of C (7 would not).
PING_PONG_CONFIGS = ((64, 6), (64, 5))
# The measurement switches of Kernels 5.6 to 5.8: the main loop without the stores of C, or with half of
# them; the tile timeline of tcgemm.gpu.timeline (kernels/trace.cuh).
STORE_SWITCH = ("SKIP_STORE", "C is not stored (wrong result: a measurement only)")
HALF_STORE_SWITCH = ("HALF_STORE", "only the blocks of odd clusters store C (wrong result: a measurement only)")
TRACE_SWITCH = ("TRACE", "one thread per block stamps the global timer and its SM's clock counter at each "
                "tile's boundaries (tcgemm.gpu.timeline)")
TILE_SWITCHES = (STORE_SWITCH, HALF_STORE_SWITCH, TRACE_SWITCH)
HOPPER_KERNELS = (
    GemmKernel(key="k5.1", title="Kernel 5.1: TMA and wgmma", entry="wgmma_tiles", block=(256, 1, 1),
               sass=WGMMA_SASS + ("STG.E.64",), **_HOPPER),
    GemmKernel(key="k5.2", title="Kernel 5.2: a producer warpgroup", entry="warp_specialised", block=(384, 1, 1),
               sass=WGMMA_SASS + ("USETMAXREG.DEALLOC.CTAPOOL",), **_HOPPER),
    GemmKernel(key="k5.3", title="Kernel 5.3: one wgmma group in flight", entry="one_group_in_flight",
               block=(384, 1, 1), sass=WGMMA_SASS + ("USETMAXREG.DEALLOC.CTAPOOL",), **_HOPPER),
    GemmKernel(key="k5.4", title="Kernel 5.4: persistent, any shape", entry="persistent", block=(384, 1, 1),
               any_shape=True, persistent=True, sass=WGMMA_SASS + ("USETMAXREG.DEALLOC.CTAPOOL",), **_HOPPER),
    GemmKernel(key="k5.5", title="Kernel 5.5: clusters of two, B multicast", entry="cluster_multicast",
               block=(384, 1, 1), any_shape=True, persistent=True, cluster=2,
               sass=WGMMA_SASS + ("UTMALDG.2D.MULTICAST", "UCGABAR_ARV"), **_HOPPER),
    GemmKernel(key="k5.6", title="Kernel 5.6: C stored by TMA", entry="tma_store", block=(384, 1, 1),
               any_shape=True, persistent=True, cluster=2, tma_store=True, switches=TILE_SWITCHES,
               sass=WGMMA_SASS + ("UTMALDG.2D.MULTICAST", "UTMASTG.2D", "STS.64"), **_HOPPER),
    GemmKernel(key="k5.7", title="Kernel 5.7: A and B in either memory order, by TMA and wgmma",
               entry="operand_orders", block=(384, 1, 1), any_shape=True, persistent=True, cluster=2,
               either_order=True, tma_store=True, switches=TILE_SWITCHES,
               sass=WGMMA_SASS + ("UTMALDG.2D.MULTICAST", "UTMASTG.2D"), **_HOPPER),
    GemmKernel(key="k5.8", title="Kernel 5.8: ping-pong consumers", entry="ping_pong", block=(384, 1, 1),
               any_shape=True, persistent=True, cluster=2, either_order=True, tma_store=True, switches=TILE_SWITCHES,
               sass=("HGMMA.64x128x16.F32",) + TMA_WGMMA_SASS + ("UTMALDG.2D.MULTICAST", "UTMASTG.2D", "BAR.ARV"),
               **{**_HOPPER, "tile_n": 128, "stages": 6, "configs": PING_PONG_CONFIGS}),
)
# What Kernel 5.7's HGMMA reads transposed (MN-major, wgmma's imm-trans) in each order case, as cuobjdump
# prints it: a suffix of the descriptor operand, e.g. "HGMMA.64x256x16.F32 R24, gdesc[UR16].tnspB, ...".
TRANSPOSE_SASS = {"A": ".tnspA", "B": ".tnspB"}
# (tile_k, stages) of the 128 x 128 kernels with dynamic shared memory (3.5, 3.6): 96 KB fits every
# target, and on the H100 it was the fastest of the sweep in book/pipelines.ipynb (two blocks per SM;
# with 4 stages, 128 KB, one block fits and the kernel is 7% slower).
MID_TILE_CONFIGS = ((64, 3),)
# The measurement switches of Kernels 4.4 and 4.5.
SKIP_SWITCHES = (("SKIP_COPIES", "no copies in the main loop (wrong result: a measurement only)"),
                 ("SKIP_SYNC", "no wait and barrier in the main loop (wrong result: a measurement only)"))

# The ablation kernel's switches (a1): each undoes one step of the earlier chapters (FRESH_ACC adds the numerics
# chapter's remedy instead). kernels/a1_ablation.cu says how each is done.
ABLATION_SWITCHES = (
    ("NO_XOR", "tiles row-major in shared memory, no XOR permutation (ldmatrix bank conflicts)"),
    ("COPY_4B", "4-byte cp.async copies instead of 16-byte ones"),
    ("NO_CP_ASYNC", "register staging instead of cp.async: LDG to registers, STS after the stage's mma"),
    ("NO_REG_DB", "no register double buffering: each slice's fragments loaded right before its mma"),
    ("NO_L2_ORDER", "blocks in plain blockIdx order instead of groups of GROUP_M tile rows"),
    ("NO_VEC_STORE", "C stored one float at a time instead of float2 pairs"),
    ("SMALL_WARP_TILE", "64 x 32 warp tiles instead of 64 x 64: 2 x 8 warps, 512 threads per block"),
    ("FRESH_ACC", "each mma accumulates into zero; its result is added to the fp32 sum outside the mma"),
)

GEMM_KERNELS: dict[str, GemmKernel] = {
    k.key: k
    for k in (
        GemmKernel(
            key="k1.0", title="Kernel 1.0: naive mma",
            entry="naive_mma", block=(16, 16, 1), tile_m=32, tile_n=32, tile_k=16,
            sass=("HMMA.16816.F32",),
        ),
        GemmKernel(
            key="k1.1", title="Kernel 1.1: naive mma + 2x2 warp tiling",
            entry="warp_tile_2x2", block=(16, 16, 1), tile_m=64, tile_n=64, tile_k=16,
            sass=("HMMA.16816.F32",),
        ),
        GemmKernel(
            key="hgemm", title="HGEMM: ldmatrix + mma, fp16 accumulate and output",
            entry="ldmatrix_hgemm_f16", block=(32, 1, 1),
            tile_m=16, tile_n=8, tile_k=16, out_dtype="float16",
            sass=("HMMA.16816.F16", "LDSM.16.M88.4", "LDSM.16.M88.2"),
        ),
        GemmKernel(
            key="k2.0", title="Kernel 2.0: permuted shared memory",
            entry="permuted_smem", block=(16, 16, 1), tile_m=64, tile_n=64, tile_k=32,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDSM.16.M88.2", "LDG.E.128", "STS.128", "STG.E.64"),
        ),
        GemmKernel(
            key="k2.1", title="Kernel 2.1: permuted shared memory, fragments loaded once",
            entry="permuted_smem_a_once", block=(16, 16, 1),
            tile_m=64, tile_n=64, tile_k=32,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDSM.16.M88.2", "LDG.E.128", "STS.128", "STG.E.64"),
        ),
        GemmKernel(
            key="k3.0", title="Kernel 3.0: N-stage cp.async pipeline",
            entry="cp_async_pipeline", block=(16, 16, 1), tile_m=64, tile_n=64, tile_k=32, stages=4,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "LDGDEPBAR", "DEPBAR.LE", "STG.E.64"),
        ),
        GemmKernel(
            key="k3.1", title="Kernel 3.1: N-stage pipeline + 4x tiling",
            entry="pipeline_4x_tiles", block=(16, 16, 1), tile_m=128, tile_n=128, tile_k=32, stages=3,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="k3.2", title="Kernel 3.2: fragments one k16 slice at a time",
            entry="fragments_per_slice", block=(16, 16, 1), tile_m=128, tile_n=128, tile_k=32, stages=3,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDSM.16.M88.2", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="k3.3", title="Kernel 3.3: B fragments in pairs (ldmatrix.x4)",
            entry="ldmatrix_b_pairs", block=(16, 16, 1), tile_m=128, tile_n=128, tile_k=32, stages=3,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="k3.4", title="Kernel 3.4: 1-D block with launch bounds",
            entry="flat_block", block=(256, 1, 1), tile_m=128, tile_n=128, tile_k=32, stages=3,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="k3.5", title="Kernel 3.5: stages in dynamic shared memory",
            entry="dynamic_smem", block=(256, 1, 1), tile_m=128, tile_n=128, tile_k=32, stages=4,
            dynamic_smem=True, configs=MID_TILE_CONFIGS,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="k3.6", title="Kernel 3.6: one copy address per operand",
            entry="copy_offsets", block=(256, 1, 1), tile_m=128, tile_n=128, tile_k=32, stages=4,
            dynamic_smem=True, configs=MID_TILE_CONFIGS,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="k4.0", title="Kernel 4.0: 64 x 64 warp tiles, 128 x 256 blocks",
            entry="large_warp_tiles", block=(256, 1, 1), tile_m=128, tile_n=256, tile_k=32, stages=4,
            dynamic_smem=True, configs=BIG_TILE_CONFIGS,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="k4.1", title="Kernel 4.1: fragments double-buffered in registers",
            entry="fragment_double_buffer", block=(256, 1, 1),
            tile_m=128, tile_n=256, tile_k=32, stages=4, dynamic_smem=True, configs=BIG_TILE_CONFIGS,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="k4.2", title="Kernel 4.2: L2-friendly block order",
            entry="l2_block_order", block=(256, 1, 1), tile_m=128, tile_n=256, tile_k=32, stages=4,
            dynamic_smem=True, configs=BIG_TILE_CONFIGS,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="k4.3", title="Kernel 4.3: C staged through shared memory (a switch)",
            entry="staged_c", block=(256, 1, 1), tile_m=128, tile_n=256, tile_k=32, stages=4,
            dynamic_smem=True, configs=BIG_TILE_CONFIGS,
            switches=(("STAGE_C", "C through shared memory, stored as whole rows with 16-byte stores"),),
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="k4.4", title="Kernel 4.4: ldmatrix addresses by XOR",
            entry="slice_xor", block=(256, 1, 1), tile_m=128, tile_n=256, tile_k=32, stages=4,
            dynamic_smem=True, configs=BIG_TILE_CONFIGS,
            switches=SKIP_SWITCHES,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="k4.5", title="Kernel 4.5: any shape",
            entry="any_shape", block=(256, 1, 1), tile_m=128, tile_n=256, tile_k=32, stages=4,
            dynamic_smem=True, configs=BIG_TILE_CONFIGS, any_shape=True,
            switches=SKIP_SWITCHES,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="k4.6", title="Kernel 4.6: a tile plan per problem",
            entry="tile_plans", block=(256, 1, 1), tile_m=128, tile_n=256, tile_k=32, stages=4,
            dynamic_smem=True, configs=BIG_TILE_CONFIGS, any_shape=True, warps=(2, 4), planned=True,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="k4.7", title="Kernel 4.7: A and B in either memory order",
            entry="operand_orders", block=(256, 1, 1), tile_m=128, tile_n=256, tile_k=32, stages=4,
            dynamic_smem=True, configs=BIG_TILE_CONFIGS, any_shape=True, warps=(2, 4), planned=True,
            either_order=True,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="k5.0", title="Kernel 5.0: TMA loads",
            entry="tma_loads", block=(256, 1, 1), tile_m=128, tile_n=256, tile_k=32, stages=4,
            dynamic_smem=True, configs=BIG_TILE_CONFIGS, tma=True, archs=("sm_90",),
            switches=(("BLOCK_SYNC", "stages released by one __syncthreads per K tile, as Kernel 4.4 does, "
                                     "instead of the empty mbarriers"),),
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "UTMALDG.2D", "SYNCS.ARRIVE.TRANS64",
                  "SYNCS.PHASECHK.TRANS64", "STG.E.64"),
        ),
        *HOPPER_KERNELS,
        GemmKernel(
            key="a1", title="Ablation: Kernel 4.4 with each step a switch",
            entry="ablation", block=(256, 1, 1), tile_m=128, tile_n=256, tile_k=32, stages=4,
            dynamic_smem=True, configs=BIG_TILE_CONFIGS,
            switches=ABLATION_SWITCHES + SKIP_SWITCHES, switch_blocks=(("SMALL_WARP_TILE", (512, 1, 1)),),
            in_bench=False,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="d1", title="Kernel D1: Kernel 4.6 for every input type",
            entry="data_types", block=(256, 1, 1), tile_m=128, tile_n=256, tile_k=32, stages=4,
            dynamic_smem=True, configs=BIG_TILE_CONFIGS, any_shape=True, warps=(2, 4), planned=True,
            element="fp16", in_bench=False,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="s1", title="Kernel S1: Maxas SGEMM, 64 threads, 64 x 64 tile",
            entry="sgemm_64", block=(64, 1, 1), tile_m=64, tile_n=64, tile_k=8, in_dtype="float32",
            sass=("FFMA", "LDS.128", "LDG.E.128", "STS.128", "STG.E.128"),
        ),
        GemmKernel(
            key="s2", title="Kernel S2: Maxas SGEMM, 256 threads, 128 x 128 tile",
            entry="sgemm_128", block=(256, 1, 1), tile_m=128, tile_n=128, tile_k=8, in_dtype="float32",
            sass=("FFMA", "LDS.128", "LDG.E.128", "STS.128", "STG.E.128"),
        ),
        GemmKernel(
            key="s3", title="Kernel S3: S2 with cp.async copies",
            entry="sgemm_cp_async", block=(256, 1, 1), tile_m=128, tile_n=128, tile_k=8, in_dtype="float32",
            sass=("FFMA", "LDS.128", "LDGSTS.E.BYPASS.128", "STS.128", "STG.E.128"),
        ),
    )
}


# The WMMA kernels (book/wmma.ipynb): D = alpha * A @ B + beta * C on 16 x 16 x 16 wmma tiles, one warp
# per tile of D. A and B may each be row- ("C") or column-major ("F"): the memory order is the layout
# parameter of the fragment type, compiled in with -DA_COL_MAJOR / -DB_COL_MAJOR. Keyed by the case as
# BLAS names it for row-major arrays: "A^T B" is At.T @ B for a row-major (K, M) At, i.e. a column-major A.
WMMA_CASES: dict[str, tuple[str, str]] = {
    "A B": ("C", "C"), "A^T B": ("F", "C"), "A B^T": ("C", "F"), "A^T B^T": ("F", "F"),
}
# The memory orders in which each lane's pairs (fp16) or quads (int8) along K are contiguous, as
# mma.sync .row.col reads them: A row-major, B column-major.
MMA_ORDERS = ("C", "F")


@dataclass(frozen=True)
class WmmaKernel:
    key: str                 # its one name: file kernels/<key>_<entry>.cu
    title: str
    entry: str
    in_dtype: str            # A and B
    out_dtype: str           # C, D and the accumulator
    sass: tuple[str, ...]            # in the SASS of every case
    repack_sass: tuple[str, ...]     # in the SASS of a case whose A or B is not in MMA_ORDERS, and only there
                                     # (the rearranging of what was loaded: MOVM, byte loads, ldmatrix.trans)
    warps: tuple[int, int] = (4, 2)  # warps of a block along M and N
    tile: int = 16                   # M, N and K must be multiples of this
    orders: tuple[str, str] = MMA_ORDERS   # the memory orders (A, B) of this build ('C' row-, 'F' column-
                                           # major); the launcher picks them from the arrays (with_orders)

    @property
    def source(self) -> str:
        return f"{self.key}_{self.entry}.cu"

    # What tcgemm.validate.check_gemm_shape reads: M, N and K multiples of the one tile size.
    tile_m = tile_n = tile_k = property(lambda self: self.tile)
    any_shape = False
    # What the launcher (tcgemm.gpu.gemm.prepare) and tcgemm.validate read, named as on a GemmKernel: A and
    # B in either memory order (compiled in), alpha, beta and a C to add, in the WMMA kernels' own signature
    # (A, B, C, D, M, N, K, alpha, beta: int32 alpha and beta for int8 inputs), no split, static shared
    # memory only. load_matrix_sync and store_matrix_sync take 256-bit aligned addresses: A, B, C and D
    # start at a multiple of 32 bytes (with M, N and K multiples of 16, every tile then does).
    either_order = scaled = True
    blas_signature = tma = tma_store = planned = persistent = arch_specific = False
    splits = 1
    smem_bytes = 0
    element = ""
    alignment = 32
    alignment_reason = "loads and stores its 16 x 16 tiles at 32-byte aligned addresses only"
    aligned_c = True
    typed_title = property(lambda self: self.title)
    a_order = property(lambda self: self.orders[0])
    b_order = property(lambda self: self.orders[1])

    def unsupported(self, arch: str) -> None:
        """None: the WMMA kernels run on every GPU the launcher runs on (sm_80 and newer)."""
        return None

    def with_orders(self, a_order: str, b_order: str) -> "WmmaKernel":
        """This kernel compiled for A and B in these memory orders ('C' row-major, 'F' column-major)."""
        self.defines(a_order, b_order)     # refuses any other order
        return replace(self, orders=(a_order, b_order))

    @property
    def block(self) -> tuple[int, int, int]:
        return (32 * self.warps[0] * self.warps[1], 1, 1)

    def grid(self, M: int, N: int, sm_count: int | None = None) -> tuple[int, int, int]:
        """Blocks along N and M (sm_count: unused, as for a GemmKernel that is not persistent)."""
        wm, wn = self.warps
        return (-(-N // (self.tile * wn)), -(-M // (self.tile * wm)), 1)

    @staticmethod
    def defines(a_order: str, b_order: str) -> tuple[tuple[str, int], ...]:
        for name, order in (("A", a_order), ("B", b_order)):
            if order not in ("C", "F"):
                raise ValueError(f"{name}'s memory order must be 'C' (row-major) or 'F' (column-major), got {order!r}")
        return (("A_COL_MAJOR", int(a_order == "F")), ("B_COL_MAJOR", int(b_order == "F")))

    def claims(self, a_order: str, b_order: str) -> tuple[str, ...]:
        """The instructions the book claims for the case with these memory orders."""
        native = (a_order, b_order) == MMA_ORDERS
        return self.sass + (() if native else self.repack_sass)


WMMA_KERNELS: dict[str, WmmaKernel] = {
    k.key: k
    for k in (
        WmmaKernel(key="w1.0", title="Kernel W1.0: WMMA, fp16 in, fp32 accumulate (HMMA)", entry="wmma_hmma",
                   in_dtype="float16", out_dtype="float32",
                   sass=("HMMA.16816.F32", "STG.E.64"), repack_sass=("MOVM.16.MT88",)),
        WmmaKernel(key="w1.1", title="Kernel W1.1: WMMA, int8 in, int32 accumulate (IMMA)", entry="wmma_imma",
                   in_dtype="int8", out_dtype="int32",
                   sass=("IMMA.16816.S8.S8", "STG.E.64"), repack_sass=("LDG.E.U8", "PRMT")),
        WmmaKernel(key="w1.2", title="Kernel W1.2: WMMA from shared memory (HMMA)", entry="wmma_smem",
                   in_dtype="float16", out_dtype="float32",
                   sass=("HMMA.16816.F32", "LDSM.16.", "LDG.E.128", "STS.128"), repack_sass=("LDSM.16.MT88.4",)),
    )
}


def bench_keys() -> list[str]:
    """The kernels `python -m tcgemm bench` times by default, in teaching order."""
    return [k for k, spec in GEMM_KERNELS.items() if spec.in_bench]


def keys_for(in_dtype: str) -> list[str]:
    """The GEMM kernels that take `in_dtype` inputs, in teaching order."""
    return [k for k, spec in GEMM_KERNELS.items() if spec.in_dtype == in_dtype]

# The mma instructions of every variant but fp8, as every target's SASS spells them.
_MMA_SASS = ("HMMA.16816.F32", "HMMA.16816.F16", "HMMA.1688.F32", "IMMA.16832.S8.S8", "HMMA.16816.F32.BF16",
             "HMMA.1688.F32.TF32")

PROBES: dict[str, ProbeKernel] = {
    # One entry per mma variant; the fp8 ones hold their mma from sm_89 on only, so their SASS is
    # checked per target in tests/test_dtypes.py.
    "mma": ProbeKernel(
        key="mma",
        entries=tuple("probe_mma_" + variant_identifier(v) for v in MMA_VARIANTS),
        sass=_MMA_SASS,
    ),
    "mma_ceiling": ProbeKernel(
        key="mma_ceiling",
        entries=tuple("mma_ceiling_" + variant_identifier(v) for v in MMA_VARIANTS),
        sass=_MMA_SASS,
    ),
    "ffma_ceiling": ProbeKernel(
        key="ffma_ceiling",
        entries=("ffma_ceiling",),
        sass=("FFMA",),
    ),
    "wmma": ProbeKernel(
        key="wmma",
        entries=tuple(f"probe_wmma_{t}_{use}" for t in ("f16", "s8")
                      for use in ("a_row", "a_col", "b_row", "b_col")) + ("probe_wmma_f32_acc", "probe_wmma_s32_acc"),
        sass=("MOVM.16.MT88", "LDG.E.U8"),
    ),
    # The numerics chapter: one mma per crafted case (rounding_*), one accumulator over all of K
    # (accumulate_*), per type of tcgemm.rounding.MMA_TYPES; the fp8 ones hold an mma from sm_89 on.
    "rounding": ProbeKernel(
        key="rounding",
        entries=tuple(f"{use}_{t}" for t in ("f16_f32", "f16_f16", "bf16_f32", "tf32_f32", "e4m3_f32",
                                             "e5m2_f32", "s8_s32") for use in ("rounding", "accumulate")),
        sass=("HMMA.16816.F32", "HMMA.16816.F16", "HMMA.16816.F32.BF16", "HMMA.1688.F32.TF32",
              "IMMA.16832.S8.S8"),
    ),
    # Hopper's wgmma (tcgemm.gpu.wgmma): its entries hold a wgmma only when built for sm_90a, so the
    # targets here compile them empty, and tests/test_wgmma_sass.py checks their HGMMA for sm_90a
    # (_a_mn, _b_mn: that operand MN-major, read transposed).
    "wgmma": ProbeKernel(
        key="wgmma",
        entries=("probe_wgmma_m64n8k16", "probe_wgmma_m64n16k16", "probe_wgmma_m64n16k16_a_mn",
                 "probe_wgmma_m64n16k16_b_mn", "probe_wgmma_m64n128k16_b_mn"),
        sass=(),
    ),
    "ldmatrix": ProbeKernel(
        key="ldmatrix",
        entries=("probe_ldmatrix_x1", "probe_ldmatrix_x2", "probe_ldmatrix_x4",
                 "probe_ldmatrix_x1_trans", "probe_ldmatrix_x2_trans", "probe_ldmatrix_x4_trans"),
        sass=("LDSM.16.M88 ", "LDSM.16.M88.2", "LDSM.16.M88.4",
              "LDSM.16.MT88 ", "LDSM.16.MT88.2", "LDSM.16.MT88.4"),
    ),
}

def all_sources() -> list[str]:
    """Every .cu file the catalog knows, in teaching order."""
    names = [k.source for k in GEMM_KERNELS.values()] + [w.source for w in WMMA_KERNELS.values()] + \
        [p.source for p in PROBES.values()]
    return list(dict.fromkeys(names))


def source_archs(source: str) -> tuple[str, ...]:
    """The target architectures kernels/<source> compiles for (as defines_for configures it): a GEMM
    kernel's own `archs` (Kernel 5.0's TMA: sm_90), every target for the others."""
    return next((k.archs for k in GEMM_KERNELS.values() if k.source == source), TARGET_ARCHS)


def build_target(source: str, arch: str) -> str:
    """The target kernels/<source> is compiled for on `arch`: the architecture-specific one (sm_90 ->
    sm_90a) for the kernels that need it (wgmma, setmaxnreg: Kernels 5.1-5.5), else `arch` itself."""
    specific = any(k.arch_specific for k in GEMM_KERNELS.values() if k.source == source)
    return arch_specific_target(arch) if specific else arch


def sass_claims() -> dict[str, tuple[str, ...]]:
    """The instructions the book claims for each source compiled as defines_for compiles it: the WMMA
    kernels without defines, i.e. for the case "A B" (A and B row-major)."""
    claims = {k.source: k.sass for k in GEMM_KERNELS.values()}
    claims.update({p.source: p.sass for p in PROBES.values()})
    claims.update({w.source: w.claims(*WMMA_CASES["A B"]) for w in WMMA_KERNELS.values()})
    return claims


def configured(key: str, arch: str | None = None) -> GemmKernel:
    """Kernel `key` in the configuration its launcher picks on `arch` (one of TARGET_ARCHS), from the
    shared memory one block may use there; None: on the target that allows the most."""
    if key not in GEMM_KERNELS:
        raise KeyError(f"unknown kernel {key!r}; the kernels are: {', '.join(GEMM_KERNELS)}")
    spec = GEMM_KERNELS[key]
    archs = spec.archs if arch is None else (arch,)
    limit = max(arch_limits(a).max_smem_per_block for a in archs)    # an unknown arch is named first
    if arch is not None and (reason := spec.unsupported(arch)):
        raise ValueError(reason)
    return spec.for_smem(limit)


def defines_for(source: str, arch: str) -> tuple[tuple[str, int], ...]:
    """The -D macros the launcher compiles kernels/<source> with on `arch` (probes: none)."""
    for k in GEMM_KERNELS.values():
        if k.source == source:
            return configured(k.key, arch).defines
    return ()
