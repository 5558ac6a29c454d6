"""WMMA fragments (nvcuda::wmma, shape m16n16k16) as data: what the book expects, and how to read a probe.

CUDA leaves a wmma::fragment's layout unspecified: code may touch frag.x[i] only through operations
that treat every element alike. The probe (kernels/probe_wmma.cu, tcgemm.fragments.gpu.wmma) finds it out.
Our expectation, from the SASS (every m16n16k16 mma_sync becomes two m16n8k16 instructions, HMMA.16816
or IMMA.16816, fed by the loads with no data movement in between for A row-major and B column-major):

  matrix_a (16 x 16)      the A fragment of one mma.m16n8k16;
  matrix_b (16 x 16)      two B fragments of mma.m16n8k16 side by side: n 0-7, then n 8-15;
  accumulator (16 x 16)   two C fragments of mma.m16n8k16 side by side, likewise.

The fp16 operand fragments of cuda's mma.h hold 16 elements per lane, twice the 256 / 32 a lane
needs: we expect x[8:16] to repeat x[0:8]. int8 operands hold 8 (four per 32-bit register, as in
mma.m16n8k16.s8); accumulators 8 in every type. The memory order a fragment is loaded from (its
row_major / col_major parameter) should not change where an element lands, only how it is loaded.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcgemm.fragment_layouts import WARP_SIZE, FragmentLayout, mma_layout, same_positions
from tcgemm.table import Table

TILE = 16
# The probe's fragment kinds: name -> (element type, operand, memory order it is loaded from).
WMMA_KINDS: dict[str, tuple[str, str, str]] = {
    "f16 matrix_a row_major": ("f16", "A", "row"),
    "f16 matrix_a col_major": ("f16", "A", "col"),
    "f16 matrix_b row_major": ("f16", "B", "row"),
    "f16 matrix_b col_major": ("f16", "B", "col"),
    "f32 accumulator": ("f32", "C", "row"),
    "s8 matrix_a row_major": ("s8", "A", "row"),
    "s8 matrix_a col_major": ("s8", "A", "col"),
    "s8 matrix_b row_major": ("s8", "B", "row"),
    "s8 matrix_b col_major": ("s8", "B", "col"),
    "s32 accumulator": ("s32", "C", "row"),
}
_BITS = {"f16": 16, "s8": 8, "f32": 32, "s32": 32}
_AB_TYPE = {"f16": "f16", "f32": "f16", "s8": "s8", "s32": "s8"}   # the input type of a kind's mma
_COPIES = {"f16": 2}    # fp16 operand fragments: every element twice (cuda's mma.h sizes them 16 per lane)


def probe_entry(kind: str) -> str:
    """The kernel of kernels/probe_wmma.cu that loads and writes out this kind of fragment."""
    dtype, operand, order = _kind(kind)
    use = {"A": "a_", "B": "b_", "C": "acc"}[operand]
    return f"probe_wmma_{dtype}_{use}{order if operand != 'C' else ''}"


def _kind(kind: str) -> tuple[str, str, str]:
    if kind not in WMMA_KINDS:
        raise ValueError(f"unknown WMMA fragment kind {kind!r}; the kinds are: {', '.join(WMMA_KINDS)}")
    return WMMA_KINDS[kind]


def _layout(name: str, operand: str, dtype: str, row, col) -> FragmentLayout:
    return FragmentLayout(name=name, operand=operand, shape=(TILE, TILE),
                          elements_per_register=32 // _BITS[dtype], row=row, col=col)


def _side_by_side(layout: FragmentLayout) -> tuple[np.ndarray, np.ndarray]:
    """A 16 x 8 fragment, then the same fragment moved 8 columns right: a 16 x 16 one."""
    return np.hstack([layout.row, layout.row]), np.hstack([layout.col, layout.col + 8])


def _one_mma(kind: str) -> FragmentLayout:
    """The fragment of one mma.m16n8k16 with this kind's types: A 16 x 16, B and C 16 x 8.
    mma.m16n8k16.s8 has the A and B of mma.m16n8k32's k < 16 registers (PTX ISA)."""
    dtype, operand, _ = _kind(kind)
    if operand == "C" or dtype == "f16":
        return mma_layout("m16n8k16", operand, "f16", "f32")   # C: the same positions for any accumulator
    k32 = mma_layout("m16n8k32", operand, "s8", "s32")
    keep = k32.elements_per_lane // 2
    return FragmentLayout(name=f"mma.m16n8k16 .s8 {operand}", operand=operand,
                          shape=(TILE, TILE) if operand == "A" else (TILE, 8), elements_per_register=4,
                          row=k32.row[:, :keep], col=k32.col[:, :keep])


def mma_pair(kind: str) -> FragmentLayout:
    """The two mma.m16n8k16 of one m16n16k16 step (n 0-7 and n 8-15) as one 16 x 16 map: they share
    A, so for matrix_a this is one A fragment; B and C are two fragments side by side."""
    dtype, operand, _ = _kind(kind)
    one = _one_mma(kind)
    if operand == "A":
        return _layout(f"mma.m16n8k16 .{dtype} A", operand, dtype, one.row, one.col)
    return _layout(f"two mma.m16n8k16 .{dtype} {operand}", operand, dtype, *_side_by_side(one))


