"""What a kernel of the book is, as data: the types the catalog (tcgemm.engine.catalog) fills in. Pure module.

Operand convention of the Tensor Core kernels (in_dtype float16): C = A @ B with
  A: (M, K) float16, row-major (C-contiguous),
  B: (K, N) float16, column-major (Fortran-contiguous), i.e. B.T is a C-contiguous (N, K) array,
  C: (M, N) row-major, float32 (or float16 where out_dtype says so).
The CUDA-core SGEMM kernels (in_dtype float32) read both operands along K the same way instead, as
the Maxas SGEMM does: A (M, K) column-major (A.T is a C-contiguous (K, M) array), B (K, N) row-major.
Kernel D1 takes every input type of mma.sync (its `elements`), compiled in per type (`with_element`),
with A row-major and B column-major whatever the type; bf16 and fp8 arrays hold the values' bit patterns.
A kernel with `either_order` (4.7, 5.7, 5.8, the WMMA kernels) takes A and B in either memory order,
compiled in per case (`with_orders`).

Two kinds say how a kernel is launched: its `Signature`, the arguments it takes (tcgemm.engine.gpu.gemm builds
the launch of each kind), and its `Schedule`, how its blocks cover C (`GemmKernel.grid`).

Pipelined kernels are compiled with -DN_STAGES (and -DBK when their stages live in dynamic shared
memory); `configs` lists their (tile_k, stages) choices, fastest first, and `for_smem` picks the
first that fits a GPU's shared memory per block. `switches` lists other -D macros a kernel accepts
(each 0 by default); `with_switches` turns them on for one variant, e.g. to measure an alternative.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

from tcgemm.arch import TARGET_ARCHS
from tcgemm.errors import OperandError
from tcgemm.fragment_layouts import MMA_VARIANTS, min_sm


# Memory order ("C" row-major, "F" column-major) of A and of B, by input dtype.
OPERAND_ORDERS = {"float16": ("C", "F"), "bfloat16": ("C", "F"), "float32": ("F", "C")}
ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "uint16": 2, "int8": 1, "uint8": 1}
# CuPy has no bf16: the engine's "bfloat16" arrays hold its bit patterns as uint16 (as Kernel D1's do).
STORAGE_DTYPES = {"bfloat16": "uint16"}
DTYPE_NAMES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32"}


def storage_dtype(dtype: str) -> str:
    """The dtype of the arrays that hold `dtype`: uint16 for bfloat16, else itself."""
    return STORAGE_DTYPES.get(dtype, dtype)
ORDER_NAMES = {"C": "row-major", "F": "column-major"}
# The memory orders in which each lane's pairs (fp16) or quads (int8) along K are contiguous, as
# mma.sync .row.col reads them: A row-major, B column-major.
MMA_ORDERS = ("C", "F")

# Shared memory a TMA kernel allocates beyond its stages, to start them on a 1024-byte boundary: TMA's
# swizzle XORs bits 4-9 of the shared address, so a swizzled tile must start where the pattern starts.
TMA_SMEM_ALIGN = 1024
# Kernel 5.6's buffers of C: two TMA boxes of 64 x 32 fp32 per consumer warpgroup.
TMA_STORE_SMEM = 2 * 2 * 64 * 32 * 4


class Signature(Enum):
    """The arguments a kernel takes (its value: their order). tcgemm.engine.gpu.gemm builds the launch of each
    kind with the builder registered for it, which `builder_module` provides."""
    PLAIN = "(A, B, C, M, N, K)"
    # Leading dimensions, alpha, beta and a C to add: D = alpha * A @ B + beta * C_in (Kernel 4.7).
    BLAS = "(A, B, C, M, N, K, lda, ldb, alpha, beta, C_in)"
    # Tensor maps of A and B (tcgemm.engine.tma), 128 bytes each by value, in their place (Kernels 5.0-5.5):
    # (const __grid_constant__ TensorMap a_map, const __grid_constant__ TensorMap b_map, C, M, N, K).
    TENSOR_MAPS = "(a_map, b_map, C, M, N, K)"
    # And a map of C, which the kernel stores by TMA through shared memory (Kernels 5.6-5.8).
    TENSOR_MAPS_AND_C = "(a_map, b_map, c_map, C, M, N, K)"
    # And the stream-K split (Kernel 5.12, tcgemm.engine.stream_k): the fp32 sums of the pieces of split tiles,
    # a counter per split tile, how many tiles are split and into how many runs.
    STREAM_K = "(a_map, b_map, c_map, C, M, N, K, partials, counts, sk_tiles, runs)"
    # The WMMA kernels': D = alpha * A @ B + beta * C_in, alpha and beta in D's type (int32 for int8).
    WMMA = "(A, B, C_in, D, M, N, K, alpha, beta)"

    @property
    def scaled(self) -> bool:
        """Takes alpha, beta and a C to add: tcgemm.engine.operands refuses alpha and beta other than 1 and 0
        for the other kinds."""
        return self in (Signature.BLAS, Signature.WMMA)

    @property
    def tensor_maps(self) -> bool:
        """Copies A and B by TMA, from the tensor maps it takes in their place."""
        return self in (Signature.TENSOR_MAPS, Signature.TENSOR_MAPS_AND_C, Signature.STREAM_K)

    @property
    def stores_c_by_tma(self) -> bool:
        """Takes a map of C too, and stores C by TMA through shared memory where the map addresses it."""
        return self in (Signature.TENSOR_MAPS_AND_C, Signature.STREAM_K)

    @property
    def builder_module(self) -> str:
        """The module of tcgemm.engine.gpu that registers this kind's builder with the launcher (imported by
        the launcher when it first needs that builder)."""
        return "tcgemm.engine.gpu.tma" if self.tensor_maps else "tcgemm.engine.gpu.gemm"


class Schedule(Enum):
    """How a kernel's blocks cover C: (what it is, one block per SM looping over the tiles, blocks per
    thread-block cluster along M, which share B's tile by multicast)."""
    GRID = ("a block per tile of C (and per split of K)", False, 1)
    PERSISTENT = ("one block per SM, looping over the tiles", True, 1)
    CLUSTERS = ("one cluster of two blocks per two SMs, looping over pairs of tiles", True, 2)

    def __init__(self, description: str, persistent: bool, cluster: int):
        self.description, self.persistent, self.cluster = description, persistent, cluster


