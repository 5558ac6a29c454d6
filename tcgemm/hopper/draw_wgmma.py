"""The picture of wgmma's accumulator layout (tcgemm.hopper.wgmma). Pure (matplotlib).

Left, all of D coloured by the warp of the warpgroup that holds it; right, warp 0's first 8 columns in
the lane colours and labels of the mma.sync chapters (tcgemm.fragments.draw), since they are mma.sync's
m16n8 accumulator layout."""
from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from tcgemm.fragments.draw import TICK_FONT, fragment_grid
from tcgemm.hopper.wgmma import WARPGROUP_WARPS, WGMMA_M, accumulator_layout
from tcgemm.style import TILE_EDGE, new_figure, text_color_on

WARP_GREYS = ((0.55, 0.55, 0.55), (0.75, 0.75, 0.75), (0.45, 0.45, 0.45), (0.85, 0.85, 0.85))
DETAIL_CELL_IN = 0.38


def accumulator_figure(n: int = 16) -> Figure:
    """D (64 x n) of wgmma m64n<n>k16 with f32 accumulators: who holds each entry."""
    layout = accumulator_layout(n)
    detail_h = 16 * DETAIL_CELL_IN
    overview_cell = detail_h / WGMMA_M
    overview_w, detail_w = n * overview_cell, 8 * DETAIL_CELL_IN
    width, height = overview_w + detail_w + 1.9, detail_h + 1.2
    fig = new_figure(width, height)
    overview = fig.add_axes([0.45 / width, 0.3 / height, overview_w / width, detail_h / height])
    for w in range(WARPGROUP_WARPS):
        face = WARP_GREYS[w]
        overview.add_patch(Rectangle((0, 16 * w), n, 16, facecolor=face, edgecolor="white", linewidth=1))
        overview.text(n / 2, 16 * w + 8, f"warp {w}\nthreads\n{32 * w}-{32 * w + 31}", ha="center", va="center",
                      fontsize=7, color=text_color_on(face))
    overview.add_patch(Rectangle((0, 0), 8, 16, fill=False, edgecolor=TILE_EDGE, linewidth=2))
    overview.set_xlim(0, n)
    overview.set_ylim(WGMMA_M, 0)
    overview.set_xticks([0, 8, n], ["0", "8", str(n)])
    overview.set_yticks(range(0, WGMMA_M + 1, 16))
    overview.tick_params(labelsize=TICK_FONT, length=2, top=True, labeltop=True, bottom=False, labelbottom=False)
    overview.set_title(f"D: {WGMMA_M} x {n}", fontsize=9, pad=18)
    for spine in overview.spines.values():
        spine.set_visible(False)
    detail = fig.add_axes([(overview_w + 1.2) / width, 0.3 / height, detail_w / width, detail_h / height])
    fragment_grid(layout.warp_fragment(0), ax=detail, columns=range(8),
                  title="warp 0, columns 0-7: mma.sync's m16n8 C\n(columns 8j to 8j+7: c4j to c4j+3)")
    return fig
