"""Pictures of the CUDA-core SGEMM kernels' thread layout, load pattern and C write-back, from
tcgemm.sgemm.sgemm_layout. Pure (matplotlib).

Colour is by warp (Okabe-Ito, as in tcgemm.fragments.draw), or by load instruction in the load pattern; every
cell names its thread, so the pictures read in greyscale. Thick outlines mark one thread's cells.
"""
from __future__ import annotations

from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from tcgemm.sgemm import sgemm_layout as sg
from tcgemm.style import COLUMN_WIDTH_IN, GROUP_HUES, MIN_FONT_PT, MUTED_FACE, TILE_EDGE, new_figure, text_color_on

OTHER_QUADRANT_MIX = 0.55
PAD_FACE = (0.85, 0.85, 0.85)
HIGHLIGHT_EDGE = "black"
HIGHLIGHT_WIDTH = 2.6
MAX_CELL_IN = 0.42
_CHAR_WIDTH = 0.62  # average glyph width, in font sizes


def warp_color(warp: int) -> tuple[float, float, float]:
    return to_rgb(GROUP_HUES[warp % len(GROUP_HUES)])


def lighter(rgb, mix: float = OTHER_QUADRANT_MIX) -> tuple[float, float, float]:
    return tuple(c + (1 - c) * mix for c in rgb)


def quadrant_color(warp: int, first_quadrant: bool) -> tuple[float, float, float]:
    """The warp's colour for a thread's first 4x4 block, a lighter shade for the other three."""
    return warp_color(warp) if first_quadrant else lighter(warp_color(warp))


def _cell_inches(columns: float, margins_in: float) -> float:
    """Side of a cell (a 4x4 block or a float4) when ``columns`` cells and ``margins_in`` of margins
    share the text column's width."""
    return min(MAX_CELL_IN, (COLUMN_WIDTH_IN - margins_in) / columns)


def _font(cell_in: float, chars: int) -> float:
    return min(8.0, 0.85 * cell_in * 72 / (_CHAR_WIDTH * chars))


def _axes(fig: Figure, width: float, height: float, x: float, y: float, w: float, h: float, label: str):
    """Axes at (x, y) with size (w, h), all in inches from the figure's lower left corner."""
    return fig.add_axes([x / width, y / height, w / width, h / height], label=label)


def _cell(ax, x, y, w, h, face, label, fontsize, gid, hatch=None):
    ax.add_patch(Rectangle((x, y), w, h, facecolor=face, edgecolor="white", linewidth=0.6,
                           hatch=hatch, gid=gid))
    if label:
        ax.text(x + w / 2, y + h / 2, label, ha="center", va="center", fontsize=fontsize,
                color=text_color_on(face), gid=f"{gid}-label")


def _outline(ax, x, y, w, h):
    inset = 0.06 * min(w, h)
    ax.add_patch(Rectangle((x + inset, y + inset), w - 2 * inset, h - 2 * inset, fill=False,
                           edgecolor=HIGHLIGHT_EDGE, linewidth=HIGHLIGHT_WIDTH, gid="highlight"))


def _frame(ax, cols: float, rows: float, xticks=(), yticks=(), top=True):
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_xticks(list(xticks), [str(t) for t in xticks])
    ax.set_yticks(list(yticks), [str(t) for t in yticks])
    ax.tick_params(labelsize=7, length=2, top=top, labeltop=top, bottom=not top, labelbottom=not top)
    for side in ax.spines.values():
        side.set_visible(False)


def _warp_legend(fig: Figure, warps: int, y: float):
    handles = [Patch(facecolor=warp_color(w), label=f"warp {w}") for w in range(warps)]
    fig.legend(handles=handles, loc="lower center", ncol=warps, fontsize=7, frameon=False,
               bbox_to_anchor=(0.5, y), handlelength=1.2, columnspacing=1.0)


def _draw_vector(ax, tile: int, highlighted, face, vertical: bool, run_in: float):
    """One k row of As or Bs: TILE floats, the highlighted ones in colour, each run of four outlined
    and labelled (0-3) if every run's label fits ``run_in``, its length, at the minimum font."""
    for i in range(tile):
        x, y, w, h = (0, i, 1, 1) if vertical else (i, 0, 1, 1)
        ax.add_patch(Rectangle((x, y), w, h, facecolor=face if i in highlighted else MUTED_FACE,
                               edgecolor="white", linewidth=0.3, gid="float"))
    runs = {first: f"{first}-{first + 3}" for first in sorted(highlighted)[::4]}
    labelled = all(_font(run_in, len(label)) >= MIN_FONT_PT for label in runs.values())
    for first, label in runs.items():
        _outline(ax, *((0, first, 1, 4) if vertical else (first, 0, 4, 1)))
        if labelled:
            at = (0.5, first + 2) if vertical else (first + 2, 0.5)
            ax.text(*at, label, ha="center", va="center", fontsize=MIN_FONT_PT,
                    rotation=0 if vertical else 90, color=text_color_on(face), gid="float-label")


