"""Pictures of warp fragment layouts: one cell per matrix entry, coloured by lane.

Colours: the hue comes from the Okabe-Ito palette (safe for colour-blind readers)
by groupID = lane // 4, the lightness by threadID_in_group = lane % 4, darkest
first. Every cell names its lane (T5) and its element and register (a3·R1), so
the picture still reads in greyscale print.

Figures are plain matplotlib Figure objects (no pyplot state); nothing is shown.
"""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from tcgemm.style import (
    COLUMN_WIDTH_IN, MIN_FONT_PT, MUTED_FACE, MUTED_TEXT, TILE_EDGE, lane_color, new_figure, text_color_on,
)
from tcgemm.fragment_layouts import (
    FragmentLayout,
    ldmatrix_address_lane,
    ldmatrix_instruction,
    ldmatrix_layout,
    mma_instruction,
    mma_layout,
    mma_types,
)

MIN_FONT = MIN_FONT_PT
MAX_FONT = 9.0
TICK_FONT = 7.5
LEGEND_FONT = 7.5  # the lane key's T0..T31
_CHAR_WIDTH = 0.62  # average glyph width of the default sans font, in font sizes
_LINE_HEIGHT = 1.2  # line pitch at linespacing=1.0, in font sizes
MAX_CELL_IN = 0.42
_SIDE_MARGINS_IN = (0.3, 0.3, 0.12)  # product figure: row numbers of A, row numbers of C, gap


def cell_label(layout: FragmentLayout, lane: int, element: int, lines: int = 2) -> str:
    """'T5\\na3·R1' (or three lines 'T5\\na3\\nR1' for narrow cells); ldmatrix: 'T5\\nr1.lo'."""
    name = layout.element_label(element)
    if layout.operand == "ldmatrix":
        return f"T{lane}\n{name}"
    register = f"R{layout.register_of(element)}"
    if lines == 3:
        return f"T{lane}\n{name}\n{register}"
    return f"T{lane}\n{name}·{register}"


def _fit_font(cell_w_pt: float, cell_h_pt: float, chars: int, lines: int) -> float:
    by_width = 0.82 * cell_w_pt / (_CHAR_WIDTH * chars)
    by_height = 0.9 * cell_h_pt / (_LINE_HEIGHT * lines)
    return min(MAX_FONT, by_width, by_height)


def _label_format(layout: FragmentLayout, cell_w_pt: float, cell_h_pt: float):
    """(lines, fontsize) that fits the cell best; the size may fall below MIN_FONT."""
    if layout.operand == "ldmatrix":
        return 2, _fit_font(cell_w_pt, cell_h_pt, _narrowest_label_chars(layout), 2)
    longest_name = max(len(layout.element_label(i)) for i in range(layout.elements_per_lane))
    register_chars = 1 + len(str(layout.registers_per_lane - 1))
    two = _fit_font(cell_w_pt, cell_h_pt, longest_name + 1 + register_chars, 2)
    three = _fit_font(cell_w_pt, cell_h_pt, _narrowest_label_chars(layout), 3)
    return (2, two) if two >= min(three, 7.0) else (3, three)


def _cell_size_pt(ax, shape) -> tuple[float, float]:
    fig_w, fig_h = ax.figure.get_size_inches()
    box = ax.get_position()
    return box.width * fig_w * 72 / shape[1], box.height * fig_h * 72 / shape[0]


def _style_ticks(ax, rows: int, columns: range, col_side: str, row_side: str) -> None:
    ax.set_xticks(np.array(columns) + 0.5, [str(c) for c in columns])
    ax.set_yticks(np.arange(rows) + 0.5, [str(r) for r in range(rows)])
    ax.tick_params(
        labelsize=TICK_FONT, length=0, pad=2,
        top=col_side == "top", labeltop=col_side == "top",
        bottom=col_side == "bottom", labelbottom=col_side == "bottom",
        left=row_side == "left", labelleft=row_side == "left",
        right=row_side == "right", labelright=row_side == "right",
    )
    for spine in ax.spines.values():
        spine.set_visible(False)


