"""The mma.sync ceiling's arithmetic and operands (pure; the GPU part is tcgemm.engine.gpu.ceiling).

kernels/probe_mma_ceiling.cu runs, per warp, ``rounds`` rounds of CHAINS independent chains of one
mma variant on fragments held in registers: each round adds A_c B to chain c and subtracts it
again (B, then -B), and one last mma with B leaves A_c B. Each lane writes the sum of its chains.
The operands are k/8 (integers k for s8) with k in +-1..+-4, exact in every input type, and every
partial result is 0 or A_c B: a multiple of 1/64 of magnitude at most K/4 <= 8 (s8: an integer of
magnitude at most 16K = 512), exact in every accumulator, fp16 included. So the check is exact
equality with sum_c A_c B, for any number of rounds.
"""
from __future__ import annotations

import textwrap

import numpy as np

from tcgemm.fragment_layouts import MMA_SHAPES, MMA_VARIANTS, mma_layouts, variant_identifier
from tcgemm.registers import to_registers
from tcgemm.hw import MMA_FLOP, flop_per_clock_per_sm, gemm_flops
from tcgemm.style import TEXT_COLUMN_CHARS
from tcgemm.table import Column, Table

CHAINS = 8                  # must match CHAINS in kernels/probe_mma_ceiling.cu
DEFAULT_VARIANT = "m16n8k16.f32"    # the instruction of the book's kernels


def entry(variant: str) -> str:
    """The kernel of kernels/probe_mma_ceiling.cu that runs `variant`."""
    return "mma_ceiling_" + variant_identifier(variant)


def operands(variant: str = DEFAULT_VARIANT, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """CHAINS random A tiles and one B tile of the variant's shapes, values k/8 (s8: k) with k in
    +-1..+-4, as float64."""
    layouts = mma_layouts(variant)
    scale = 1 if MMA_VARIANTS[variant][1] == "s8" else 1 / 8
    rng = np.random.default_rng(seed)

    def draw(shape):
        return rng.integers(1, 5, size=shape) * rng.choice([-1, 1], size=shape) * scale

    return draw((CHAINS, *layouts["A"].shape)), draw(layouts["B"].shape)


def registers(variant: str, a_tiles: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's inputs: (CHAINS, 32, A registers), (32, B registers) for B and for -B, uint32."""
    layouts = mma_layouts(variant)
    ab = MMA_VARIANTS[variant][1]
    a = to_registers(np.stack([layouts["A"].gather(t) for t in a_tiles]), ab)
    return a, to_registers(layouts["B"].gather(b), ab), to_registers(layouts["B"].gather(-b), ab)


def expected(a_tiles: np.ndarray, b: np.ndarray) -> np.ndarray:
    """What every warp must write: sum_c (A_c @ B), exact."""
    return (a_tiles @ b).sum(axis=0)


def warp_results(variant: str, d_words: np.ndarray) -> np.ndarray:
    """(warps, 32, 4) fp32 per-lane outputs (the accumulator's elements) -> (warps, 16, 8) matrices."""
    d = mma_layouts(variant)["D"]
    return np.stack([d.scatter(w) for w in d_words])


def mma_flop(variant: str) -> int:
    """Floating-point (or integer) operations of one mma of the variant, a multiply-add counting two."""
    return gemm_flops(*MMA_SHAPES[MMA_VARIANTS[variant][0]])


def rate_unit(variant: str) -> str:
    """TFLOP/s, or TOP/s for the integer variant (its multiply-adds are not floating point)."""
    return "TOP/s" if MMA_VARIANTS[variant][2] == "s32" else "TFLOP/s"


def flops(variant: str, warps: int, rounds: int) -> int:
    """Operations of one launch: every warp runs 2 * rounds + 1 mma per chain."""
    return warps * CHAINS * (2 * rounds + 1) * mma_flop(variant)


def variants_table(ceilings, peak=None, notes=(), sm_count: int | None = None,
                   sm_clock_mhz: float | None = None) -> Table:
    """One row per measured ceiling (tcgemm.engine.gpu.ceiling.Ceiling): its instruction's types, the rate
    measured, the datasheet's rate for those types (tcgemm.hw.Peak.rate; n/a where it states none),
    the measured share of it, and, given the GPU's SM count and clock, the instructions each SM
    completes per clock at that rate. `notes`: lines under the table (variants this GPU lacks)."""
    rows = []
    for c in ceilings:
        _, ab, acc = MMA_VARIANTS[c.variant]
        published = peak.rate(ab, acc) if peak else None
        per_clock = (flop_per_clock_per_sm(c.tflops, sm_count, sm_clock_mhz) / mma_flop(c.variant)
                     if sm_count and sm_clock_mhz else None)
        rows.append([c.variant, f"{ab} -> {acc}", c.tflops, rate_unit(c.variant), published,
                     100 * c.tflops / published if published else None, per_clock])
    caption = f"Datasheet: {peak.label}, {peak.source.split(':')[0]}" if peak else "No datasheet rates for this GPU"
    if sm_clock_mhz:
        caption += f"; mma per clock per SM at {sm_clock_mhz:.0f} MHz"
    return Table(["Variant", "A/B -> accumulator", Column("Measured", ".1f"), "Unit", Column("Datasheet", ".1f"),
                  Column("Share", ".0f", unit="%"), Column("mma per clock per SM", ".2f")],
                 rows, caption=caption, notes=notes)


def runs_table(runs) -> Table:
    """One row per ceiling run (tcgemm.engine.gpu.ceiling.run_once): warps per SM, TFLOP/s, whether exact."""
    return Table(["Warps per SM", Column("TFLOP/s", ".1f"), "Result"],
                 [[r.warps_per_sm, r.tflops, "exact" if r.exact else "WRONG"] for r in runs])


def per_clock_text(tflops: float, sm_count: int, sm_clock_mhz: float) -> str:
    """A rate as m16n8k16 per clock per SM at the given clock, wrapped to the book's text column."""
    per_clock = flop_per_clock_per_sm(tflops, sm_count, sm_clock_mhz) / MMA_FLOP
    return textwrap.fill(f"= {per_clock:.2f} m16n8k16 per clock per SM at the {sm_clock_mhz:.0f} MHz boost clock "
                         f"(more per clock if the GPU runs slower under load)", TEXT_COLUMN_CHARS)

