"""Pictures of an SGEMM thread's registers and FFMA order, from tcgemm.sgemm.regbank. Pure (matplotlib).

Colours: register bank k takes the k-th Okabe-Ito hue of tcgemm.fragments.draw; a small digit in each
register's corner repeats the bank for greyscale print. A thick black outline marks an FFMA that
has a bank conflict under the simulated settings.
"""
from __future__ import annotations

from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from tcgemm.style import GROUP_HUES, MUTED_FACE, new_figure, text_color_on
from tcgemm.sgemm.regbank import (
    MAXWELL, SIZE, Numbering, RegisterFile, check_order, instructions, naive_numbering, order_named,
    row_by_row, simulate, summarize,
)

CELL_IN = 0.56  # a register or FFMA cell: room for its labels at 8 points (11 px) and 7.5 (10.4 px)
GAP = 0.25  # between the a column / b row and the C block, in cells
# A register's bank digit, in its corner (10.4 px).
BANK_PT = 7.5
# Text over the FFMA path is set on the cell's face, so that the line does not cross its glyphs.
_ON_CELL = dict(boxstyle="square,pad=0.05", facecolor=MUTED_FACE, edgecolor="none")


def bank_color(bank: int) -> tuple[float, float, float]:
    return to_rgb(GROUP_HUES[bank])


def _order_and_name(order) -> tuple[list[tuple[int, int]], str]:
    if isinstance(order, str):
        return order_named(order), order
    return check_order(order), "custom order"


def _reuse_text(reuse_slots, reuse_depth) -> str:
    if not reuse_slots or not reuse_depth:
        return "no reuse"
    return f"reuse {' and '.join(reuse_slots)}, depth {reuse_depth}"


def _simulated(numbering, rf, order, reuse_slots, reuse_depth):
    """Steps by cell; the order and reuse text."""
    if order is None:
        steps = simulate(instructions(numbering, row_by_row()), rf, (), 0)
        how = "no reuse"
    else:
        pairs, name = _order_and_name(order)
        steps = simulate(instructions(numbering, pairs), rf, reuse_slots, reuse_depth)
        how = f"{name}, {_reuse_text(reuse_slots, reuse_depth)}"
    return {s.instruction.cell: s for s in steps}, summarize(steps), how


def _register_cell(ax, x, y, register: int, rf: RegisterFile, label: str) -> None:
    bank = rf.bank(register)
    face = bank_color(bank)
    ink = text_color_on(face)
    ax.add_patch(Rectangle((x, y), 1, 1, facecolor=face, edgecolor="white", linewidth=1, gid="register"))
    ax.text(x + 0.5, y + 0.57, label, ha="center", va="center", fontsize=8, color=ink,
            linespacing=1.0, gid="register-label")
    ax.text(x + 0.84, y + 0.14, str(bank), ha="right", va="top", fontsize=BANK_PT, color=ink, gid="bank-label")


def _outline(ax, x, y) -> None:
    ax.add_patch(Rectangle((x + 0.07, y + 0.07), 0.86, 0.86, fill=False, edgecolor="black",
                           linewidth=2.2, gid="conflict"))


def _bare_axes(fig: Figure, width_cells: float, height_cells: float, bottom_in: float):
    width, height = fig.get_size_inches()
    left = (width - width_cells * CELL_IN) / 2
    ax = fig.add_axes([left / width, bottom_in / height,
                       width_cells * CELL_IN / width, height_cells * CELL_IN / height])
    ax.set_xlim(0, width_cells)
    ax.set_ylim(height_cells, 0)
    ax.set_axis_off()
    return ax


def _bank_legend(ax, rf: RegisterFile, y: float) -> None:
    for bank in range(rf.banks):
        x = 1 + GAP + 2 * bank
        ax.add_patch(Rectangle((x, y), 0.5, 0.5, facecolor=bank_color(bank), gid="legend"))
        ax.text(x + 0.65, y + 0.25, f"bank {bank}", va="center", fontsize=8, gid="legend-label")


def _title(fig: Figure, *lines: str) -> None:
    fig.suptitle("\n".join(lines), fontsize=9, y=1 - 0.08 / fig.get_size_inches()[1], va="top")