@dataclass(frozen=True)
class Element:
    """An input type of Kernel D1: its mma.sync variant, how it is compiled in, how the host holds it."""
    name: str                # the book's name
    code: int                # -DELEMENT in kernels/d1_data_types.cu
    variant: str             # its mma.sync variant, a key of tcgemm.fragment_layouts.MMA_VARIANTS
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


FLAT_BLOCK = (256, 1, 1)     # 8 warps in a row: most kernels' block


@dataclass(frozen=True)
class GemmKernel:
    key: str                 # the kernel's one name: CLI, bench table, file kernels/<key>_<entry>.cu
    title: str               # the name the book uses ("Kernel 4.0: ..."), starting with the key's label
    entry: str               # extern "C" function name
    tile_m: int              # M must be a multiple of this (one block computes tile_m x tile_n)
    tile_n: int
    tile_k: int              # K must be a multiple of this
    base_block: tuple[int, int, int] = FLAT_BLOCK   # the block it launches with but for `switch_blocks`
    signature: Signature = Signature.PLAIN          # the arguments it takes
    schedule: Schedule = Schedule.GRID              # how its blocks cover C
    out_dtype: str = "float32"
    accumulator: str = "float32" # the type the products are summed in (HGEMM's: float16)
    dtypes: tuple[tuple[str, str], ...] = ()   # the (in_dtype, out_dtype) pairs it compiles for (-DBF16,
                                               # -DC_BITS: Kernel 5.9), the first by default; () for one pair
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
    planned: bool = False        # its tile and splits are picked per problem (tcgemm.engine.plan.plan_kernel)
    either_order: bool = False   # A and B in either memory order, compiled in (-DA_COL_MAJOR -DB_COL_MAJOR)
    orders: tuple[str, ...] = () # the memory orders (A, B) of this variant ('C' row-, 'F' column-major);
                                 # () for OPERAND_ORDERS'
    c_order: str = "C"           # the memory order it writes C in: 'C' row-major, 'F' column-major (Kernel 5.13)
    tile_widths: tuple[tuple[int, int], ...] = ()   # (tile_n, stages) it compiles for (-DBN: Kernel 5.11),
                                                    # the first by default; () for a tile fixed in its source
    cluster_shapes: tuple[tuple[int, int], ...] = ()   # (blocks along M, along N) of the clusters it compiles
                                                       # for (-DCLUSTER_M -DCLUSTER_N: Kernel 5.14), the first
                                                       # by default; () for the schedule's, along M
    cluster_dims: tuple[int, int] = ()  # the one of cluster_shapes compiled in; () for the first
    switch_blocks: tuple[tuple[str, tuple[int, int, int]], ...] = ()   # (switch, block it launches with)
    in_bench: bool = True        # timed by `python -m tcgemm bench` by default (not the ablation kernel,
                                 # whose default build is Kernel 4.4 again)
    archs: tuple[str, ...] = TARGET_ARCHS   # the target architectures it compiles for and runs on
    elements: tuple[Element, ...] = ()      # the input types it compiles for (-DELEMENT): Kernel D1 only
    element: str = ""            # the one of `elements` compiled in
    arch_specific: bool = False  # built for the architecture-specific target (sm_90a: wgmma, setmaxnreg)
    text: str = field(default="", repr=False)   # CUDA source compiled in place of kernels/<source> (a reader's
                                                 # edit in the workbench, tcgemm.practice.workbench); "": the file

    @property
    def source(self) -> str:
        """The file in kernels/: the key, then the entry point, so a new step renames no file."""
        return f"{self.key}_{self.entry}.cu"

    @property
    def short_title(self) -> str:
        """The title's name part, for narrow tables: 'Kernel 5.8'."""
        return self.title.split(":")[0]

    @property
    def block(self) -> tuple[int, int, int]:
        """The block it launches with: that of the first switch on with a block of its own, else base_block."""
        return next((b for name, b in self.switch_blocks if name in self.on), self.base_block)

    @property
    def cluster_shape(self) -> tuple[int, int]:
        """The cluster's blocks along M (sharing B's tile by multicast) and along N (sharing A's)."""
        return self.cluster_dims or (self.cluster_shapes[0] if self.cluster_shapes else (self.schedule.cluster, 1))

    @property
    def cluster_m(self) -> int:
        return self.cluster_shape[0]

    @property
    def cluster_n(self) -> int:
        return self.cluster_shape[1]

    @property
    def cluster(self) -> int:
        """Blocks per thread-block cluster (1: none)."""
        return self.cluster_m * self.cluster_n

    @property
    def compiled_element(self) -> Element | None:
        """The input type compiled in, of `elements` (Kernel D1); None for a kernel of one input type."""
        return next((e for e in self.elements if e.name == self.element), None)

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

    # Where A and B must start (tcgemm.engine.operands), but in an any-shape kernel, whose launcher copies an
    # unaligned operand into an aligned buffer: the kernels copy them in 16-byte chunks. C: anywhere.
    alignment = 16
    alignment_reason = "copies it in 16-byte chunks"
    aligned_c = False

    def grid(self, M: int, N: int, sm_count: int | None = None, clusters: int | None = None) -> tuple[int, int, int]:
        """Blocks along N, M and the K splits; a persistent kernel: as many blocks as SMs (`sm_count`),
        in whole clusters (or `clusters` of them, as many as the GPU runs at once), and no more than
        there are tiles."""
        if not self.schedule.persistent:
            return (-(-N // self.tile_n), -(-M // self.tile_m), self.splits)
        if sm_count is None:
            raise ValueError(f"{self.title} is persistent: its grid needs the GPU's SM count")
        slots = sm_count // self.cluster if clusters is None else clusters
        return (min(slots, self.cluster_tiles(M, N)) * self.cluster, 1, 1)

    def cluster_tiles(self, M: int, N: int) -> int:
        """Output tiles of a cluster's size (tile pairs for clusters of two along M) that cover M x N."""
        return -(-M // (self.tile_m * self.cluster_m)) * -(-N // (self.tile_n * self.cluster_n))

    @property
    def flop_per_global_byte(self) -> float:
        """FLOP per byte of A and B one block copies from global memory: each K step brings a
        tile_m x tile_k slice of A and a tile_k x tile_n slice of B for 2 tile_m tile_n tile_k FLOP."""
        return 2 * self.tile_m * self.tile_n / (ITEMSIZE[self.in_dtype] * (self.tile_m + self.tile_n))

    @property
    def smem_bytes(self) -> int:
        """Dynamic shared memory per block: every stage of the A and B tiles (TMA kernels: aligned to
        TMA_SMEM_ALIGN, and the buffers of C of a TMA store)."""
        tiles = ITEMSIZE[self.in_dtype] * (self.tile_m + self.tile_n) * self.tile_k
        extra = (TMA_SMEM_ALIGN if self.signature.tensor_maps else 0) + \
            (TMA_STORE_SMEM if self.signature.stores_c_by_tma else 0)
        return tiles * self.stages + extra if self.dynamic_smem else 0

    def unsupported(self, arch: str) -> str | None:
        """None when the kernel runs on `arch`; else one line why not."""
        if arch in self.archs:
            return None
        return f"{self.typed_title} needs {' or '.join(self.archs)} (this GPU is {arch})"

    @property
    def typed_title(self) -> str:
        """The title, with the types compiled in where the kernel takes several (Kernels D1, 5.9)."""
        if self.dtypes:
            return f"{self.title} ({DTYPE_NAMES[self.in_dtype]} inputs, {DTYPE_NAMES[self.out_dtype]} C)"
        return f"{self.title} ({self.element} inputs)" if self.element else self.title

    @property
    def defines(self) -> tuple[tuple[str, int], ...]:
        """The -D macros this variant is compiled with."""
        tile = (("BM", self.tile_m), ("BN", self.tile_n), ("WARPS_M", self.warps[0]),
                ("WARPS_N", self.warps[1])) if self.warps else (("BN", self.tile_n),) if self.tile_widths else ()
        orders = (("A_COL_MAJOR", int(self.a_order == "F")), ("B_COL_MAJOR", int(self.b_order == "F"))) \
            if self.orders else ()
        types = (("BF16", int(self.in_dtype == "bfloat16")), ("C_BITS", 8 * ITEMSIZE[self.out_dtype])) \
            if self.dtypes else ()
        cluster = (("CLUSTER_M", self.cluster_m), ("CLUSTER_N", self.cluster_n)) if self.cluster_shapes else ()
        return tile + cluster + ((("BK", self.tile_k),) if self.dynamic_smem else ()) + \
               ((("N_STAGES", self.stages),) if self.stages else ()) + orders + tuple((name, 1) for name in self.on) + \
               ((("ELEMENT", self.compiled_element.code),) if self.element else ()) + types

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
        """This kernel compiled for a tcgemm.engine.plan.TileConfig, with K split `splits` ways. The tile's BK
        counts fp16 (tile rows of 2 BK bytes); another input type keeps the bytes."""
        if not self.warps:
            raise ValueError(f"{self.title} fixes its tile in its source")
        if splits < 1:
            raise ValueError(f"splits must be at least 1, got {splits}")
        tile_k = tile.bk * ITEMSIZE["float16"] // ITEMSIZE[self.in_dtype]
        return replace(self, tile_m=tile.bm, tile_n=tile.bn, tile_k=tile_k, stages=tile.stages,
                       base_block=(tile.threads, 1, 1), warps=(tile.warps_m, tile.warps_n), splits=splits,
                       planned=False)

    def with_tile_n(self, tile_n: int) -> "GemmKernel":
        """This kernel compiled for tiles `tile_n` columns wide, with that width's stages (one of its
        `tile_widths`: Kernel 5.11)."""
        stages = dict(self.tile_widths).get(tile_n)
        if stages is None:
            widths = ", ".join(str(w) for w, _ in self.tile_widths) or f"{self.tile_n} only"
            raise ValueError(f"{self.title} has no tiles {tile_n} wide; its widths are: {widths}")
        return replace(self, tile_n=tile_n, stages=stages)

    def with_cluster(self, cluster_m: int, cluster_n: int) -> "GemmKernel":
        """This kernel compiled for clusters of cluster_m x cluster_n blocks (one of its `cluster_shapes`:
        Kernel 5.14)."""
        if (cluster_m, cluster_n) not in self.cluster_shapes:
            shapes = ", ".join(f"{m} x {n}" for m, n in self.cluster_shapes) or \
                f"{self.cluster_m} x {self.cluster_n} only"
            raise ValueError(f"{self.title} has no clusters of {cluster_m} x {cluster_n}; its shapes are: {shapes}")
        return replace(self, cluster_dims=(cluster_m, cluster_n))

    def with_dtypes(self, in_dtype: str, out_dtype: str) -> "GemmKernel":
        """This kernel compiled for in_dtype A and B and an out_dtype C (one of its `dtypes`: Kernel 5.9)."""
        if (in_dtype, out_dtype) not in self.dtypes:
            pairs = ", ".join(f"{a} -> {c}" for a, c in self.dtypes) or f"{self.in_dtype} -> {self.out_dtype} only"
            raise ValueError(f"{self.title} takes no {in_dtype} inputs with a {out_dtype} C; it takes {pairs}")
        return replace(self, in_dtype=in_dtype, out_dtype=out_dtype)

    def with_element(self, name: str) -> "GemmKernel":
        """This kernel compiled for input type `name` (one of its `elements`: Kernel D1 only), its tile
        rows and pipeline configurations keeping their bytes."""
        if not self.elements:
            raise ValueError(f"{self.title} takes {self.in_dtype} inputs only; Kernel D1 (key d1) takes "
                             "every input type of mma.sync")
        e = next((e for e in self.elements if e.name == name), None)
        if e is None:
            raise ValueError(f"unknown input type {name!r}; {self.title} takes "
                             f"{', '.join(e.name for e in self.elements)}")
        rescale = lambda k: k * ITEMSIZE[self.in_dtype] // ITEMSIZE[e.dtype]
        return replace(self, element=name, in_dtype=e.dtype, out_dtype=e.out_dtype, archs=e.archs,
                       tile_k=rescale(self.tile_k), configs=tuple((rescale(k), s) for k, s in self.configs))

    def with_switches(self, *names: str) -> "GemmKernel":
        known = [name for name, _ in self.switches]
        unknown = [n for n in names if n not in known]
        if unknown:
            known = ", ".join(known) or "none"
            raise ValueError(f"{self.title} has no switch {unknown[0]!r} (its switches: {known})")
        return replace(self, on=tuple(names))

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
        parts = ([f"{self.tile_m}x{self.tile_n}"] if self.warps or self.tile_widths else []) + \
                ([f"BK={self.tile_k}"] if self.dynamic_smem else []) + \
                ([f"{self.stages} stages"] if self.stages else []) + \
                ([f"K split {self.splits} ways"] if self.splits > 1 else []) + \
                ([f"clusters {self.cluster_m}x{self.cluster_n}"] if self.cluster_shapes else []) + \
                ([f"A {ORDER_NAMES[self.a_order]}, B {ORDER_NAMES[self.b_order]}"] if self.orders else []) + \
                list(self.on) + ([self.element] if self.element else []) + \
                ([f"{DTYPE_NAMES[self.in_dtype]} -> {DTYPE_NAMES[self.out_dtype]}"] if self.dtypes else [])
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

    # What tcgemm.engine.operands.check_gemm_shape reads: M, N and K multiples of the one tile size.
    tile_m = tile_n = tile_k = property(lambda self: self.tile)
    any_shape = False
    # What the launcher (tcgemm.engine.gpu.gemm.prepare) and tcgemm.engine.operands read, named as on a GemmKernel: A and
    # B in either memory order (compiled in), the WMMA kernels' own signature (alpha, beta and a C to add),
    # a grid of blocks, no split, static shared memory only. load_matrix_sync and store_matrix_sync take
    # 256-bit aligned addresses: A, B, C and D start at a multiple of 32 bytes (with M, N and K multiples
    # of 16, every tile then does).
    either_order = True
    signature = Signature.WMMA
    schedule = Schedule.GRID
    cluster = 1
    planned = arch_specific = False
    splits = 1
    smem_bytes = 0
    element = text = ""
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

    def grid(self, M: int, N: int, sm_count: int | None = None, clusters: int | None = None) -> tuple[int, int, int]:
        """Blocks along N and M (sm_count and clusters: unused, as for a GemmKernel that is not persistent)."""
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
