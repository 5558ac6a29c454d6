"""Pictures of the cp.async ring buffer, from tcgemm.pipelines.pipeline, and of the Hopper kernels'
consumer warpgroups, from tcgemm.pipelines.ping_pong. Pure (matplotlib).

Colour is by tile (Okabe-Ito, as in tcgemm.fragments.draw); every bar and slot is labelled, so the
pictures read in greyscale: hatched = copy in flight, solid = ldmatrix + mma, grey = waiting.
"""
from __future__ import annotations

import math

from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from tcgemm.style import COLUMN_WIDTH_IN, GROUP_HUES, new_figure, text_color_on
from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.pipelines.ping_pong import MODES, consumer_spans, tensor_cores_idle
from tcgemm.pipelines.pipeline import ring_state, steady_state_period, timeline

WAIT_FACE = (0.78, 0.78, 0.78)
FREE_FACE = (0.97, 0.97, 0.97)
BAR_HEIGHT = 0.7
LABEL_FONT = 7.0
Y_LABELS_IN = 1.0  # the row names left of the bars ("warps waiting")
_CHAR_WIDTH = 0.62  # average glyph width, in font sizes


def tile_color(tile: int) -> tuple[float, float, float]:
    return to_rgb(GROUP_HUES[tile % len(GROUP_HUES)])


def _light(rgb, mix: float = 0.65) -> tuple[float, float, float]:
    return tuple(c + (1 - c) * mix for c in rgb)


def _bar(ax, x0, x1, y, face, edge, hatch=None):
    ax.add_patch(Rectangle((x0, y - BAR_HEIGHT / 2), x1 - x0, BAR_HEIGHT, facecolor=face,
                           edgecolor=edge, linewidth=0.8, hatch=hatch))


def _label(ax, x, y, text, ink=(0, 0, 0), boxed=False):
    box = dict(facecolor="white", edgecolor="none", pad=0.6, alpha=0.85) if boxed else None
    ax.text(x, y, text, ha="center", va="center", fontsize=LABEL_FONT, color=ink, bbox=box, clip_on=True)


def time_windows(intervals, per_window: float) -> list[tuple[float, float]]:
    """Consecutive time windows covering the whole timeline, each at most ``per_window`` long and
    about equally long, cut where an mma ends (through a bar only if no mma ends in reach)."""
    total = max(iv.end for iv in intervals)
    ends = sorted({iv.end for iv in intervals if iv.kind == "compute"})
    windows, start = [], 0.0
    while total - start > per_window:
        target = start + (total - start) / math.ceil((total - start) / per_window)
        cuts = [t for t in ends if start < t <= start + per_window] or [start + per_window]
        cut = min(cuts, key=lambda t: abs(t - target))
        windows.append((start, cut))
        start = cut
    windows.append((start, total))
    return windows


def _visible(iv, window) -> float:
    return max(0.0, min(iv.end, window[1]) - max(iv.start, window[0]))


