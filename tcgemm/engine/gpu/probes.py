"""Ask the hardware which lane and register hold which matrix element, and compare with tcgemm.fragment_layouts.

mma probes. Each experiment is one warp running one mma.sync on register contents chosen by the host.
Every input is 0, 1, a power of two up to 64 or an integer up to 8: exact in every input type, the
8-bit floats included (e5m2 holds the integers only up to 8).
  D observed directly: A[m,j] = bit j of m (j < 4), A[m,4] = 1, B[j,n] = 8 * 2^j (j < 4),
    B[4,n] = n + 1, all else 0, so that D[m,n] = 8m + n + 1 names its own position; each lane's
    D registers tell where they sit.
  A observed: a single 1 in one (lane, element) of A; B[k,n] = bit n of k + 1. D is non-zero in one
    row only, the row of that element, and its entries spell the element's column + 1 in binary.
  B observed: a single 1 in one (lane, element) of B; A[m,k] = bit m of k + 1. D is non-zero in one
    column, the element's column, and its entries spell the element's row + 1 in binary.
  C observed: a single 1 in one (lane, element) of C, A = B = 0; D = C shows C shares D's layout.
Each operand is observed through the maps of the others: a wrong map shows up on its own line (and
on the lines of the experiments that fill its operand through it; C is observed with A = B = 0).
One thing no mma experiment can see: renumbering k the same way in A and B leaves A @ B unchanged.
The ldmatrix probe pins that down, since it reads from addresses we choose.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from tcgemm.engine.catalog import PROBES
from tcgemm.errors import UnsupportedOnGPUError
from tcgemm.fragment_layouts import (FragmentLayout, MMA_VARIANTS, ldmatrix_address_lane, ldmatrix_instruction,
                                     ldmatrix_layout, mma_layout, ptx_instruction, same_positions, unsupported,
                                     variant_identifier)
from tcgemm.registers import from_registers, to_registers
from tcgemm.engine.gpu.compile import current_arch, get_function
from tcgemm.engine.gpu.device import device_info, observation_path, require_gpu
from tcgemm.table import Table

VERDICT = {True: "MATCH", False: "MISMATCH"}
_MMA_SOURCE = PROBES["mma"].source
_LDMATRIX_SOURCE = PROBES["ldmatrix"].source


def probe_entry(variant: str) -> str:
    """The kernel of kernels/probe_mma.cu that runs one mma of `variant`."""
    return "probe_mma_" + variant_identifier(variant)


def _layouts(variant: str) -> dict[str, FragmentLayout]:
    shape, ab, acc = MMA_VARIANTS[variant]
    return {op: mma_layout(shape, op, ab, acc) for op in "ABCD"}


def _types(variant: str) -> dict[str, str]:
    _, ab, acc = MMA_VARIANTS[variant]
    return {"A": ab, "B": ab, "C": acc, "D": acc}


def skipped(variant: str) -> str | None:
    """None when this GPU executes the variant, else the one line that says why it is skipped."""
    return unsupported(variant, current_arch())


def run_mma(variant: str, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Run one mma per experiment on per-lane element values (shape (E, 32, elements)); return D's.
    Raises UnsupportedOnGPUError where this GPU lacks the variant (fp8 before sm_89)."""
    if reason := skipped(variant):
        raise UnsupportedOnGPUError(reason)
    cupy = require_gpu()
    types = _types(variant)
    experiments = a.shape[0]
    regs = [cupy.asarray(to_registers(v, types[op])) for op, v in (("A", a), ("B", b), ("C", c))]
    d_layout = _layouts(variant)["D"]
    d = cupy.zeros((experiments, 32, d_layout.registers_per_lane), dtype=np.uint32)
    get_function(_MMA_SOURCE, probe_entry(variant))((experiments,), (32,), (*regs, d))
    return from_registers(cupy.asnumpy(d), types["D"])


