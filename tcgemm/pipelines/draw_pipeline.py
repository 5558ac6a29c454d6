"""Pictures of the cp.async ring buffer, from tcgemm.pipelines.pipeline. Pure (matplotlib).

Colour is by tile (Okabe-Ito, as in tcgemm.fragments.draw); every bar and slot is labelled, so the
pictures read in greyscale: hatched = copy in flight, solid = ldmatrix + mma, grey = waiting.
"""
from __future__ import annotations

from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from tcgemm.style import GROUP_HUES, text_color_on
from tcgemm.pipelines.pipeline import ring_state, steady_state_period, timeline

WAIT_FACE = (0.78, 0.78, 0.78)
FREE_FACE = (0.97, 0.97, 0.97)
BAR_HEIGHT = 0.7
_CHAR_WIDTH = 0.62  # average glyph width, in font sizes


def tile_color(tile: int) -> tuple[float, float, float]:
    return to_rgb(GROUP_HUES[tile % len(GROUP_HUES)])


def _light(rgb, mix: float = 0.65) -> tuple[float, float, float]:
    return tuple(c + (1 - c) * mix for c in rgb)


def _bar(ax, x0, x1, y, face, edge, label, fontsize, hatch=None, ink=(0, 0, 0), boxed=False):
    ax.add_patch(Rectangle((x0, y - BAR_HEIGHT / 2), x1 - x0, BAR_HEIGHT, facecolor=face,
                           edgecolor=edge, linewidth=0.8, hatch=hatch))
    box = dict(facecolor="white", edgecolor="none", pad=0.6, alpha=0.85) if boxed else None
    ax.text((x0 + x1) / 2, y, label, ha="center", va="center", fontsize=fontsize, color=ink,
            bbox=box, clip_on=True)


def timeline_figure(n_stages: int, k_tiles: int, copy_time: float, compute_time: float) -> Figure:
    """One row per stage: each copy hatched from issue to land ("load t<k>"), each compute solid
    ("mma t<k>"); a bottom row "warps waiting" shows where the mma waits for a copy."""
    intervals = timeline(n_stages, k_tiles, copy_time, compute_time)
    period = steady_state_period(n_stages, copy_time, compute_time)
    total = max(iv.end for iv in intervals)
    shortest = min(copy_time, compute_time)
    width = min(16.0, max(6.0, 1.6 + 0.8 * total / shortest))
    bar_pt = 72 * (width - 1.6) * shortest / total
    fontsize = min(8.0, max(5.0, 0.9 * bar_pt / (_CHAR_WIDTH * len(f"load t{k_tiles - 1}"))))
    fig = Figure(figsize=(width, 0.45 * (n_stages + 1) + 1.4))
    ax = fig.subplots()
    for iv in intervals:
        hue = tile_color(iv.tile)
        if iv.kind == "copy":
            _bar(ax, iv.start, iv.end, iv.stage, _light(hue), hue, f"load t{iv.tile}", fontsize,
                 hatch="///", boxed=True)
        elif iv.kind == "compute":
            _bar(ax, iv.start, iv.end, iv.stage, hue, "white", f"mma t{iv.tile}", fontsize, ink=text_color_on(hue))
        else:
            _bar(ax, iv.start, iv.end, n_stages, WAIT_FACE, "white", f"wait t{iv.tile}", fontsize)
    ax.set_xlim(0, total)
    ax.set_ylim(n_stages + 0.6, -0.6)
    ax.set_yticks(range(n_stages + 1), [f"stage {s}" for s in range(n_stages)] + ["warps waiting"], fontsize=8)
    ax.tick_params(axis="y", length=0)
    ax.tick_params(axis="x", labelsize=7)
    ax.set_xlabel("time (hatched: cp.async in flight, issue to land; solid: ldmatrix + mma)", fontsize=8)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    hidden = compute_time >= copy_time / (n_stages - 1)
    ax.set_title(f"N = {n_stages} stages, copy {copy_time:g}, mma {compute_time:g} per tile: period {period:g} per "
                 f"tile ({'copy latency hidden' if hidden else 'copy-bound'})", fontsize=9)
    fig.set_layout_engine("constrained")
    return fig


def ring_figure(n_stages: int, iteration: int, k_tiles: int) -> Figure:
    """The N stage slots while iteration ``iteration`` computes: the tile each holds and whether
    it is being computed on, in flight or free."""
    state = ring_state(n_stages, k_tiles, iteration)
    fig = Figure(figsize=(1.1 * n_stages + 0.6, 1.9))
    ax = fig.subplots()
    for stage, (tile, what) in enumerate(state):
        if what == "free":
            face, edge, hatch, label, ink = FREE_FACE, (0.6, 0.6, 0.6), None, "free", (0.35, 0.35, 0.35)
        elif what == "computing":
            face = tile_color(tile)
            edge, hatch, label, ink = "black", None, f"t{tile}\nmma", text_color_on(face)
        else:
            face, edge, hatch, label, ink = _light(tile_color(tile)), tile_color(tile), "///", f"t{tile}\nin flight", "black"
        ax.add_patch(Rectangle((stage + 0.05, 0.05), 0.9, 0.9, facecolor=face, edgecolor=edge,
                               linewidth=2.2 if what == "computing" else 1, hatch=hatch))
        box = dict(facecolor="white", edgecolor="none", pad=0.6, alpha=0.85) if hatch else None
        ax.text(stage + 0.5, 0.5, label, ha="center", va="center", fontsize=8, color=ink, bbox=box)
        ax.text(stage + 0.5, 1.12, f"stage {stage}", ha="center", va="center", fontsize=7)
    ax.set_xlim(0, n_stages)
    ax.set_ylim(1.3, 0)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.set_title(f"iteration {iteration} of {k_tiles} tiles, N = {n_stages}", fontsize=9)
    fig.set_layout_engine("constrained")
    return fig
