"""Which tile configuration of Kernel 4.6 runs an M x N x K problem, and why. Pure module.

cuBLAS picks among many kernels per problem with heuristics; Kernel 4.6 has a handful of tile
configurations (TILES) and may split K over several blocks, and `plan` picks by a small time model:

  each SM gets its share of the blocks (rounded up) and runs them `blocks per SM` at a time, each
  at 1 / (SMs x blocks per SM) of the configuration's measured rate; a block does 2 BM BN BK FLOP
  per K tile of its share of K, plus FILL_TILES tiles' worth of time to fill its pipeline and store
  its C. A last group of fewer blocks than fit runs them faster, up to LONE_SPEEDUP, so

      compute = (full groups + the last group's share) x (one block's time)
      memory  = bytes of A and B, and of C or of the split partials, / DRAM bandwidth
      time    = max(compute, memory) + a launch; with split K, plus a second launch that reads
                the partials and writes C

It captures the two ways a large tile loses on a small or thin problem: a last wave that leaves
most SMs idle (wave quantization) and too few blocks to keep every SM busy at all, which splitting
K fixes at the price of writing and reading the partial results. The `efficiency` of each
configuration is its rate at large square sizes as a share of the mma.sync ceiling, measured on the
H100 (book/pipelines.ipynb records the sweep that checks the choices).
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from functools import lru_cache
from math import ceil

from tcgemm.engine.kernel_types import ITEMSIZE, GemmKernel
from tcgemm.style import TEXT_COLUMN_CHARS
from tcgemm.table import Column, Table


@dataclass(frozen=True)
class TileConfig:
    name: str
    bm: int
    bn: int
    warps_m: int
    warps_n: int
    bk: int
    stages: int
    efficiency: float      # sustained share of the mma.sync ceiling when every SM is busy
    regs: int              # registers per thread (sm_90 build); tests/test_plan.py checks the SASS

    @property
    def threads(self) -> int:
        return 32 * self.warps_m * self.warps_n

    @property
    def warp_tile(self) -> int:
        """Elements of C one warp computes."""
        return self.bm // self.warps_m * self.bn // self.warps_n

    @property
    def smem_bytes(self) -> int:
        return 2 * (self.bm + self.bn) * self.bk * self.stages

    @property
    def defines(self) -> tuple[tuple[str, int], ...]:
        return (("BM", self.bm), ("BN", self.bn), ("WARPS_M", self.warps_m), ("WARPS_N", self.warps_n))


# Largest first: a tie in the model goes to the earlier entry.
# Efficiencies: fitted on the H100 to the measured times of every (tile, splits) over the chapter's
# sweep (512³ to 8192³, tall-skinny, small M); registers: NVRTC 13 for sm_90 (tests/test_plan.py).
TILES = (
    TileConfig("128x256", 128, 256, 2, 4, 64, 4, 0.62, 229),
    TileConfig("128x128", 128, 128, 2, 2, 64, 3, 0.64, 229),
    TileConfig("64x128", 64, 128, 2, 2, 64, 4, 0.50, 148),
    TileConfig("64x64", 64, 64, 2, 2, 64, 4, 0.38, 96),
    TileConfig("32x128", 32, 128, 1, 4, 64, 4, 0.33, 96),
    TileConfig("16x64", 16, 64, 1, 4, 64, 4, 0.22, 56),
)
SPLITS = (1, 2, 3, 4, 6, 8)


def tile_named(name: str) -> TileConfig:
    for tile in TILES:
        if tile.name == name:
            return tile
    raise KeyError(f"no tile {name!r}; the tiles are: {', '.join(t.name for t in TILES)}")
MIN_K_TILES_PER_SPLIT = 4      # fewer, and the pipeline never fills
FILL_TILES = 4                 # pipeline fill and epilogue of one block, in K tiles' worth of time
LONE_SPEEDUP = 1.5             # a block with the SM to itself, against sharing it with others
LAUNCH_S = 3e-6                # a launch, and the ramp of a kernel's first and last blocks


@dataclass(frozen=True)
class GpuShape:
    """What the model needs to know about a GPU."""
    name: str
    sms: int
    smem_per_sm: int           # bytes a resident block set may use (all blocks together)
    smem_per_block: int        # the opt-in maximum of one block
    regs_per_sm: int = 65536
    threads_per_sm: int = 2048
    ceiling_tflops: float = 0.0    # mma.sync fp16 -> fp32, measured (or datasheet-derived)
    dram_gbs: float = 0.0          # DRAM bandwidth, GB/s


# The H100 SXM5 that recorded the book, for planning without a GPU: shared memory and registers as
# its driver reports them (tcgemm.arch's sm_90 limits), the mma.sync ceiling book/pipelines.ipynb
# measures (628 TFLOP/s), and the DRAM bandwidth of NVIDIA's H100 Tensor Core GPU datasheet
# (H100 SXM: 3.35 TB/s; https://www.nvidia.com/en-us/data-center/h100/).
H100_SXM = GpuShape("H100 SXM5", sms=132, smem_per_sm=233472, smem_per_block=232448, regs_per_sm=65536,
                    threads_per_sm=2048, ceiling_tflops=628.0, dram_gbs=3350.0)


def blocks_per_sm(tile: TileConfig, gpu: GpuShape) -> int:
    """Resident blocks of `tile` per SM, by shared memory, threads and registers (0: does not fit)."""
    if tile.smem_bytes > gpu.smem_per_block:
        return 0
    regs_per_block = tile.threads * tile.regs
    return min(gpu.smem_per_sm // tile.smem_bytes, gpu.threads_per_sm // tile.threads,
               gpu.regs_per_sm // regs_per_block)


@dataclass(frozen=True)
class Estimate:
    tile: TileConfig
    splits: int
    tiles: int                 # blocks per split
    slots: int                 # blocks the GPU runs at once
    waves: float
    compute_s: float
    memory_s: float
    reduce_s: float            # the second kernel of a split: 0 when K is not split

    @property
    def seconds(self) -> float:
        return max(self.compute_s, self.memory_s) + LAUNCH_S + self.reduce_s

    @property
    def bound(self) -> str:
        return "memory" if self.memory_s > self.compute_s else "compute"


def estimate(tile: TileConfig, splits: int, M: int, N: int, K: int, gpu: GpuShape) -> Estimate | None:
    per_sm = blocks_per_sm(tile, gpu)
    k_tiles = ceil(K / tile.bk)
    if not per_sm or (splits > 1 and k_tiles < splits * MIN_K_TILES_PER_SPLIT) or splits * M * N >= 2**31:
        return None
    tiles = ceil(M / tile.bm) * ceil(N / tile.bn)
    slots = gpu.sms * per_sm
    waves = tiles * splits / slots
    block_flop = 2 * tile.bm * tile.bn * tile.bk * (ceil(k_tiles / splits) + FILL_TILES)
    rate_per_slot = tile.efficiency * gpu.ceiling_tflops * 1e12 / slots
    per_sm_blocks = ceil(tiles * splits / gpu.sms)
    groups, last = divmod(per_sm_blocks, per_sm)
    compute = (groups + (max(last / per_sm, 1 / LONE_SPEEDUP) if last else 0)) * block_flop / rate_per_slot
    bandwidth = gpu.dram_gbs * 1e9
    memory = (2 * (M * K + K * N) + 4 * M * N * splits) / bandwidth
    reduce = LAUNCH_S + 4 * M * N * (splits + 1) / bandwidth if splits > 1 else 0.0
    return Estimate(tile, splits, tiles, slots, waves, compute, memory, reduce)


@dataclass(frozen=True)
class Plan:
    M: int
    N: int
    K: int
    gpu: GpuShape
    choice: Estimate
    candidates: tuple[Estimate, ...]     # every feasible (tile, splits), fastest first

    @property
    def tile(self) -> TileConfig:
        return self.choice.tile

    @property
    def splits(self) -> int:
        return self.choice.splits

    @property
    def why(self) -> str:
        c = self.choice
        blocks = c.tiles * c.splits
        split = (f"K split {c.splits} ways ({ceil(ceil(self.K / c.tile.bk) / c.splits)} K tiles each), "
                 if c.splits > 1 else "K not split, ")
        return (f"{self.M}×{self.N}×{self.K}: {c.tile.name} tiles, {split}{blocks} blocks on "
                f"{c.slots} slots ({self.gpu.sms} SMs × {c.slots // self.gpu.sms}) = {c.waves:.2f} waves; "
                f"{c.bound}-bound by the model, {c.seconds * 1e6:.0f} µs predicted")

    def table(self, rows: int = 6) -> Table:
        """The best `rows` candidates of the model, the chosen one first."""
        body = [[e.tile.name, e.splits, e.tiles * e.splits, e.waves, e.compute_s * 1e6, e.memory_s * 1e6,
                 e.reduce_s * 1e6, e.seconds * 1e6] for e in self.candidates[:rows]]
        return Table([Column("Tile"), Column("Splits"), Column("Blocks"), Column("Waves", ".2f"),
                      Column("Compute µs", ".1f"), Column("Memory µs", ".1f"), Column("Reduce µs", ".1f"),
                      Column("Model µs", ".1f")],
                     body, caption=f"Kernel 4.6's plans for {self.M}×{self.N}×{self.K} on {self.gpu.name}, "
                                   f"by the model's time")

    def __str__(self) -> str:
        return self.why

    def __repr__(self) -> str:
        return textwrap.fill(self.why, TEXT_COLUMN_CHARS, subsequent_indent="  ")


# The mma.sync ceiling as a share of the datasheet's dense fp16 Tensor Core rate: on Hopper mma.sync
# cannot use the whole Tensor Core (book/pipelines.ipynb measures 628 of 989 TFLOP/s on the H100);
# earlier architectures have no faster instruction, so their ceiling is taken as the datasheet's.
MMA_SYNC_SHARE = {"sm_90": 0.64}


def plan(M: int, N: int, K: int, gpu: GpuShape, max_warp_tile: int | None = None) -> Plan:
    """The (tile, splits) with the least modelled time on `gpu`; ties go to the larger tile and fewer
    splits. `gpu`: H100_SXM, or this machine's GPU as tcgemm.engine.gpu.gemm.gpu_shape() reads it (this module
    imports nothing of a gpu subpackage). `max_warp_tile`: only tiles whose warp tile has at most this many
    elements of C (a build that needs more registers per element)."""
    if min(M, N, K) < 1:
        raise ValueError(f"a GEMM needs M, N, K >= 1, got {M}×{N}×{K}")
    tiles = [t for t in TILES if max_warp_tile is None or t.warp_tile <= max_warp_tile]
    found = [e for tile in tiles for s in SPLITS if (e := estimate(tile, s, M, N, K, gpu)) is not None]
    if not found:
        raise ValueError(f"no tile configuration of Kernel 4.6 fits {gpu.name} "
                         f"({gpu.smem_per_block // 1024} KB of shared memory per block)")
    # Equal to 0.1 µs, the model cannot tell: then less compute (more slack if it is memory-bound), then order.
    order = sorted(range(len(found)), key=lambda i: (round(found[i].seconds, 7), round(found[i].compute_s, 7), i))
    ranked = tuple(found[i] for i in order)
    return Plan(M, N, K, gpu, ranked[0], ranked)


@lru_cache(maxsize=1024)
def plan_kernel(spec: GemmKernel, M: int, N: int, K: int, gpu: GpuShape, arch: str) -> GemmKernel:
    """`spec`, a kernel planned per problem (Kernels 4.6, 4.7, D1), with the tile and splits `plan` picks
    for M x N x K on `gpu`, whose architecture is `arch`: the one place a kernel is planned (the launcher's
    prepare and tcgemm.engine.gpu.matmul call it, with tcgemm.engine.gpu.gemm.gpu_shape()). The plan counts K in fp16:
    another input type (Kernel D1) is planned as the fp16 problem of the same bytes, which has as many mma
    instructions, at the same rate per instruction (book/data_types.ipynb), among the tiles its build
    keeps in registers on `arch` (tcgemm.engine.kernel_types.Element.max_warp_tile). Cached: a repeated call
    plans once."""
    if not spec.planned:
        raise ValueError(f"{spec.title} ({spec.variant}) is not planned per problem")
    element = spec.compiled_element
    limit = element.max_warp_tile(arch) if element else None
    chosen = plan(M, N, -(-K * ITEMSIZE[spec.in_dtype] // ITEMSIZE["float16"]), gpu, limit)
    return spec.with_tile(chosen.tile, chosen.splits)
