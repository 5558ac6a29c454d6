"""Ask the hardware which lane and register hold which matrix element, and compare with tcgemm.fragments.layouts.

mma probes. Each experiment is one warp running one mma.sync on register contents chosen by the host.
  D observed directly: A[m,0] = m, A[m,1] = 1, B[0,n] = 8, B[1,n] = n + 1, all else 0, so that
    D[m,n] = 8m + n + 1 names its own position; each lane's D registers tell where they sit.
  A observed: a single 1 in one (lane, element) of A; B[k,n] = k + 1. D is non-zero in one row only,
    the row of that element, and its value is the element's column + 1.
  B observed: a single 1 in one (lane, element) of B; A[m,k] = k + 1. D is non-zero in one column,
    the element's column, and its value is the element's row + 1.
  C observed: a single 1 in one (lane, element) of C, A = B = 0; D = C shows C shares D's layout.
Each operand is observed through the maps of the others, so a wrong map shows up on its own line.
One thing no mma experiment can see: renumbering k the same way in A and B leaves A @ B unchanged.
The ldmatrix probe pins that down, since it reads from addresses we choose.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tcgemm.catalog import PROBES
from tcgemm.fragments.layouts import (FragmentLayout, MMA_VARIANTS, ldmatrix_address_lane, ldmatrix_instruction,
                                     ldmatrix_layout, mma_layout, ptx_instruction, same_positions)
from tcgemm.gpu.compile import get_function
from tcgemm.gpu.device import require_gpu
from tcgemm.table import Table

_DTYPES = {"f16": np.float16, "s8": np.int8, "f32": np.float32, "s32": np.int32}
VERDICT = {True: "MATCH", False: "MISMATCH"}
_MMA_SOURCE = PROBES["mma"].source
_LDMATRIX_SOURCE = PROBES["ldmatrix"].source


def _entry(variant: str) -> str:
    return "probe_mma_" + variant.replace(".", "_")


def _layouts(variant: str) -> dict[str, FragmentLayout]:
    shape, ab, acc = MMA_VARIANTS[variant]
    return {op: mma_layout(shape, op, ab, acc) for op in "ABCD"}


def _types(variant: str) -> dict[str, type]:
    _, ab, acc = MMA_VARIANTS[variant]
    return {"A": _DTYPES[ab], "B": _DTYPES[ab], "C": _DTYPES[acc], "D": _DTYPES[acc]}


def _to_registers(values: np.ndarray, dtype) -> np.ndarray:
    """(experiments, 32, elements) values -> (experiments, 32, registers) uint32 words."""
    return np.ascontiguousarray(values.astype(dtype)).view(np.uint32)


def run_mma(variant: str, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Run one mma per experiment on per-lane element values (shape (E, 32, elements)); return D's."""
    cupy = require_gpu()
    types = _types(variant)
    experiments = a.shape[0]
    regs = [cupy.asarray(_to_registers(v, types[op])) for op, v in (("A", a), ("B", b), ("C", c))]
    d_elements = _layouts(variant)["D"].elements_per_lane
    d_words = d_elements * np.dtype(types["D"]).itemsize // 4
    d = cupy.zeros((experiments, 32, d_words), dtype=np.uint32)
    get_function(_MMA_SOURCE, _entry(variant))((experiments,), (32,), (*regs, d))
    return cupy.asnumpy(d).view(types["D"]).astype(np.float64)


def _batch(layout: FragmentLayout, matrix: np.ndarray, experiments: int) -> np.ndarray:
    return np.broadcast_to(layout.gather(matrix), (experiments, 32, layout.elements_per_lane)).copy()


def _one_hot(layout: FragmentLayout) -> np.ndarray:
    """One experiment per (lane, element): that element is 1, all others 0."""
    n = 32 * layout.elements_per_lane
    return np.eye(n).reshape(n, 32, layout.elements_per_lane)


def _observed(layout: FragmentLayout, rows: np.ndarray, cols: np.ndarray) -> FragmentLayout:
    shape = (32, layout.elements_per_lane)
    return replace(layout, name=layout.name + " (observed)", row=rows.reshape(shape), col=cols.reshape(shape))


