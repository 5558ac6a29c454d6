"""wgmma, Hopper's warpgroup MMA, as data: its shapes and its accumulator fragment layout. Pure module.

A warpgroup is 4 consecutive warps whose first warp index is a multiple of 4 (128 threads). One
``wgmma.mma_async`` computes D (64 x N) = A (64 x K) @ B (K x N) + D for the whole warpgroup; B, and
A unless it comes from registers, are read by the Tensor Core from shared memory through matrix
descriptors (tcgemm.canonical). The accumulator stays in registers, laid out as PTX ISA section
"Register Fragments" of wgmma gives it: warp w of the warpgroup holds rows 16w..16w+15, and within
them every 8 columns repeat mma.sync's m16n8 accumulator layout (tcgemm.fragment_layouts):

    row = 16 * w + groupID + 8 * ((i >> 1) & 1)
    col = 8 * (i >> 2) + 2 * threadID_in_group + (i & 1)      for d_i, i = 0 .. N/2 - 1

The shapes are the PTX ISA's (section "Matrix Shape" of wgmma): K is 32 bytes of the input type, so
256 for the single-bit type b1, whose product is an AND of two bits and whose sum is a population
count (the instruction names the operation: ``.and.popc``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcgemm.errors import OperandError
from tcgemm.fragment_layouts import WARP_SIZE, FragmentLayout
from tcgemm.table import Table

WARPGROUP_WARPS = 4
WARPGROUP_SIZE = WARPGROUP_WARPS * WARP_SIZE
WGMMA_M = 64

_DENSE_N = tuple(range(8, 257, 8))
# The integer wgmma takes N in steps of 8 up to 32, then steps of 16.
_INTEGER_N = (8, 16, 24, 32) + tuple(range(48, 257, 16))


@dataclass(frozen=True)
class WgmmaType:
    """The dense wgmma of one A/B element type: its K, accumulator types and the N it accepts."""

    ab_type: str
    k: int
    acc_types: tuple[str, ...]
    n_values: tuple[int, ...]
    op: str = ""            # the operation the instruction names (b1: "and.popc"), "" for a product


WGMMA_TYPES: dict[str, WgmmaType] = {
    t.ab_type: t
    for t in (
        WgmmaType("f16", 16, ("f32", "f16"), _DENSE_N),
        WgmmaType("bf16", 16, ("f32",), _DENSE_N),
        WgmmaType("tf32", 8, ("f32",), _DENSE_N),
        WgmmaType("e4m3", 32, ("f32", "f16"), _DENSE_N),
        WgmmaType("e5m2", 32, ("f32", "f16"), _DENSE_N),
        WgmmaType("s8", 32, ("s32",), _INTEGER_N),
        WgmmaType("u8", 32, ("s32",), _INTEGER_N),
        WgmmaType("b1", 256, ("s32",), _INTEGER_N, "and.popc"),
    )
}


def wgmma_type(ab_type: str) -> WgmmaType:
    if ab_type not in WGMMA_TYPES:
        raise ValueError(f"wgmma has no dense A/B type {ab_type!r}; accepted: {', '.join(WGMMA_TYPES)}")
    return WGMMA_TYPES[ab_type]


def wgmma_shape(n: int, ab_type: str = "f16") -> str:
    """The shape name, m64n<n>k<K>; ValueError where wgmma has no such N for ``ab_type``."""
    t = wgmma_type(ab_type)
    if n not in t.n_values:
        raise ValueError(f"wgmma with .{ab_type} inputs takes N in {t.n_values[0]}, {t.n_values[1]}, ..., "
                         f"{t.n_values[-1]} ({len(t.n_values)} values), got {n!r}")
    return f"m{WGMMA_M}n{n}k{t.k}"


def wgmma_instruction(n: int, ab_type: str = "f16", acc_type: str | None = None) -> str:
    """wgmma.mma_async.sync.aligned.m64n<n>k<K>.<acc>.<ab>.<ab>[.<op>], both operands from shared memory."""
    t = wgmma_type(ab_type)
    acc_type = acc_type or t.acc_types[0]
    if acc_type not in t.acc_types:
        raise ValueError(f"wgmma with .{ab_type} inputs accumulates in {', '.join(t.acc_types)}, not {acc_type!r}")
    op = f".{t.op}" if t.op else ""
    return f"wgmma.mma_async.sync.aligned.{wgmma_shape(n, ab_type)}.{acc_type}.{ab_type}.{ab_type}{op}"


def shapes_table() -> Table:
    """One row per A/B type: K, the accumulator types, the N it takes and its largest shape."""
    rows = []
    for t in WGMMA_TYPES.values():
        n = ("8 to 256 in steps of 8" if t.n_values == _DENSE_N
             else "8, 16, 24, 32, then 48 to 256 in steps of 16")
        rows.append([t.ab_type, t.k, ", ".join(t.acc_types), n, wgmma_shape(t.n_values[-1], t.ab_type)])
    notes = [f"{t.ab_type}: the instruction's operation is .{t.op} (each product an AND of two bits, the sum "
             "a population count)" for t in WGMMA_TYPES.values() if t.op]
    return Table(["A/B", "K", "Accumulator", "N", "Largest"], rows, caption=f"wgmma shapes m{WGMMA_M}nNkK (dense)",
                 notes=notes)


def warpgroup_coordinates(thread: int) -> tuple[int, int, int, int]:
    """(warp in the warpgroup, lane, groupID, threadID_in_group) of a thread of the warpgroup (0..127)."""
    if not 0 <= thread < WARPGROUP_SIZE:
        raise ValueError(f"a warpgroup thread is 0..{WARPGROUP_SIZE - 1}, got {thread}")
    lane = thread % WARP_SIZE
    return thread // WARP_SIZE, lane, lane >> 2, lane % 4


@dataclass(frozen=True, eq=False)
class AccumulatorLayout:
    """Which D entry (row, col) register d_i of each warpgroup thread holds: row and col (128, N/2)."""

    n: int
    acc_type: str
    row: np.ndarray
    col: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return WGMMA_M, self.n

    @property
    def registers_per_thread(self) -> int:
        return self.row.shape[1]

    def warp_fragment(self, warp: int) -> FragmentLayout:
        """Warp ``warp``'s part, rows 16w..16w+15 renumbered 0..15, as a 32-lane FragmentLayout."""
        if not 0 <= warp < WARPGROUP_WARPS:
            raise ValueError(f"a warpgroup has warps 0..{WARPGROUP_WARPS - 1}, got {warp}")
        rows = slice(warp * WARP_SIZE, (warp + 1) * WARP_SIZE)
        return FragmentLayout(name=f"wgmma m64n{self.n} .{self.acc_type} D, warp {warp}", operand="D",
                              shape=(16, self.n), elements_per_register=1,
                              row=self.row[rows] - 16 * warp, col=self.col[rows])

    def m16n8_blocks(self) -> dict[tuple[int, int], FragmentLayout]:
        """(warp w, column block j) -> rows 16w.., columns 8j.., registers 4j..4j+3 renumbered from 0,
        as a 16 x 8 FragmentLayout: the shape of mma.sync's m16n8 accumulator."""
        blocks = {}
        for w in range(WARPGROUP_WARPS):
            warp = self.warp_fragment(w)
            for j in range(self.n // 8):
                registers = slice(4 * j, 4 * j + 4)
                blocks[w, j] = FragmentLayout(f"{warp.name}, columns {8 * j}-{8 * j + 7}", "D", (16, 8), 1,
                                              warp.row[:, registers], warp.col[:, registers] - 8 * j)
        return blocks

    def scatter(self, values) -> np.ndarray:
        """(128, N/2) register values of the warpgroup -> the 64 x N matrix D."""
        values = np.asarray(values)
        if values.shape != self.row.shape:
            raise OperandError(f"expected accumulator values of shape {self.row.shape}, got {values.shape}")
        matrix = np.zeros(self.shape, dtype=values.dtype)
        matrix[self.row, self.col] = values
        return matrix

    def gather(self, matrix) -> np.ndarray:
        """The 64 x N matrix D -> the (128, N/2) values the warpgroup's registers hold."""
        matrix = np.asarray(matrix)
        if matrix.shape != self.shape:
            raise OperandError(f"expected a {self.shape} matrix, got {matrix.shape}")
        return matrix[self.row, self.col]


def accumulator_layout(n: int, ab_type: str = "f16", acc_type: str = "f32") -> AccumulatorLayout:
    """The accumulator layout of wgmma m64n<n>: one 32-bit register per entry (f32 or s32)."""
    wgmma_instruction(n, ab_type, acc_type)          # validates n and the types
    if acc_type == "f16":
        raise ValueError("an f16 accumulator packs two entries per register; this layout covers "
                         "32-bit accumulators (f32, s32)")
    thread = np.arange(WARPGROUP_SIZE)[:, None]
    i = np.arange(n // 2)[None, :]
    lane = thread % WARP_SIZE
    g, t = lane >> 2, lane % 4
    row = 16 * (thread // WARP_SIZE) + g + 8 * ((i >> 1) & 1)
    col = 8 * (i >> 2) + 2 * t + (i & 1)
    return AccumulatorLayout(n, acc_type, np.broadcast_to(row, (WARPGROUP_SIZE, n // 2)).copy(),
                             np.broadcast_to(col, (WARPGROUP_SIZE, n // 2)).copy())
