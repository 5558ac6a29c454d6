"""The Hopper chapter's prediction for Kernel 5.12 (the last wave split along K), from the wave model of
tcgemm.engine.stream_k alone: no GPU. A cube of size n runs ceil(n / 256)² tile pairs of ceil(n / 64) K steps
on one cluster per two SMs."""
from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from matplotlib.colors import to_rgb
from matplotlib.figure import Figure

from tcgemm.engine.dispatch import tile_pairs, wave_cost, waves
from tcgemm.engine.stream_k import FIXUP_STEPS, StreamK, split
from tcgemm.style import COLUMN_WIDTH_IN, GROUP_HUES, TILE_EDGE, new_figure, text_color_on
from tcgemm.table import Column, Table

# SMs of an H100 SXM and of an H200 (NVIDIA's datasheets): 66 clusters of two.
HOPPER_SMS = 132


@dataclass(frozen=True)
class SplitPrediction:
    size: int
    tiles: int          # tile pairs
    k_tiles: int        # K steps per tile
    waves: int          # Kernel 5.9's waves of one tile pair per cluster
    longest: int        # K steps of Kernel 5.12's busiest cluster
    split_tiles: int
    runs: int

    @property
    def share(self) -> float:
        """5.12's time over 5.9's: its longest run and one fix-up (FIXUP_STEPS; none where nothing is split)
        over 5.9's waves of steps."""
        return (self.longest + (FIXUP_STEPS if self.runs else 0)) / (self.waves * self.k_tiles)

    @property
    def ideal_share(self) -> float:
        """The same with a fix-up that costs nothing."""
        return self.longest / (self.waves * self.k_tiles)


def predict(size: int, sms: int = HOPPER_SMS) -> SplitPrediction:
    """Kernel 5.12 against 5.9 at size³, split as the kernel splits it (stream_k.split, even where the
    split would not be taken)."""
    tiles, k_tiles = tile_pairs(size, size, 256), ceil(size / 64)
    sk = split(tiles, k_tiles, sms // 2)
    return SplitPrediction(size, tiles, k_tiles, waves(sms, size, size, 256), sk.longest_steps, sk.sk_tiles, sk.runs)


def width_share(size: int, width: int, sms: int = HOPPER_SMS) -> tuple[int, float]:
    """Kernel 5.11 at `width` against 5.9 at size³ in the dispatch's wave model (its waves of tile pairs,
    each weighed by the width's measured rate, tcgemm.engine.dispatch.WIDTH_RATE): (its waves, its time
    over 5.9's)."""
    return waves(sms, size, size, width), wave_cost(sms, size, size, width) / wave_cost(sms, size, size, 256)


def prediction_table(sizes, sms: int = HOPPER_SMS) -> Table:
    rows = [[f"{p.size}³", p.tiles, p.waves, p.k_tiles, p.split_tiles, p.runs, p.longest, 100 * p.ideal_share,
             100 * p.share] for p in (predict(n, sms) for n in sizes)]
    return Table(["Size", "tile pairs", "waves", "K steps", "split tiles", "runs", "longest run",
                  Column("free fix-up", ".0f", unit="%"), Column("with fix-up", ".0f", unit="%")], rows,
                 caption=f"Kernel 5.12's split on {sms} SMs ({sms // 2} clusters), predicted from the wave model",
                 notes=[f"waves: Kernel 5.9's, one tile pair per cluster; longest run: the K steps of 5.12's busiest "
                        f"cluster, its whole tiles and its run", "free fix-up, with fix-up: 5.12's time as a share of "
                        f"5.9's, its longest run (and {FIXUP_STEPS} steps for adding up a split tile: "
                        "tcgemm.engine.stream_k.FIXUP_STEPS) over 5.9's waves of steps"])


# The figure's toy GPU: 6 clusters, 8 tile pairs of 8 K steps (one whole wave and two tiles more).
TOY = StreamK(tiles=8, k_tiles=8, clusters=6, sk_tiles=8, runs=6)


def split_figure(sk: StreamK = TOY) -> Figure:
    """Kernel 5.9's waves of whole tiles above Kernel 5.12's runs, a row per cluster, K steps across: each
    tile in its own colour and numbered; a piece of a split tile outlined, its tile added up where the
    last of its pieces ends."""
    fig = new_figure(COLUMN_WIDTH_IN, 3.0, layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    whole = StreamK(sk.tiles, sk.k_tiles, sk.clusters, 0, 0)
    for ax, schedule, title in ((top, whole, "Kernel 5.9: waves of whole tiles"),
                                (bottom, sk, "Kernel 5.12: the same K steps in one run per cluster; outlined, the pieces of "
                                "split tiles")):
        for q in range(schedule.grid_clusters):
            start = 0
            for p in schedule.pieces(q):
                width = p.k1 - p.k0
                partial = width < sk.k_tiles
                hue = GROUP_HUES[p.tile % len(GROUP_HUES)]
                ax.broken_barh([(start, width)], (q - 0.42, 0.84), color=hue,
                               edgecolor=TILE_EDGE if partial else "none", lw=1.2 if partial else 0)
                ax.text(start + width / 2, q, str(p.tile), ha="center", va="center", fontsize=7,
                        color=text_color_on(to_rgb(hue)))
                start += width
        ax.set_ylim(sk.clusters - 0.5, -0.5)
        ax.set_yticks(range(sk.clusters))
        ax.set_ylabel("cluster", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_title(title, fontsize=8, loc="left")
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    bottom.set_xlabel("K steps, one after another", fontsize=8)
    return fig
