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

from tcgemm.style import GROUP_HUES, MUTED_FACE, MUTED_TEXT, TILE_EDGE, lane_color, text_color_on
from tcgemm.fragments.layouts import (
    FragmentLayout,
    ldmatrix_address_lane,
    ldmatrix_instruction,
    ldmatrix_layout,
    mma_instruction,
    mma_layout,
    mma_types,
)

MIN_FONT = 6.0
MAX_FONT = 9.0
TICK_FONT = 7.0
_CHAR_WIDTH = 0.62  # average glyph width of the default sans font, in font sizes
_LINE_HEIGHT = 1.2  # line pitch at linespacing=1.0, in font sizes
PRODUCT_WIDTH_IN = 10.0
MAX_CELL_IN = 0.42


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
    """(lines, fontsize) that fits the cell best; never below MIN_FONT."""
    longest_name = max(len(layout.element_label(i)) for i in range(layout.elements_per_lane))
    if layout.operand == "ldmatrix":
        return 2, max(MIN_FONT, _fit_font(cell_w_pt, cell_h_pt, max(3, longest_name), 2))
    register_chars = 1 + len(str(layout.registers_per_lane - 1))
    two = _fit_font(cell_w_pt, cell_h_pt, longest_name + 1 + register_chars, 2)
    three = _fit_font(cell_w_pt, cell_h_pt, max(3, longest_name), 3)
    lines, size = (2, two) if two >= min(three, 7.0) else (3, three)
    return lines, max(MIN_FONT, size)


def _cell_size_pt(ax, shape) -> tuple[float, float]:
    fig_w, fig_h = ax.figure.get_size_inches()
    box = ax.get_position()
    return box.width * fig_w * 72 / shape[1], box.height * fig_h * 72 / shape[0]


def _style_ticks(ax, shape, col_side: str, row_side: str) -> None:
    rows, cols = shape
    ax.set_xticks(np.arange(cols) + 0.5, [str(c) for c in range(cols)])
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


def _draw_cells(ax, layout: FragmentLayout, highlight_lanes=None) -> None:
    rows, cols = layout.shape
    lane_of, element_of = layout.inverse()
    highlighted = None if highlight_lanes is None else {int(l) for l in highlight_lanes}
    lines, fontsize = _label_format(layout, *_cell_size_pt(ax, layout.shape))
    for r in range(rows):
        for c in range(cols):
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
    for r in range(0, rows + 1, 8):
        ax.plot([0, cols], [r, r], color=TILE_EDGE, linewidth=1.2, gid="tile-edge")
    for c in range(0, cols + 1, 8):
        ax.plot([c, c], [0, rows], color=TILE_EDGE, linewidth=1.2, gid="tile-edge")
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)


def fragment_grid(layout: FragmentLayout, ax=None, title: str | None = None,
                  highlight_lanes=None, col_side: str = "top", row_side: str = "left") -> Figure:
    """Draw ``layout`` as a grid of its matrix; returns the figure drawn on.

    Without ``ax`` a figure sized to the matrix is made. ``highlight_lanes``: lanes
    kept in colour, all others greyed out.
    """
    if ax is None:
        rows, cols = layout.shape
        cell = 0.38
        margin_w, margin_top, margin_bottom = 0.5, 0.75, 0.2
        fig = Figure(figsize=(cols * cell + 2 * margin_w,
                              rows * cell + margin_top + margin_bottom))
        width, height = fig.get_size_inches()
        ax = fig.add_axes([margin_w / width, margin_bottom / height,
                           cols * cell / width, rows * cell / height])
    _draw_cells(ax, layout, highlight_lanes)
    _style_ticks(ax, layout.shape, col_side, row_side)
    ax.set_title(layout.name if title is None else title, fontsize=9,
                 pad=18 if col_side == "top" else 6)
    return ax.figure


def lane_legend(ax=None) -> Figure:
    """The 32 lane colours: groupID across, threadID_in_group down."""
    if ax is None:
        fig = Figure(figsize=(3.4, 1.9))
        ax = fig.add_axes([0.18, 0.12, 0.78, 0.6])
    for lane in range(32):
        g, t = lane // 4, lane % 4
        face = lane_color(lane)
        ax.add_patch(Rectangle((g, t), 1, 1, facecolor=face, edgecolor="white", linewidth=0.6))
        ax.text(g + 0.5, t + 0.5, f"T{lane}", ha="center", va="center",
                fontsize=6.5, color=text_color_on(face), gid="legend-label")
    ax.set_xlim(0, 8)
    ax.set_ylim(4, 0)
    ax.set_xticks(np.arange(8) + 0.5, [str(g) for g in range(8)])
    ax.set_yticks(np.arange(4) + 0.5, [str(t) for t in range(4)])
    ax.tick_params(labelsize=TICK_FONT, length=0, pad=2, top=True, labeltop=True,
                   bottom=False, labelbottom=False)
    ax.set_xlabel("groupID = lane >> 2", fontsize=7)
    ax.xaxis.set_label_position("top")
    ax.set_ylabel("lane % 4", fontsize=7)
    for spine in ax.spines.values():
        spine.set_visible(False)
    return ax.figure