def _batch(layout: FragmentLayout, matrix: np.ndarray, experiments: int) -> np.ndarray:
    return np.broadcast_to(layout.gather(matrix), (experiments, 32, layout.elements_per_lane)).copy()


def _one_hot(layout: FragmentLayout) -> np.ndarray:
    """One experiment per (lane, element): that element is 1, all others 0."""
    n = 32 * layout.elements_per_lane
    return np.eye(n).reshape(n, 32, layout.elements_per_lane)


def _observed(layout: FragmentLayout, rows: np.ndarray, cols: np.ndarray) -> FragmentLayout:
    shape = (32, layout.elements_per_lane)
    return replace(layout, name=layout.name + " (observed)", row=rows.reshape(shape), col=cols.reshape(shape))


def _bits(numbers, width: int) -> np.ndarray:
    """(len(numbers), width) array: bit j of each number in column j."""
    return (np.asarray(numbers)[:, None] >> np.arange(width)) & 1


def _locate(d_matrices: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """For each experiment's D, the single non-zero row (axis=1) or column (axis=0), and the number
    its 0/1 entries spell (entry j is bit j). Returns -1 for both where D is not one such line."""
    where, values = [], []
    for d in d_matrices:
        lines = np.flatnonzero(np.any(d != 0, axis=axis))
        line = np.take(d, lines[0], axis=1 - axis) if len(lines) == 1 else None
        ok = line is not None and bool(np.all((line == 0) | (line == 1)))
        where.append(lines[0] if ok else -1)
        values.append(int(line @ (1 << np.arange(len(line)))) if ok else -1)
    return np.array(where), np.array(values)


def same_layout(a: FragmentLayout, b: FragmentLayout) -> bool:
    return same_positions(a, b)


@dataclass(frozen=True, eq=False)
class OperandProbe:
    """One operand as the probe saw it: rows[lane, element] and cols[lane, element], -1 (or a position
    outside the matrix) where an experiment did not show one position."""
    operand: str
    expected: FragmentLayout
    rows: np.ndarray
    cols: np.ndarray

    @property
    def observed(self) -> FragmentLayout:
        """The observed map as a layout, to draw; ValueError if some element was not located."""
        return _observed(self.expected, self.rows, self.cols)

    @property
    def match(self) -> bool:
        return self.mismatches == 0

    @property
    def mismatches(self) -> int:
        shape = self.expected.row.shape
        rows, cols = np.reshape(self.rows, shape), np.reshape(self.cols, shape)
        return int(np.count_nonzero((self.expected.row != rows) | (self.expected.col != cols)))


def observe_mma(variant: str) -> dict[str, OperandProbe]:
    L = _layouts(variant)
    la, lb, lc, ld = L["A"], L["B"], L["C"], L["D"]
    (m, k), n = la.shape, lb.shape[1]
    probes = {}

    # D: positions written as values, D[m, n] = 8m + n + 1.
    A = np.zeros((m, k)); A[:, :4] = _bits(np.arange(m), 4); A[:, 4] = 1
    B = np.zeros((k, n)); B[:4, :] = 8 * 2.0 ** np.arange(4)[:, None]; B[4, :] = np.arange(n) + 1
    d = run_mma(variant, _batch(la, A, 1), _batch(lb, B, 1), np.zeros((1, 32, lc.elements_per_lane)))[0]
    pos = d.astype(int) - 1
    probes["D"] = OperandProbe("D", ld, pos // n, pos % n)

    # A: one element at a time; B[k, n] = bit n of k + 1.
    a = _one_hot(la)
    e = a.shape[0]
    B = _bits(np.arange(k) + 1, n).astype(float)
    d = run_mma(variant, a, _batch(lb, B, e), np.zeros((e, 32, lc.elements_per_lane)))
    rows, vals = _locate(np.array([ld.scatter(x) for x in d]), axis=1)
    probes["A"] = OperandProbe("A", la, rows, vals - 1)

    # B: one element at a time; A[m, k] = bit m of k + 1.
    b = _one_hot(lb)
    e = b.shape[0]
    A = _bits(np.arange(k) + 1, m).T.astype(float)
    d = run_mma(variant, _batch(la, A, e), b, np.zeros((e, 32, lc.elements_per_lane)))
    cols, vals = _locate(np.array([ld.scatter(x) for x in d]), axis=0)
    probes["B"] = OperandProbe("B", lb, vals - 1, cols)

    # C: one element at a time, A = B = 0, so D = C.
    c = _one_hot(lc)
    e = c.shape[0]
    d = run_mma(variant, np.zeros((e, 32, la.elements_per_lane)), np.zeros((e, 32, lb.elements_per_lane)), c)
    flat = np.array([np.flatnonzero(ld.scatter(x).ravel() == 1) for x in d], dtype=object)
    found = np.array([f[0] if len(f) == 1 else -1 for f in flat])
    rows = np.where(found >= 0, found // n, -1)
    cols = np.where(found >= 0, found % n, -1)
    probes["C"] = OperandProbe("C", lc, rows, cols)
    return {op: probes[op] for op in "ABCD"}


def mma_verdict_table(verdicts, notes=()) -> Table:
    """One row per (instruction, {operand: layout matches}, random product matches): each operand's
    observed layout against tcgemm.fragment_layouts, and a random product decoded through all four."""
    return Table(["Instruction", *"ABCD", "Random product"],
                 [[instruction, *(VERDICT[matches[op]] for op in "ABCD"), VERDICT[product]]
                  for instruction, matches, product in verdicts], notes=notes)


def mma_verdicts(variants=MMA_VARIANTS) -> Table:
    """mma_verdict_table of each variant this GPU executes, observed on it; a note (one line each)
    names the variants it lacks."""
    reasons = {v: skipped(v) for v in variants}
    return mma_verdict_table(
        ((ptx_instruction(v), {op: p.match for op, p in observe_mma(v).items()}, random_product_check(v))
         for v in variants if reasons[v] is None), notes=[r for r in reasons.values() if r])


def mma_observation(variants=MMA_VARIANTS) -> dict:
    """Every variant this GPU executes, observed (each operand's row and col per lane and element)
    and multiplied at random; the one-line reasons for those it lacks. Recorded as
    tests/data/mma_fragments_<gpu>.json, which tests/test_dtypes.py checks against the layouts."""
    info = device_info()
    observed, skips = {}, []
    for v in variants:
        if reason := skipped(v):
            skips.append(reason)
            continue
        probes = observe_mma(v)
        observed[v] = {"random_product": random_product_check(v),
                       **{op: {"row": np.reshape(p.rows, p.expected.row.shape).tolist(),
                               "col": np.reshape(p.cols, p.expected.col.shape).tolist()}
                          for op, p in probes.items()}}
    return {"device": info.name, "arch": info.arch, "variants": observed, "skipped": skips}


def observation_verdicts(observation: dict) -> Table:
    """mma_verdict_table of a recorded mma_observation: each operand against the layouts."""
    def match(variant, op, tags):
        return OperandProbe(op, _layouts(variant)[op], np.array(tags["row"]), np.array(tags["col"])).match

    return mma_verdict_table(
        ((ptx_instruction(v), {op: match(v, op, seen[op]) for op in "ABCD"}, seen["random_product"])
         for v, seen in observation["variants"].items()), notes=observation["skipped"])


def report(out_dir: str | Path | None = None) -> None:
    """Observe every mma variant, print the verdicts, and write the observation to
    <out_dir>/mma_fragments_<gpu>.json (default $OUT, else the current folder)."""
    observation = mma_observation()
    print(f"{observation['device']} ({observation['arch']})")
    print(observation_verdicts(observation))
    path = observation_path("mma_fragments", out_dir)
    path.write_text(json.dumps(observation) + "\n")
    print(f"observation written to {path}")


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