def timeline_figure(n_stages: int, k_tiles: int, copy_time: float, compute_time: float) -> Figure:
    """One row per stage: each copy hatched from issue to land ("load t<k>"), each compute solid
    ("mma t<k>"); a bottom row "warps waiting" shows where the mma waits for a copy. The time axis
    is cut into panels, one above the other, so that the figure fits the text column with the
    shortest bar wide enough for its label; a bar cut by a panel edge is labelled in its larger part."""
    intervals = timeline(n_stages, k_tiles, copy_time, compute_time)
    period = steady_state_period(n_stages, copy_time, compute_time)
    label_in = (_CHAR_WIDTH * len(f"load t{k_tiles - 1}") * LABEL_FONT + 4) / 72
    per_window = (COLUMN_WIDTH_IN - Y_LABELS_IN) * min(copy_time, compute_time) / label_in
    windows = time_windows(intervals, per_window)
    span = max(end - start for start, end in windows)
    fig = new_figure(COLUMN_WIDTH_IN, len(windows) * (0.34 * (n_stages + 1) + 0.45) + 0.75,
                     layout="constrained")
    axes = fig.subplots(len(windows), 1, squeeze=False)[:, 0]
    home = {iv: max(range(len(windows)), key=lambda w: _visible(iv, windows[w])) for iv in intervals}
    for w, (ax, window) in enumerate(zip(axes, windows)):
        for iv in intervals:
            if _visible(iv, window) == 0:
                continue
            hue = tile_color(iv.tile)
            row = n_stages if iv.kind == "wait" else iv.stage
            x0, x1 = max(iv.start, window[0]), min(iv.end, window[1])
            if iv.kind == "copy":
                _bar(ax, x0, x1, row, _light(hue), hue, hatch="///")
            elif iv.kind == "compute":
                _bar(ax, x0, x1, row, hue, "white")
            else:
                _bar(ax, x0, x1, row, WAIT_FACE, "white")
            if home[iv] == w:
                middle = (x0 + x1) / 2
                name = {"copy": "load", "compute": "mma", "wait": "wait"}[iv.kind]
                ink = text_color_on(hue) if iv.kind == "compute" else (0, 0, 0)
                _label(ax, middle, row, f"{name} t{iv.tile}", ink, boxed=iv.kind == "copy")
        ax.set_xlim(window[0], window[0] + span)  # one time scale in every panel
        ax.set_xticks([t for t in ax.get_xticks() if window[0] <= t <= window[1]])
        ax.spines["bottom"].set_bounds(*window)
        ax.set_ylim(n_stages + 0.6, -0.6)
        ax.set_yticks(range(n_stages + 1), [f"stage {s}" for s in range(n_stages)] + ["warps waiting"],
                      fontsize=8)
        ax.tick_params(axis="y", length=0)
        ax.tick_params(axis="x", labelsize=7)
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
    axes[-1].set_xlabel("time (hatched: cp.async in flight, issue to land; solid: ldmatrix + mma)", fontsize=8)
    hidden = compute_time >= copy_time / (n_stages - 1)
    axes[0].set_title(f"N = {n_stages} stages, copy {copy_time:g}, mma {compute_time:g} per tile: period {period:g} "
                      f"per tile ({'copy latency hidden' if hidden else 'copy-bound'})", fontsize=9)
    return fig


def ring_figure(n_stages: int, iteration: int, k_tiles: int) -> Figure:
    """The N stage slots while iteration ``iteration`` computes: the tile each holds and whether
    it is being computed on, in flight or free."""
    state = ring_state(n_stages, k_tiles, iteration)
    fig = new_figure(1.1 * n_stages + 0.6, 1.9)
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


def ping_pong_figure(work: int = 3, main: float = 4.0, store: float = 1.0) -> Figure:
    """Kernel 5.6's cooperative and Kernel 5.8's ping-pong consumers (tcgemm.pipelines.ping_pong's
    model) one above the other on one time axis: a row per consumer warpgroup, main loops solid in the
    tile's colour, stores of C hatched; each title gives the share of the time the Tensor Cores idle."""
    fig = new_figure(COLUMN_WIDTH_IN, 2.6, layout="constrained")
    axes = fig.subplots(2, 1, sharex=True)
    schedules = {mode: consumer_spans(mode, work, main, store) for mode in MODES}
    for ax, (mode, spans) in zip(axes, schedules.items()):
        for s in spans:
            hue = tile_color(s.tile)
            if s.kind == "main":
                _bar(ax, s.start, s.end, s.consumer, hue, "white")
                _label(ax, (s.start + s.end) / 2, s.consumer, f"wgmma t{s.tile}", text_color_on(hue))
            else:
                _bar(ax, s.start, s.end, s.consumer, _light(hue), hue, hatch="///")
                _label(ax, (s.start + s.end) / 2, s.consumer, "C", boxed=True)
        spec = GEMM_KERNELS["k5.6" if mode == "cooperative" else "k5.8"]
        kernel, tiles = spec.short_title, f"{spec.tile_m}×{spec.tile_n} tiles, " + (
            f"{spec.tile_m // 2} rows per consumer" if mode == "cooperative" else "one per consumer")
        ax.set_title(f"{kernel}, {mode}: {tiles}; Tensor Cores idle {tensor_cores_idle(spans):.0%} of the time",
                     fontsize=8, loc="left")
        ax.set_ylim(1.6, -0.6)
        ax.set_yticks([0, 1], ["consumer 0", "consumer 1"], fontsize=8)
        ax.tick_params(axis="y", length=0)
        ax.tick_params(axis="x", labelsize=7)
        ax.set_xlim(0, max(s.end for spans in schedules.values() for s in spans))
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
    axes[-1].set_xlabel(f"time (model: a 5.6 tile's main loop {main:g}, one consumer's store {store:g}; "
                        "solid: wgmma, hatched: C stored)", fontsize=8)
    return fig