def _product_cell_size(layouts) -> tuple[float, float]:
    """Cell width and height in inches for the product figure."""
    k, n = layouts["B"].shape
    cell_w = min(MAX_CELL_IN, (PRODUCT_WIDTH_IN - 1.25) / (k + n))
    lines, _ = _label_format(layouts["A"], cell_w * 72, cell_w * 72)
    if lines == 2:
        return cell_w, cell_w
    # Narrow cells: make them tall enough for three lines at the minimum font.
    return cell_w, max(cell_w, 3 * _LINE_HEIGHT * MIN_FONT / 0.9 / 72)


def mma_product_figure(shape: str = "m16n8k16", ab_type: str | None = None,
                       acc_type: str | None = None, highlight_lanes=None) -> Figure:
    """A, B and C/D of one mma laid out as the product: A left, B on top, C/D bottom right.

    Rows of A line up with rows of C/D, columns of B with columns of C/D, and all
    cells have one size. None types pick the shape's first accepted type
    (f16 inputs with f32 accumulators; s8 with s32 for m16n8k32).
    """
    ab_type, acc_type = mma_types(shape, ab_type, acc_type)
    layouts = {op: mma_layout(shape, op, ab_type, acc_type) for op in ("A", "B", "C")}
    m, k = layouts["A"].shape
    n = layouts["B"].shape[1]
    cell_w, cell_h = _product_cell_size(layouts)
    left, right, gap, bottom, top = 0.55, 0.55, 0.15, 0.7, 1.15
    width = left + k * cell_w + gap + n * cell_w + right
    height = top + k * cell_h + gap + m * cell_h + bottom
    fig = Figure(figsize=(width, height))

    def axes_at(x_in, y_in, w_in, h_in):
        return fig.add_axes([x_in / width, y_in / height, w_in / width, h_in / height])

    right_x = left + k * cell_w + gap
    upper_y = bottom + m * cell_h + gap
    ax_a = axes_at(left, bottom, k * cell_w, m * cell_h)
    ax_c = axes_at(right_x, bottom, n * cell_w, m * cell_h)
    ax_b = axes_at(right_x, upper_y, n * cell_w, k * cell_h)
    a, b, c = layouts["A"], layouts["B"], layouts["C"]
    ab, acc = f".{ab_type}", f".{acc_type}"
    fragment_grid(a, ax_a, title="", highlight_lanes=highlight_lanes, col_side="bottom")
    ax_a.set_xlabel(f"A: m×k = {m}×{k}, {ab}, row-major  (columns = k)", fontsize=8)
    fragment_grid(b, ax_b, title=f"B: k×n = {k}×{n}, {ab}, column-major  (rows = k)",
                  highlight_lanes=highlight_lanes, col_side="top")
    ax_b.title.set_fontsize(8)
    fragment_grid(c, ax_c, title="", highlight_lanes=highlight_lanes,
                  col_side="bottom", row_side="right")
    ax_c.set_xlabel(f"C and D: m×n = {m}×{n}, {acc}", fontsize=8)

    fig.suptitle(f"{mma_instruction(shape, ab_type, acc_type)}\nD = A · B + C, one warp",
                 fontsize=10, y=1 - 0.12 / height, va="top")

    # The empty block above A holds the lane colour key and how to read a cell.
    block_w, block_h = k * cell_w - 0.45, k * cell_h
    swatch = min(0.36, block_w / 9.5, block_h / 7)
    legend_w, legend_h = 8 * swatch, 4 * swatch
    ax_legend = axes_at(left + (block_w - legend_w) / 2 + 0.1,
                        upper_y + (block_h - legend_h) / 2 + 0.3, legend_w, legend_h)
    lane_legend(ax_legend)
    ax_legend.text(4, 4.35, "cell: lane T, element · register R\n"
                   "lane = 4 · groupID + lane % 4", ha="center", va="top",
                   fontsize=7, gid="legend-note")
    return fig


def ldmatrix_figure(num: int = 4, trans: bool = False, highlight_lanes=None) -> Figure:
    """The stored 8x8 matrices of one ldmatrix, stacked; each cell names the lane and
    register that receives it, and each row names the lane that supplies its address."""
    layout = ldmatrix_layout(num, trans)
    rows, cols = layout.shape
    cell = 0.36
    left, right, bottom, top = 1.0, 1.35, 0.2, 1.1
    width, height = left + cols * cell + right, top + rows * cell + bottom
    fig = Figure(figsize=(width, height))
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
