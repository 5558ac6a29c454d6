"""The mma.sync ceiling's arithmetic and operands (pure; the GPU part is tcgemm.gpu.ceiling).

kernels/probe_mma_ceiling.cu runs, per warp, ``iters`` rounds of CHAINS independent
mma.m16n8k16 on fragments held in registers, and writes the sum of its chains. The operands are
multiples of 1/8 in [-1/2, 1/2], never zero, so every partial result is exact in fp32 and the
check is exact equality: a chain is at most 16 * (1/2)^2 * iters = 4 * iters in magnitude on a
grid of 1/64, i.e. within fp32's 24 bits for iters up to 2^14 even after summing 8 chains.
"""
from __future__ import annotations

import textwrap

import numpy as np

from tcgemm.fragments.layouts import mma_layout
from tcgemm.hw import MMA_FLOP, flop_per_clock_per_sm
from tcgemm.style import TEXT_COLUMN_CHARS
from tcgemm.table import Column, Table

CHAINS = 8                  # must match CHAINS in kernels/probe_mma_ceiling.cu
MAX_ITERS = 1 << 14

A_LAYOUT = mma_layout("m16n8k16", "A", "f16", "f32")
B_LAYOUT = mma_layout("m16n8k16", "B", "f16", "f32")
D_LAYOUT = mma_layout("m16n8k16", "D", "f16", "f32")


def operands(seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """CHAINS random 16x16 A tiles and one 16x8 B tile, fp16, values k/8 with k in +-1..+-4."""
    rng = np.random.default_rng(seed)

    def draw(shape):
        k = rng.integers(1, 5, size=shape) * rng.choice([-1, 1], size=shape)
        return (k / 8).astype(np.float16)

    return draw((CHAINS, 16, 16)), draw((16, 8))


def registers(a_tiles: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's inputs: (CHAINS, 32, 4) and (32, 2) uint32 words, each lane's fragment registers."""
    a = np.stack([A_LAYOUT.gather(t) for t in a_tiles]).astype(np.float16)
    return np.ascontiguousarray(a).view(np.uint32), np.ascontiguousarray(B_LAYOUT.gather(b).astype(np.float16)).view(np.uint32)


def expected(a_tiles: np.ndarray, b: np.ndarray, iters: int) -> np.ndarray:
    """What every warp must write: iters * sum_c (A_c @ B), 16x8, exact."""
    if not 1 <= iters <= MAX_ITERS:
        raise ValueError(f"iters must be in 1..{MAX_ITERS} for the exact check, got {iters}")
    products = a_tiles.astype(np.float64) @ b.astype(np.float64)
    return iters * products.sum(axis=0)


def warp_results(d_words: np.ndarray) -> np.ndarray:
    """(warps, 32, 4) fp32 per-lane outputs -> (warps, 16, 8) matrices."""
    return np.stack([D_LAYOUT.scatter(w) for w in d_words])


def flops(warps: int, iters: int) -> int:
    return warps * iters * CHAINS * MMA_FLOP


def runs_table(runs) -> Table:
    """One row per ceiling run (tcgemm.gpu.ceiling.run_once): warps per SM, TFLOP/s, whether exact."""
    return Table(["Warps per SM", Column("TFLOP/s", ".1f"), "Result"],
                 [[r.warps_per_sm, r.tflops, "exact" if r.exact else "WRONG"] for r in runs])


def per_clock_text(tflops: float, sm_count: int, sm_clock_mhz: float) -> str:
    """A rate as m16n8k16 per clock per SM at the given clock, wrapped to the book's text column."""
    per_clock = flop_per_clock_per_sm(tflops, sm_count, sm_clock_mhz) / MMA_FLOP
    return textwrap.fill(f"= {per_clock:.2f} m16n8k16 per clock per SM at the {sm_clock_mhz:.0f} MHz boost clock "
                         f"(more per clock if the GPU runs slower under load)", TEXT_COLUMN_CHARS)