def _locate(d_matrices: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """For each experiment's D, the single non-zero row (axis=1) or column (axis=0) and its value.
    Returns -1 where D is not exactly one constant non-zero line."""
    where, values = [], []
    for d in d_matrices:
        lines = np.flatnonzero(np.any(d != 0, axis=axis))
        line = np.take(d, lines[0], axis=1 - axis) if len(lines) == 1 else None
        ok = line is not None and np.all(line == line[0])
        where.append(lines[0] if ok else -1)
        values.append(int(line[0]) if ok else -1)
    return np.array(where), np.array(values)


def same_layout(a: FragmentLayout, b: FragmentLayout) -> bool:
    return same_positions(a, b)


@dataclass(frozen=True)
class OperandProbe:
    operand: str
    expected: FragmentLayout
    observed: FragmentLayout

    @property
    def match(self) -> bool:
        return same_layout(self.expected, self.observed)

    @property
    def mismatches(self) -> int:
        return int(np.count_nonzero((self.expected.row != self.observed.row) | (self.expected.col != self.observed.col)))


def observe_mma(variant: str) -> dict[str, OperandProbe]:
    L = _layouts(variant)
    la, lb, lc, ld = L["A"], L["B"], L["C"], L["D"]
    (m, k), n = la.shape, lb.shape[1]
    probes = {}

    # D: positions written as values.
    A = np.zeros((m, k)); A[:, 0] = np.arange(m); A[:, 1] = 1
    B = np.zeros((k, n)); B[0, :] = 8; B[1, :] = np.arange(n) + 1
    d = run_mma(variant, _batch(la, A, 1), _batch(lb, B, 1), np.zeros((1, 32, lc.elements_per_lane)))[0]
    pos = d.astype(int) - 1
    probes["D"] = OperandProbe("D", ld, _observed(ld, pos // 8, pos % 8))

    # A: one element at a time; B[k, n] = k + 1.
    a = _one_hot(la)
    e = a.shape[0]
    B = np.repeat(np.arange(k, dtype=float)[:, None] + 1, n, axis=1)
    d = run_mma(variant, a, _batch(lb, B, e), np.zeros((e, 32, lc.elements_per_lane)))
    rows, vals = _locate(np.array([ld.scatter(x) for x in d]), axis=1)
    probes["A"] = OperandProbe("A", la, _observed(la, rows, vals - 1))

    # B: one element at a time; A[m, k] = k + 1.
    b = _one_hot(lb)
    e = b.shape[0]
    A = np.repeat(np.arange(k, dtype=float)[None, :] + 1, m, axis=0)
    d = run_mma(variant, _batch(la, A, e), b, np.zeros((e, 32, lc.elements_per_lane)))
    cols, vals = _locate(np.array([ld.scatter(x) for x in d]), axis=0)
    probes["B"] = OperandProbe("B", lb, _observed(lb, vals - 1, cols))

    # C: one element at a time, A = B = 0, so D = C.
    c = _one_hot(lc)
    e = c.shape[0]
    d = run_mma(variant, np.zeros((e, 32, la.elements_per_lane)), np.zeros((e, 32, lb.elements_per_lane)), c)
    flat = np.array([np.flatnonzero(ld.scatter(x).ravel() == 1) for x in d], dtype=object)
    found = np.array([f[0] if len(f) == 1 else -1 for f in flat])
    rows = np.where(found >= 0, found // n, -1)
    cols = np.where(found >= 0, found % n, -1)
    probes["C"] = OperandProbe("C", lc, _observed(lc, rows, cols))
    return {op: probes[op] for op in "ABCD"}


def mma_verdict_table(verdicts) -> Table:
    """One row per (instruction, {operand: layout matches}, random product matches): each operand's
    observed layout against tcgemm.fragments.layouts, and a random product decoded through all four."""
    return Table(["Instruction", *"ABCD", "Random product"],
                 [[instruction, *(VERDICT[matches[op]] for op in "ABCD"), VERDICT[product]]
                  for instruction, matches, product in verdicts])


def mma_verdicts(variants=MMA_VARIANTS) -> Table:
    """mma_verdict_table of each variant, observed on this GPU."""
    return mma_verdict_table(
        (ptx_instruction(v), {op: p.match for op, p in observe_mma(v).items()}, random_product_check(v))
        for v in variants)


def random_product_check(variant: str, experiments: int = 8, seed: int = 0) -> bool:
    """D = A @ B + C on random small integers (exact in every type), decoded through all four maps."""
    L = _layouts(variant)
    rng = np.random.default_rng(seed)
    mats = {op: rng.integers(-3, 4, size=(experiments, *L[op].shape)).astype(float) for op in "ABC"}
    regs = {op: np.array([L[op].gather(x) for x in mats[op]]) for op in "ABC"}
    d = run_mma(variant, regs["A"], regs["B"], regs["C"])
    got = np.array([L["D"].scatter(x) for x in d])
    return bool(np.array_equal(got, mats["A"] @ mats["B"] + mats["C"]))


@dataclass(frozen=True)
class LdmatrixProbe:
    num: int
    trans: bool
    expected: FragmentLayout
    observed: FragmentLayout
    shuffled_rows_match: bool

    @property
    def layout_match(self) -> bool:
        return same_layout(self.expected, self.observed)

    @property
    def match(self) -> bool:
        return self.layout_match and self.shuffled_rows_match

    def __str__(self) -> str:
        return (f"{ldmatrix_instruction(self.num, self.trans):<48} layout: {VERDICT[self.layout_match]}  "
                f"shuffled rows: {VERDICT[self.shuffled_rows_match]}")


def run_ldmatrix(num: int, trans: bool, row_of_lane: np.ndarray) -> np.ndarray:
    """ldmatrix over 32 stored rows of 8 b16 values tagged 8*row + col; lane l points at row row_of_lane[l].
    Returns the received tags, shape (32, 2*num)."""
    cupy = require_gpu()
    src = cupy.arange(256, dtype=np.uint16)
    offsets = cupy.asarray(np.asarray(row_of_lane, dtype=np.int32) * 8)
    out = cupy.zeros((32, num), dtype=np.uint32)
    entry = f"probe_ldmatrix_x{num}" + ("_trans" if trans else "")
    get_function(_LDMATRIX_SOURCE, entry)((1,), (32,), (src, offsets, out))
    return cupy.asnumpy(out).view(np.uint16).astype(int)


def observe_ldmatrix(num: int, trans: bool = False, seed: int = 0) -> LdmatrixProbe:
    layout = ldmatrix_layout(num, trans)
    rows_given = 8 * num
    straight = np.arange(32) % rows_given
    tags = run_ldmatrix(num, trans, straight)
    observed = _observed(layout, tags // 8, tags % 8)

    # Rows may live anywhere: give each address lane a random stored row and predict what arrives.
    perm = np.random.default_rng(seed).permutation(32)
    tags = run_ldmatrix(num, trans, perm)
    stored_row = perm[ldmatrix_address_lane(num)]          # stacked row r -> stored row it was read from
    expected_tags = stored_row[layout.row] * 8 + layout.col
    return LdmatrixProbe(num, trans, layout, observed, bool(np.array_equal(tags, expected_tags)))


def ldmatrix_verdict_table(probes) -> Table:
    """One row per LdmatrixProbe: its instruction, its layout and its shuffled-rows verdicts."""
    return Table(["Instruction", "Layout", "Shuffled rows"],
                 [[ldmatrix_instruction(p.num, p.trans), VERDICT[p.layout_match], VERDICT[p.shuffled_rows_match]]
                  for p in probes])


def observe_every_ldmatrix() -> list[LdmatrixProbe]:
    """observe_ldmatrix for .x1, .x2 and .x4, each without and with .trans."""
    return [observe_ldmatrix(num, trans) for num in (1, 2, 4) for trans in (False, True)]
