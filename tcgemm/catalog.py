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
and has the signature  (A, B, C, M, N, K, lda, ldb, alpha, beta, C_in): D = alpha * A @ B + beta * C_in.

Pipelined kernels are compiled with -DN_STAGES (and -DBK when their stages live in dynamic shared
memory); `configs` lists their (tile_k, stages) choices, fastest first, and `for_smem` picks the
first that fits a GPU's shared memory per block (`configured`: on a target architecture of
tcgemm.arch). `switches` lists other -D macros a kernel accepts (each 0 by default);
`with_switches` turns them on for one variant, e.g. to measure an alternative.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from tcgemm.arch import TARGET_ARCHS, arch_limits
from tcgemm.errors import OperandError
from tcgemm.fragments.layouts import MMA_VARIANTS, variant_identifier


# Memory order ("C" row-major, "F" column-major) of A and of B, by input dtype.
OPERAND_ORDERS = {"float16": ("C", "F"), "float32": ("F", "C")}
ITEMSIZE = {"float16": 2, "float32": 4}
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

    @property
    def source(self) -> str:
        """The file in kernels/: the key, then the entry point, so a new step renames no file."""
        return f"{self.key}_{self.entry}.cu"

    @property
    def a_order(self) -> str:
        return (self.orders or OPERAND_ORDERS[self.in_dtype])[0]

    @property
    def b_order(self) -> str:
        return (self.orders or OPERAND_ORDERS[self.in_dtype])[1]

    def grid(self, M: int, N: int) -> tuple[int, int, int]:
        return (-(-N // self.tile_n), -(-M // self.tile_m), self.splits)

    @property
    def flop_per_global_byte(self) -> float:
        """FLOP per byte of A and B one block copies from global memory: each K step brings a
        tile_m x tile_k slice of A and a tile_k x tile_n slice of B for 2 tile_m tile_n tile_k FLOP."""
        return 2 * self.tile_m * self.tile_n / (ITEMSIZE[self.in_dtype] * (self.tile_m + self.tile_n))

    @property
    def smem_bytes(self) -> int:
        """Dynamic shared memory per block: every stage of the A and B tiles."""
        tiles = ITEMSIZE[self.in_dtype] * (self.tile_m + self.tile_n) * self.tile_k
        return tiles * self.stages if self.dynamic_smem else 0

    @property
    def defines(self) -> tuple[tuple[str, int], ...]:
        """The -D macros this variant is compiled with."""
        tile = (("BM", self.tile_m), ("BN", self.tile_n), ("WARPS_M", self.warps[0]),
                ("WARPS_N", self.warps[1])) if self.warps else ()
        orders = (("A_COL_MAJOR", int(self.a_order == "F")), ("B_COL_MAJOR", int(self.b_order == "F"))) \
            if self.orders else ()
        return tile + ((("BK", self.tile_k),) if self.dynamic_smem else ()) + \
               ((("N_STAGES", self.stages),) if self.stages else ()) + orders + tuple((name, 1) for name in self.on)

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
        """This kernel compiled for a tcgemm.plan.TileConfig, with K split `splits` ways."""
        if not self.warps:
            raise ValueError(f"{self.title} fixes its tile in its source")
        if splits < 1:
            raise ValueError(f"splits must be at least 1, got {splits}")
        return replace(self, tile_m=tile.bm, tile_n=tile.bn, tile_k=tile.bk, stages=tile.stages,
                       block=(tile.threads, 1, 1), warps=(tile.warps_m, tile.warps_n), splits=splits,
                       planned=False)

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
                list(self.on)
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


# (tile_k, stages) of the 128 x 256 kernels, fastest first on the H100: 192 KB fits sm_90 only,
# 144 KB fits sm_80 too, 96 KB fits every target (sm_86 and sm_89 allow 99 KB per block).
BIG_TILE_CONFIGS = ((64, 4), (64, 3), (32, 4))
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
            key="a1", title="Ablation: Kernel 4.4 with each step a switch",
            entry="ablation", block=(256, 1, 1), tile_m=128, tile_n=256, tile_k=32, stages=4,
            dynamic_smem=True, configs=BIG_TILE_CONFIGS,
            switches=ABLATION_SWITCHES + SKIP_SWITCHES, switch_blocks=(("SMALL_WARP_TILE", (512, 1, 1)),),
            in_bench=False,
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

    @property
    def source(self) -> str:
        return f"{self.key}_{self.entry}.cu"

    # What tcgemm.validate.check_gemm_shape reads: M, N and K multiples of the one tile size.
    tile_m = tile_n = tile_k = property(lambda self: self.tile)
    any_shape = False

    @property
    def block(self) -> tuple[int, int, int]:
        return (32 * self.warps[0] * self.warps[1], 1, 1)

    def grid(self, M: int, N: int) -> tuple[int, int, int]:
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
    archs = TARGET_ARCHS if arch is None else (arch,)
    return GEMM_KERNELS[key].for_smem(max(arch_limits(a).max_smem_per_block for a in archs))


def defines_for(source: str, arch: str) -> tuple[tuple[str, int], ...]:
    """The -D macros the launcher compiles kernels/<source> with on `arch` (probes: none)."""
    for k in GEMM_KERNELS.values():
        if k.source == source:
            return configured(k.key, arch).defines
    return ()