def thread_layout_figure(tile: int = 64, highlight_tid: int = 0) -> Figure:
    """The C tile in 4x4 blocks, each labelled with its thread and coloured by warp (lighter for
    a thread's three blocks HALF away); left the A column As[k][:], top the B row Bs[k][:], with
    the 8 floats ``highlight_tid`` reads of each; its four C blocks outlined."""
    tile, tid = sg.check_tile(tile), sg.check_tid(highlight_tid, tile)
    left, gap, right, bottom, top = 0.45, 0.08, 0.1, 0.75, 0.95
    block = _cell_inches(tile // 4 + 1, left + gap + right)
    side = tile // 4 * block
    width, height = left + block + gap + side + right, bottom + side + gap + block + top
    fig = new_figure(width, height)
    ax_c = _axes(fig, width, height, left + block + gap, bottom, side, side, "C tile")
    ax_a = _axes(fig, width, height, left, bottom, block, side, "A column")
    ax_b = _axes(fig, width, height, left + block + gap, bottom + side + gap, side, block, "B row")

    owner, half = sg.owner_map(tile), sg.half(tile)
    fontsize = _font(block, len(str(sg.thread_count(tile) - 1)))
    for m in range(0, tile, 4):
        for n in range(0, tile, 4):
            who = int(owner[m, n])
            face = quadrant_color(who // sg.WARP, m < half and n < half)
            _cell(ax_c, n, m, 4, 4, face, str(who), fontsize, "block")
    rows, cols = sg.thread_rows(tid, tile), sg.thread_cols(tid, tile)
    for m in rows[::4]:
        for n in cols[::4]:
            _outline(ax_c, n, m, 4, 4)
    ax_c.axhline(half, color=TILE_EDGE, linewidth=1.2)
    ax_c.axvline(half, color=TILE_EDGE, linewidth=1.2)
    ticks = range(0, tile + 1, 8 if tile == 64 else 16)
    _frame(ax_c, tile, tile, xticks=ticks, top=False)
    ax_c.set_xlabel("n (column of the C tile)", fontsize=8)

    face = warp_color(sg.warp_of(tid, tile))
    _draw_vector(ax_a, tile, set(rows), face, vertical=True, run_in=block)
    _frame(ax_a, 1, tile, yticks=ticks)
    ax_a.set_ylabel("m (row of the C tile)", fontsize=8)
    ax_a.set_xlabel("As[k][:]\n(A column)", fontsize=7)
    _draw_vector(ax_b, tile, set(cols), face, vertical=False, run_in=block)
    _frame(ax_b, tile, 1)
    ax_b.set_ylabel("Bs[k][:]\n(B row)", fontsize=7, rotation=0, ha="right", va="center")

    fig.suptitle(f"SGEMM {tile}×{tile} tile, {sg.thread_count(tile)} threads: each 4×4 block names its thread\n"
                 f"lighter: a thread's three blocks {half} rows / columns from its first\n"
                 f"outlined: thread {tid}'s blocks and the 8 + 8 floats it reads per k",
                 fontsize=9, y=1 - 0.08 / height, va="top")
    _warp_legend(fig, sg.warp_count(tile), 0.0)
    return fig


def load_pattern_figure(tile: int = 64, highlight_tids=None) -> Figure:
    """The As and Bs stripes of one k-tile in float4 cells, each labelled with the thread that
    loads it and coloured by that thread's load instruction j. ``highlight_tids`` (default:
    thread 0 and the first B loader, thread THREADS/2) are outlined."""
    tile = sg.check_tile(tile)
    loaders = sg.thread_count(tile) // 2
    highlight = {0, loaders} if highlight_tids is None else {sg.check_tid(t, tile) for t in highlight_tids}
    cols = tile // 4
    left, right, bottom, top, between = 0.6, 0.3, 0.75, 1.1, 0.75
    cell = _cell_inches(cols, left + right)
    stripe_h = sg.BK * cell
    width, height = left + cols * cell + right, bottom + 2 * stripe_h + between + top
    fig = new_figure(width, height)
    axes = {"A": _axes(fig, width, height, left, bottom + stripe_h + between, cols * cell, stripe_h, "As"),
            "B": _axes(fig, width, height, left, bottom, cols * cell, stripe_h, "Bs")}
    fontsize = _font(cell, len(str(sg.thread_count(tile) - 1)))
    for tid, loads in enumerate(sg.load_map(tile)):
        for j, load in enumerate(loads):
            ax = axes[load.matrix]
            _cell(ax, load.col4, load.k, 1, 1, to_rgb(GROUP_HUES[j]), str(tid), fontsize, "load")
            if tid in highlight:
                _outline(ax, load.col4, load.k, 1, 1)
    tick_step = 2 if tile == 64 else 4
    for matrix, ax in axes.items():
        _frame(ax, cols, sg.BK)
        ax.set_xticks([c + 0.5 for c in range(0, cols, tick_step)], [str(c) for c in range(0, cols, tick_step)])
        ax.set_yticks([k + 0.5 for k in range(sg.BK)], [str(k) for k in range(sg.BK)])
        ax.set_ylabel("k", fontsize=8)
        first, last = (0, loaders - 1) if matrix == "A" else (loaders, 2 * loaders - 1)
        ax.set_title(f"{matrix}s stripe ({sg.BK} × {tile} floats), loaded by threads {first}-{last}; "
                     f"cell = float4 column c (floats 4c..4c+3)", fontsize=8, pad=16)
    rows_step = loaders // cols
    handles = [Patch(facecolor=GROUP_HUES[j], label=f"load j = {j}: k = k_first + {j * rows_step}")
               for j in range(sg.loads_per_thread(tile))]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=7, frameon=False,
               bbox_to_anchor=(0.5, 0.0), handlelength=1.2)
    fig.suptitle(f"Global → shared, one k-tile ({tile}×{tile} SGEMM): each thread loads "
                 f"{sg.loads_per_thread(tile)} float4,\n{rows_step} k rows apart; outlined: threads "
                 f"{', '.join(str(t) for t in sorted(highlight))}", fontsize=9, y=1 - 0.08 / height, va="top")
    return fig


def writeback_figure(tile: int = 64, p: int = 0, highlight_tid: int = 0) -> Figure:
    """Pass ``p`` of the C write-back. Left: stage[TILE/4][TILE + 8] in float4 cells, each
    labelled with the thread that writes it (coloured as in thread_layout_figure; hatched: the
    padding). Right: the warp and store instruction j that store each stage row, and its C row."""
    tile, p, tid = sg.check_tile(tile), sg.check_pass(p), sg.check_tid(highlight_tid, tile)
    rows, cols, pad_cols = tile // 4, tile // 4, sg.STAGE_PAD // 4
    table_w = 1.9
    left, gap, right, bottom, top = 0.55, 0.35, 0.2, 0.75, 1.3
    cell = _cell_inches(cols + pad_cols, left + gap + table_w + right)
    stage_w = (cols + pad_cols) * cell
    width, height = left + stage_w + gap + table_w + right, bottom + rows * cell + top
    fig = new_figure(width, height)
    ax_stage = _axes(fig, width, height, left, bottom, stage_w, rows * cell, "stage")
    ax_rows = _axes(fig, width, height, left + stage_w + gap, bottom, table_w, rows * cell, "stores")

    fontsize = _font(cell, len(str(sg.thread_count(tile) - 1)))
    for who, cells in enumerate(sg.stage_writes(tile, p)):
        for store, c in enumerate(cells):
            face = quadrant_color(who // sg.WARP, store == 0)
            _cell(ax_stage, c.col4, c.stage_row, 1, 1, face, str(who), fontsize, "stage")
            if who == tid:
                _outline(ax_stage, c.col4, c.stage_row, 1, 1)
    for s in range(rows):
        _cell(ax_stage, cols, s, pad_cols, 1, PAD_FACE, "pad" if s == 0 else "", 7, "pad", hatch="//")
    ax_stage.axhline(rows // 2, color=TILE_EDGE, linewidth=1.2)
    ax_stage.axvline(cols // 2, color=TILE_EDGE, linewidth=1.2)
    tick_step = 2 if tile == 64 else 4
    _frame(ax_stage, cols + pad_cols, rows)
    ax_stage.set_xticks([c + 0.5 for c in range(0, cols, tick_step)], [str(c) for c in range(0, cols, tick_step)])
    ax_stage.set_yticks([s + 0.5 for s in range(rows)], [str(s) for s in range(rows)])
    ax_stage.set_ylabel("stage row", fontsize=8)
    ax_stage.set_title(f"stage[{rows}][{tile} + {sg.STAGE_PAD}]: float4 cell = writing thread", fontsize=8, pad=16)

    per_row = cols
    for s in range(rows):
        q = s * per_row
        warp, j = (q % sg.thread_count(tile)) // sg.WARP, q // sg.thread_count(tile)
        _cell(ax_rows, 0, s, 1, 1, warp_color(warp), f"warp {warp}, j {j}", 7, "store")
        ax_rows.text(1.08, s + 0.5, f"→ C row {sg.stage_c_row(tile, p, s)}", ha="left", va="center",
                     fontsize=7, gid="c-row")
    _frame(ax_rows, 2, rows)
    ax_rows.set_xticks([])
    ax_rows.set_yticks([])
    ax_rows.set_title("stored by warp, instruction j\n(128-bit st.global per lane)", fontsize=8, pad=6)

    padded, plain = sg.staging_bank_conflicts(tile, sg.STAGE_PAD), sg.staging_bank_conflicts(tile, 0)
    fig.suptitle(f"C write-back, pass {p} of 4: each thread writes row {p} of its four 4×4 blocks,\n"
                 f"then each warp stores whole C rows; staging writes: {padded.ways} wavefront per "
                 f"8-lane phase\nwith the {sg.STAGE_PAD}-float padding, {plain.ways} without",
                 fontsize=9, y=1 - 0.08 / height, va="top")
    _warp_legend(fig, sg.warp_count(tile), 0.0)
    return fig
