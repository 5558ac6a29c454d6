"""The mma.sync variants side by side (pure): the registers each operand takes per lane, whose
fragment layout a variant reuses, the first architecture that runs it, and which bytes of K-major
tiles each register holds (the same for every type of Kernel D1)."""
from __future__ import annotations

import numpy as np

from tcgemm.fragment_layouts import MMA_SHAPES, MMA_VARIANTS, element_bits, min_sm, mma_layouts, same_positions
from tcgemm.table import Table


def earlier_with_same_layout(variant: str, operands: str = "AB") -> str | None:
    """The first variant before `variant` in MMA_VARIANTS whose fragments of `operands` put every
    (lane, element) where `variant`'s do, or None."""
    mine = mma_layouts(variant)
    earlier = list(MMA_VARIANTS)[:list(MMA_VARIANTS).index(variant)]
    return next((v for v in earlier if all(same_positions(mine[op], mma_layouts(v)[op]) for op in operands)), None)


def variants_table(variants=MMA_VARIANTS) -> Table:
    """Per variant: A/B and accumulator types, bits per input, registers per lane of A, B and C/D, the
    earlier variant whose A and B layouts it shares ("its own" if none), and the first sm that runs it."""
    rows = []
    for v in variants:
        _, ab, acc = MMA_VARIANTS[v]
        layouts = mma_layouts(v)
        rows.append([v, f"{ab} -> {acc}", element_bits(ab), *(layouts[op].registers_per_lane for op in "ABD"),
                     earlier_with_same_layout(v) or "its own", f"sm_{min_sm(v)}"])
    return Table(["Variant", "A/B -> accumulator", "Bits per input", "A regs", "B regs", "C/D regs",
                  "A and B as in", "From"], rows)


def register_bytes(variant: str, operand: str) -> np.ndarray:
    """Where each register of operand A or B of `variant` comes from, as bytes of a K-major tile (A
    row-major, B column-major: rows of K): a (32 lanes, registers, 2) array of the tile row (A's m, B's
    n) and the byte offset along K of the register's first byte. ValueError unless each register holds
    consecutive k of one row, lowest k in the lowest bits (then it is 4 consecutive bytes of memory)."""
    if operand not in ("A", "B"):
        raise ValueError(f"operand must be 'A' or 'B', got {operand!r}")
    layout = mma_layouts(variant)[operand]
    rows, ks = (layout.row, layout.col) if operand == "A" else (layout.col, layout.row)
    per = layout.elements_per_register
    rows, ks = rows.reshape(32, -1, per), ks.reshape(32, -1, per)
    if not ((rows == rows[..., :1]).all() and (ks == ks[..., :1] + np.arange(per)).all()):
        raise ValueError(f"{variant} {operand}: a register holds elements of several rows or non-consecutive k")
    return np.stack([rows[..., 0], ks[..., 0] * element_bits(MMA_VARIANTS[variant][1]) // 8], axis=-1)


def register_bytes_table(variants, reference: str = "m16n8k16.f32", lane: int = 5) -> Table:
    """Per variant: the k of one mma, the elements per register, whether every lane's A and B registers
    read the same (row, byte) of the K-major tiles as `reference`'s, and `lane`'s A registers as
    (row, first byte)."""
    same = lambda v, op: "yes" if np.array_equal(register_bytes(v, op), register_bytes(reference, op)) else "no"
    rows = []
    for v in variants:
        shape, ab, _ = MMA_VARIANTS[v]
        a = register_bytes(v, "A")[lane]
        rows.append([v, ab, MMA_SHAPES[shape][2], 32 // element_bits(ab), same(v, "A"), same(v, "B"),
                     " ".join(f"({r},{b})" for r, b in a)])
    ref = MMA_VARIANTS[reference][1]
    return Table(["Variant", "Type", "k", "Per register", f"A as {ref}", f"B as {ref}", f"Lane {lane}: A (row, byte)"],
                 rows)