def numbering_figure(numbering: Numbering, rf: RegisterFile = MAXWELL, order=None,
                     reuse_slots=("a",), reuse_depth: int = 1) -> Figure:
    """The 8x8 C block (a_i column left, b_j row on top), every register coloured by its bank.
    Outlined: the FFMAs that conflict when issued in ``order`` (a name of regbank.ORDERS or a
    list of (i, j)) with the given reuse cache; with no order, without reuse."""
    by_cell, total, how = _simulated(numbering, rf, order, reuse_slots, reuse_depth)
    side = 1 + GAP + SIZE
    fig = new_figure(side * CELL_IN + 0.8, (side + 1) * CELL_IN + 0.8)
    ax = _bare_axes(fig, side, side + 1, bottom_in=0.1)
    offset = 1 + GAP
    for i in range(SIZE):
        _register_cell(ax, 0, offset + i, int(numbering.a[i]), rf, f"a{i}\nR{numbering.a[i]}")
    for j in range(SIZE):
        _register_cell(ax, offset + j, 0, int(numbering.b[j]), rf, f"b{j}\nR{numbering.b[j]}")
    for (i, j), step in by_cell.items():
        _register_cell(ax, offset + j, offset + i, int(numbering.c[i, j]), rf, f"R{numbering.c[i, j]}")
        if step.conflict:
            _outline(ax, offset + j, offset + i)
    _bank_legend(ax, rf, side + 0.3)
    _title(fig, f"{numbering.name}, on {rf.name}", how,
           f"{total.conflicts} of {total.instructions} FFMAs conflict, "
           f"{total.extra_cycles} extra cycle{'' if total.extra_cycles == 1 else 's'}")
    return fig


def order_figure(order, numbering: Numbering | None = None, rf: RegisterFile = MAXWELL,
                 reuse_slots=("a", "b"), reuse_depth: int = 2) -> Figure:
    """The 8x8 C block with each FFMA's step number (1 = first) and a line through the cells in
    order. A cell's second line names the operands served by the reuse cache. With a numbering,
    conflicting FFMAs are outlined."""
    pairs, name = _order_and_name(order)
    registers = numbering if numbering is not None else naive_numbering()
    steps = simulate(instructions(registers, pairs), rf, reuse_slots, reuse_depth)
    total = summarize(steps)
    fig = new_figure(SIZE * CELL_IN + 1.0, SIZE * CELL_IN + 1.0)
    ax = _bare_axes(fig, SIZE, SIZE, bottom_in=0.1)
    for number, step in enumerate(steps, start=1):
        i, j = step.instruction.cell
        ax.add_patch(Rectangle((j, i), 1, 1, facecolor=MUTED_FACE, edgecolor="white", linewidth=1, gid="cell"))
        ax.text(j + 0.5, i + 0.38, str(number), ha="center", va="center", fontsize=8, bbox=_ON_CELL,
                gid="step-label")
        if step.hits:
            ax.text(j + 0.5, i + 0.76, "·".join(step.hits), ha="center", va="center", fontsize=8,
                    color="#0072B2", bbox=_ON_CELL, gid="hit-label")
        if numbering is not None and step.conflict:
            _outline(ax, j, i)
    for k in range(SIZE):
        ax.text(-0.12, k + 0.5, str(k), ha="right", va="center", fontsize=8, gid="index-label")
        ax.text(k + 0.5, -0.1, str(k), ha="center", va="bottom", fontsize=8, gid="index-label")
    ax.text(-0.12, -0.1, "i \\ j", ha="right", va="bottom", fontsize=8, gid="index-label")
    centres = [(j + 0.5, i + 0.5) for i, j in pairs]
    xs, ys = zip(*centres)
    ax.plot(xs, ys, color="#D55E00", linewidth=0.9, alpha=0.8, gid="path")
    ax.plot(xs[0], ys[0], marker="o", markersize=4, color="#D55E00", gid="path-start")
    hits = sum(total.reuse_hits[slot] for slot in ("a", "b"))
    lines = [f"{name}, {_reuse_text(reuse_slots, reuse_depth)}, on {rf.name}",
             f"{hits} of {total.ab_reads} a/b reads from the reuse cache"]
    if numbering is not None:
        lines.append(f"{total.conflicts} conflicting FFMA{'' if total.conflicts == 1 else 's'} ({numbering.name})")
    _title(fig, *lines)
    return fig
