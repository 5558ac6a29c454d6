"""The Hopper chapter's prediction for Kernel 5.12 (the last wave split along K), from the wave model of
tcgemm.engine.stream_k alone: no GPU. A cube of size n runs ceil(n / 256)² tile pairs of ceil(n / 64) K steps
on one cluster per two SMs."""
from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from tcgemm.engine.stream_k import FIXUP_STEPS, split
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
    clusters, tiles, k_tiles = sms // 2, ceil(size / 256) ** 2, ceil(size / 64)
    sk = split(tiles, k_tiles, clusters)
    longest = sk.longest_steps if sk.runs else ceil(tiles / clusters) * k_tiles
    return SplitPrediction(size, tiles, k_tiles, ceil(tiles / clusters), longest, sk.sk_tiles, sk.runs)


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