def _draw_cells(ax, layout: FragmentLayout, columns: range, highlight_lanes=None) -> None:
    rows = layout.shape[0]
    lane_of, element_of = layout.inverse()
    highlighted = None if highlight_lanes is None else {int(l) for l in highlight_lanes}
    lines, fontsize = _label_format(layout, *_cell_size_pt(ax, (rows, len(columns))))
    fontsize = max(MIN_FONT, fontsize)
    for r in range(rows):
        for c in columns:
            lane, element = int(lane_of[r, c]), int(element_of[r, c])
            if highlighted is None or lane in highlighted:
                face = lane_color(lane)
                ink = text_color_on(face)
            else:
                face, ink = MUTED_FACE, MUTED_TEXT
            ax.add_patch(Rectangle((c, r), 1, 1, facecolor=face, edgecolor="white",
                                   linewidth=0.6, gid="cell"))
            ax.text(c + 0.5, r + 0.5, cell_label(layout, lane, element, lines),
                    ha="center", va="center", fontsize=fontsize, color=ink,
                    linespacing=1.0, gid="cell-label")
    first, end = columns.start, columns.stop
    for r in range(0, rows + 1, 8):
        ax.plot([first, end], [r, r], color=TILE_EDGE, linewidth=1.2, gid="tile-edge")
    for c in range(-(-first // 8) * 8, end + 1, 8):
        ax.plot([c, c], [0, rows], color=TILE_EDGE, linewidth=1.2, gid="tile-edge")
    ax.set_xlim(first, end)
    ax.set_ylim(rows, 0)


def fragment_grid(layout: FragmentLayout, ax=None, title: str | None = None,
                  highlight_lanes=None, col_side: str = "top", row_side: str = "left",
                  columns: range | None = None) -> Figure:
    """Draw ``layout`` as a grid of its matrix (or of the matrix columns ``columns``); returns the
    figure drawn on.

    Without ``ax`` a figure sized to the matrix is made. ``highlight_lanes``: lanes
    kept in colour, all others greyed out.
    """
    rows, cols = layout.shape
    columns = range(cols) if columns is None else columns
    if columns.step != 1 or not 0 <= columns.start < columns.stop <= cols:
        raise ValueError(f"{layout.name}: columns must be a contiguous range within 0..{cols}, got {columns}")
    if ax is None:
        cell = 0.38
        margin_w, margin_top, margin_bottom = 0.5, 0.75, 0.2
        fig = new_figure(len(columns) * cell + 2 * margin_w, rows * cell + margin_top + margin_bottom)
        width, height = fig.get_size_inches()
        ax = fig.add_axes([margin_w / width, margin_bottom / height,
                           len(columns) * cell / width, rows * cell / height])
    _draw_cells(ax, layout, columns, highlight_lanes)
    _style_ticks(ax, rows, columns, col_side, row_side)
    ax.set_title(layout.name if title is None else title, fontsize=9,
                 pad=18 if col_side == "top" else 6)
    return ax.figure


def lane_legend(ax=None) -> Figure:
    """The 32 lane colours: groupID across, threadID_in_group down."""
    if ax is None:
        fig = new_figure(3.4, 1.9)
        ax = fig.add_axes([0.18, 0.12, 0.78, 0.6])
    for lane in range(32):
        g, t = lane // 4, lane % 4
        face = lane_color(lane)
        ax.add_patch(Rectangle((g, t), 1, 1, facecolor=face, edgecolor="white", linewidth=0.6))
        ax.text(g + 0.5, t + 0.5, f"T{lane}", ha="center", va="center",
                fontsize=LEGEND_FONT, color=text_color_on(face), gid="legend-label")
    ax.set_xlim(0, 8)
    ax.set_ylim(4, 0)
    ax.set_xticks(np.arange(8) + 0.5, [str(g) for g in range(8)])
    ax.set_yticks(np.arange(4) + 0.5, [str(t) for t in range(4)])
    ax.tick_params(labelsize=TICK_FONT, length=0, pad=2, top=True, labeltop=True,
                   bottom=False, labelbottom=False)
    ax.set_xlabel("groupID = lane >> 2", fontsize=LEGEND_FONT)
    ax.xaxis.set_label_position("top")
    ax.set_ylabel("lane % 4", fontsize=LEGEND_FONT)
    for spine in ax.spines.values():
        spine.set_visible(False)
    return ax.figure


def _cell_width(columns: int, spare_in: float) -> float:
    """Cell width in inches when ``columns`` cells and ``spare_in`` of margins share the text column."""
    return min(MAX_CELL_IN, (COLUMN_WIDTH_IN - spare_in) / columns)


def _cell_size(layout: FragmentLayout, columns: int, spare_in: float) -> tuple[float, float]:
    """Cell width and height in inches (see _cell_width): square if a label fits so at MIN_FONT,
    else tall enough for three lines at the largest font the width allows."""
    cell_w = _cell_width(columns, spare_in)
    if _label_format(layout, cell_w * 72, cell_w * 72)[1] >= MIN_FONT:
        return cell_w, cell_w
    font = _fit_font(cell_w * 72, float("inf"), _narrowest_label_chars(layout), 3)
    return cell_w, max(cell_w, 3 * _LINE_HEIGHT * font / 0.9 / 72)


def _narrowest_label_chars(layout: FragmentLayout) -> int:
    """Characters of the widest line of a label in its narrowest form: T31, the element, R3."""
    return max(3, max(len(layout.element_label(i)) for i in range(layout.elements_per_lane)))


def _operands(shape: str, ab_type: str | None, acc_type: str | None):
    """The types, the A, B and C layouts and their titles of one mma."""
    ab_type, acc_type = mma_types(shape, ab_type, acc_type)
    layouts = {op: mma_layout(shape, op, ab_type, acc_type) for op in ("A", "B", "C")}
    (m, k), n = layouts["A"].shape, layouts["B"].shape[1]
    titles = {"A": f"A: m×k = {m}×{k}, .{ab_type}, row-major  (columns = k)",
              "B": f"B: k×n = {k}×{n}, .{ab_type},\ncolumn-major  (rows = k)",
              "C": f"C and D: m×n = {m}×{n}, .{acc_type}"}
    return ab_type, acc_type, layouts, titles


def _legend_block(fig: Figure, axes_at, x: float, y: float, w: float, h: float) -> None:
    """The lane colour key and how to read a cell, centred in the block (x, y, w, h) inches."""
    swatch = min(0.36, w / 8.5, h / 7)
    legend_w, legend_h = 8 * swatch, 4 * swatch
    ax = axes_at(x + (w - legend_w) / 2, y + (h - legend_h) / 2 + 0.3, legend_w, legend_h)
    lane_legend(ax)
    ax.text(4, 4.35, "cell: lane T, element · register R\n"
            "lane = 4 · groupID + lane % 4", ha="center", va="top", fontsize=LEGEND_FONT, gid="legend-note")


def mma_product_figure(shape: str = "m16n8k16", ab_type: str | None = None,
                       acc_type: str | None = None, highlight_lanes=None) -> Figure:
    """A, B and C/D of one mma laid out as the product: A left, B on top, C/D bottom right.

    Rows of A line up with rows of C/D, columns of B with columns of C/D, and all cells have one
    size. When A and B side by side would not fit the text column with legible labels (m16n8k32,
    see product_splits_a), A is drawn in its two halves of k, one above the other, with B beside
    them and C/D below B. None types pick the shape's first accepted type (f16 inputs with f32
    accumulators; s8 with s32 for m16n8k32).
    """
    ab_type, acc_type, layouts, titles = _operands(shape, ab_type, acc_type)
    if product_splits_a(shape, ab_type, acc_type):
        fig = _split_product(layouts, titles, highlight_lanes)
    else:
        fig = _side_by_side_product(layouts, titles, highlight_lanes)
    fig.suptitle(f"{mma_instruction(shape, ab_type, acc_type)}\nD = A · B + C, one warp",
                 fontsize=10, y=1 - 0.12 / fig.get_size_inches()[1], va="top")
    return fig


def product_splits_a(shape: str, ab_type: str | None = None, acc_type: str | None = None) -> bool:
    """Whether A and B side by side would need cells too narrow for labels at the minimum font."""
    _, _, layouts, _ = _operands(shape, ab_type, acc_type)
    k, n = layouts["B"].shape
    cell_w = _cell_width(k + n, sum(_SIDE_MARGINS_IN))
    return _fit_font(cell_w * 72, float("inf"), _narrowest_label_chars(layouts["A"]), 3) < MIN_FONT


def _axes_placer(fig: Figure):
    width, height = fig.get_size_inches()
    return lambda x, y, w, h: fig.add_axes([x / width, y / height, w / width, h / height])


def _side_by_side_product(layouts, titles, highlight_lanes) -> Figure:
    a, b, c = layouts["A"], layouts["B"], layouts["C"]
    (m, k), n = a.shape, b.shape[1]
    left, right, gap = _SIDE_MARGINS_IN
    cell_w, cell_h = _cell_size(a, k + n, left + right + gap)
    bottom, top = 0.7, 1.3
    width = left + k * cell_w + gap + n * cell_w + right
    height = top + k * cell_h + gap + m * cell_h + bottom
    fig = new_figure(width, height)
    axes_at = _axes_placer(fig)
    right_x = left + k * cell_w + gap
    upper_y = bottom + m * cell_h + gap
    ax_a = axes_at(left, bottom, k * cell_w, m * cell_h)
    ax_c = axes_at(right_x, bottom, n * cell_w, m * cell_h)
    ax_b = axes_at(right_x, upper_y, n * cell_w, k * cell_h)
    fragment_grid(a, ax_a, title="", highlight_lanes=highlight_lanes, col_side="bottom")
    ax_a.set_xlabel(titles["A"], fontsize=8)
    fragment_grid(b, ax_b, title=titles["B"], highlight_lanes=highlight_lanes, col_side="top")
    ax_b.title.set_fontsize(8)
    fragment_grid(c, ax_c, title="", highlight_lanes=highlight_lanes, col_side="bottom", row_side="right")
    ax_c.set_xlabel(titles["C"], fontsize=8)
    # The empty block above A holds the lane colour key and how to read a cell.
    _legend_block(fig, axes_at, left + 0.1, upper_y, k * cell_w - 0.45, k * cell_h)
    return fig


def _split_product(layouts, titles, highlight_lanes) -> Figure:
    """A in two halves of k, one above the other, on the left; B on the right, C/D below B; the
    lane key beside C/D."""
    a, b, c = layouts["A"], layouts["B"], layouts["C"]
    (m, k), n = a.shape, b.shape[1]
    half = k // 2
    left, gap, right, bottom, between, top = 0.3, 0.4, 0.05, 0.15, 0.65, 1.55
    cell_w, cell_h = _cell_size(a, half + n, left + gap + right)
    width = left + half * cell_w + gap + n * cell_w + right
    height = bottom + m * cell_h + between + k * cell_h + top
    fig = new_figure(width, height)
    axes_at = _axes_placer(fig)
    right_x, b_y = left + half * cell_w + gap, bottom + m * cell_h + between
    a_top = b_y + k * cell_h
    for i, columns in enumerate((range(half), range(half, k))):
        ax = axes_at(left, a_top - (i + 1) * m * cell_h - i * between, half * cell_w, m * cell_h)
        fragment_grid(a, ax, title=titles["A"] if i == 0 else "", highlight_lanes=highlight_lanes,
                      columns=columns)
        ax.set_xlabel(f"columns k = {columns.start}–{columns.stop - 1}", fontsize=8)
        ax.xaxis.set_label_position("top")
        ax.title.set_fontsize(8)
    ax_b = axes_at(right_x, b_y, n * cell_w, k * cell_h)
    ax_c = axes_at(right_x, bottom, n * cell_w, m * cell_h)
    for ax, op in ((ax_b, "B"), (ax_c, "C")):
        fragment_grid(layouts[op], ax, title=titles[op], highlight_lanes=highlight_lanes)
        ax.title.set_fontsize(8)
    a_bottom = a_top - 2 * m * cell_h - between
    _legend_block(fig, axes_at, left, bottom, half * cell_w, a_bottom - between - bottom)
    fig.text(0.5, 1 - 0.62 / height, f"A is split at k = {half}, too wide to stand beside B",
             ha="center", va="top", fontsize=8, gid="layout-note")
    return fig


def ldmatrix_figure(num: int = 4, trans: bool = False, highlight_lanes=None) -> Figure:
    """The stored 8x8 matrices of one ldmatrix, stacked; each cell names the lane and
    register that receives it, and each row names the lane that supplies its address."""
    layout = ldmatrix_layout(num, trans)
    rows, cols = layout.shape
    cell = 0.36
    left, right, bottom, top = 1.0, 1.35, 0.2, 1.1
    width, height = left + cols * cell + right, top + rows * cell + bottom
    fig = new_figure(width, height)
    ax = fig.add_axes([left / width, bottom / height, cols * cell / width, rows * cell / height])
    fragment_grid(layout, ax, title="", highlight_lanes=highlight_lanes,
                  col_side="top", row_side="right")
    for r, lane in enumerate(ldmatrix_address_lane(num)):
        ax.text(-0.2, r + 0.5, f"addr T{lane} →", ha="right", va="center",
                fontsize=7, gid="address-label")
    for j in range(num):
        ax.text(cols + 0.9, 8 * j + 4, f"matrix {j}\n→ r{j}", ha="left", va="center",
                fontsize=8, gid="matrix-label")
    what = ("each lane gets two rows of one column" if trans
            else "each lane gets two columns of one row")
    fig.suptitle(f"{ldmatrix_instruction(num, trans)}\n"
                 f"stored 8×8 matrices, stacked; cell = receiving lane and register\n({what})",
                 fontsize=9, y=1 - 0.1 / height, va="top")
    return fig
