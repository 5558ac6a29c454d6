"""The mma.sync variants side by side (pure): the registers each operand takes per lane, whose
fragment layout a variant reuses, and the first architecture that runs it."""
from __future__ import annotations

from tcgemm.fragments.layouts import MMA_VARIANTS, element_bits, min_sm, mma_layouts, same_positions
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