def expected(kind: str) -> FragmentLayout:
    """The layout the book expects the probe to observe for this kind (see the module docstring)."""
    dtype, operand, _ = _kind(kind)
    pair = mma_pair(kind)
    copies = _COPIES.get(dtype, 1) if operand != "C" else 1
    return _layout(f"wmma {kind} (expected)", operand, dtype,
                   np.hstack([pair.row] * copies), np.hstack([pair.col] * copies))


def observed_layout(kind: str, row_tags: np.ndarray, col_tags: np.ndarray) -> FragmentLayout:
    """The map the probe saw: what each (lane, i) received when the matrix held its row indices
    (row_tags, shape (32, num_elements)) and when it held its column indices (col_tags)."""
    dtype, operand, _ = _kind(kind)
    row_tags, col_tags = np.asarray(row_tags), np.asarray(col_tags)
    if row_tags.shape != col_tags.shape or row_tags.ndim != 2 or row_tags.shape[0] != WARP_SIZE:
        raise ValueError(f"{kind}: tags must both be (32, num_elements) arrays, got {row_tags.shape} "
                         f"and {col_tags.shape}")
    return _layout(f"wmma {kind} (observed)", operand, dtype, row_tags, col_tags)


def copies_held(layout: FragmentLayout) -> np.ndarray:
    """How many (lane, element) slots hold each entry of the 16 x 16 matrix."""
    count = np.zeros(layout.shape, dtype=np.int64)
    np.add.at(count, (layout.row, layout.col), 1)
    return count


def first_copy(layout: FragmentLayout) -> FragmentLayout:
    """x[0 : 256 / 32] of every lane: one copy of the matrix when the fragment holds it whole at the front
    (drawable with tcgemm.fragments.draw.fragment_grid). Raises ValueError if those slots do not cover
    every entry exactly once."""
    keep = TILE * TILE // WARP_SIZE
    front = FragmentLayout(name=layout.name, operand=layout.operand, shape=layout.shape,
                           elements_per_register=layout.elements_per_register,
                           row=layout.row[:, :keep], col=layout.col[:, :keep])
    front.inverse()
    return front


@dataclass(frozen=True)
class WmmaVerdict:
    """One fragment kind: the observed map against the expectation and against two m16n8k16."""
    kind: str
    observed: FragmentLayout

    @property
    def copies(self) -> str:
        """'1' or '2' when every entry is held equally often, else 'uneven'."""
        held = set(copies_held(self.observed).ravel().tolist())
        return str(held.pop()) if len(held) == 1 else "uneven"

    @property
    def matches_expected(self) -> bool:
        return same_positions(self.observed, expected(self.kind))

    @property
    def front_is_mma_pair(self) -> bool:
        """x[0:8] of every lane is the two-m16n8k16 map (the A fragment of one, for matrix_a)."""
        keep = TILE * TILE // WARP_SIZE
        pair = mma_pair(self.kind)
        return self.observed.elements_per_lane >= keep and bool(
            np.array_equal(self.observed.row[:, :keep], pair.row) and np.array_equal(self.observed.col[:, :keep], pair.col))

    @property
    def same_entries_per_lane(self) -> bool:
        """Each lane holds the entries the two-m16n8k16 map gives it, in whatever element order."""
        pair = mma_pair(self.kind)
        return all({*zip(self.observed.row[l], self.observed.col[l])} == {*zip(pair.row[l], pair.col[l])}
                   for l in range(WARP_SIZE))

    @property
    def against_mma(self) -> str:
        if self.front_is_mma_pair:
            return "equal" if self.observed.elements_per_lane == mma_pair(self.kind).elements_per_lane \
                else "equal in x[0:8]"
        return "same entries, other order" if self.same_entries_per_lane else "different"


def verdict_table(verdicts) -> Table:
    """One row per WmmaVerdict: elements per lane, copies of each entry, against two m16n8k16, expected."""
    return Table(["Fragment", "x[i] per lane", "Copies", "vs m16n8k16", "Expected"],
                 [[v.kind, v.observed.elements_per_lane, v.copies, v.against_mma,
                   "MATCH" if v.matches_expected else "MISMATCH"] for v in verdicts])


def cases_table() -> Table:
    """The four transpose cases of the WMMA kernels: how A and B are stored, the fragment layouts and
    the -D flags that select them, and which case is mma.sync's own (A row-major, B column-major)."""
    from tcgemm.engine.catalog import WMMA_CASES
    from tcgemm.engine.kernel_types import MMA_ORDERS, WmmaKernel

    stored = {"C": "row-major", "F": "column-major"}
    layout = {"C": "row_major", "F": "col_major"}
    rows = [[f"D = α·{case.replace(' ', '·')} + β·C", stored[a], stored[b], layout[a], layout[b],
             " ".join(f"-D{name}={value}" for name, value in WmmaKernel.defines(a, b)),
             "yes" if (a, b) == MMA_ORDERS else "no"] for case, (a, b) in WMMA_CASES.items()]
    return Table(["Case", "A stored", "B stored", "matrix_a", "matrix_b", "Compiled with", "mma's orders"], rows)
