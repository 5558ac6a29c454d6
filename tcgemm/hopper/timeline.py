"""A tile timeline of a persistent kernel, read from the stamps its TRACE switch writes (kernels/trace.cuh):
per block, the global timer (ns) and the SM's clock counter (cycles) at its start, at three points of
every tile its consumer 0 works on (the tile's first stage has arrived; its last wgmma is done; its
store of C is issued) and at its end, and the SM it ran on. Pure module: tcgemm.hopper.gpu.timeline takes the
stamps on the GPU.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from tcgemm import KERNEL_DIR
from tcgemm.style import COLUMN_WIDTH_IN, GROUP_HUES, MUTED_TEXT, new_figure
from tcgemm.table import Column, Table

STORE_HUE = GROUP_HUES[5]         # vermillion, beside the blue and green of the main loops
STAMPS_PER_TILE = 3               # stage arrived, main loop done, store issued (kernels/trace.cuh's TileStamp)
FIRST_TILE_SLOT = 2               # slot 0: the block's start, slot 1: its SM


def header_constants(path: Path = KERNEL_DIR / "trace.cuh") -> tuple[int, int]:
    """(TRACE_BLOCKS, TRACE_SLOTS) as kernels/trace.cuh defines them: the one source of the layout."""
    found = re.search(r"TRACE_BLOCKS\s*=\s*(\d+),\s*TRACE_SLOTS\s*=\s*(\d+)", path.read_text())
    if not found:
        raise ValueError(f"{path} does not define TRACE_BLOCKS and TRACE_SLOTS")
    return int(found.group(1)), int(found.group(2))


TRACE_BLOCKS, TRACE_SLOTS = header_constants()
MAX_TILES = (TRACE_SLOTS - 1 - FIRST_TILE_SLOT) // STAMPS_PER_TILE    # tiles per block the slots hold


def tiles_per_block(pairs: int, blocks: int) -> np.ndarray:
    """Tiles each block of a persistent cluster-of-two launch works on (Kernels 5.5 to 5.7): cluster c
    takes tile pairs c, c + clusters, ...; both its blocks take a tile of each pair."""
    clusters = blocks // 2
    cluster = np.arange(blocks) // 2
    return np.maximum(0, (pairs - cluster + clusters - 1) // clusters)


def storing_blocks(blocks: int, switches=()) -> np.ndarray:
    """Which of a launch's blocks store C under the measurement `switches` of Kernels 5.6 to 5.8:
    none with SKIP_STORE, those of odd clusters with HALF_STORE, else all."""
    stores = np.full(blocks, "SKIP_STORE" not in switches)
    if "HALF_STORE" in switches:
        stores &= np.arange(blocks) // 2 % 2 == 1
    return stores


@dataclass(frozen=True)
class Phase:
    """One tile index across the blocks that have it: durations and start times in microseconds."""
    tile: int
    blocks: np.ndarray            # indices of the blocks with this tile
    wait: np.ndarray              # from the block's start or last store to the tile's first stage
    main: np.ndarray              # the main loop: first stage arrived to last wgmma done
    store: np.ndarray             # the epilogue: last wgmma done to last store issued
    begin: np.ndarray             # first stage arrived, from the launch's first start
    clock_ghz: np.ndarray | None = None   # the SM's clock during the main loop: cycles / ns


class TileTimeline:
    """The stamps of one launch: `stamps` (blocks, TRACE_SLOTS) in ns, 0 where nothing was written;
    `stores` says which blocks store C (False where a measurement switch skips it); `series_us`, the
    median time of the timed series of launches before the traced one, where there was one; `clocks`,
    the SM clock counter at the same stamps (same shape), where it was read; `flop_per_tile`, the work of
    one tile's main loop, and `peak_flop_per_clock`, what one SM's Tensor Cores do per clock at the
    published peak (tcgemm.hw), to set the main loops' work per clock against it."""

    def __init__(self, stamps, label: str = "", stores=None, series_us: float | None = None, clocks=None,
                 flop_per_tile: float | None = None, peak_flop_per_clock: float | None = None):
        stamps = np.asarray(stamps, dtype=np.int64)
        if stamps.ndim != 2 or stamps.shape[1] != TRACE_SLOTS or not len(stamps):
            raise ValueError(f"stamps must be (blocks, {TRACE_SLOTS}), got shape {stamps.shape}")
        self.label, self.series_us = label, series_us
        self.flop_per_tile, self.peak_flop_per_clock = flop_per_tile, peak_flop_per_clock
        self.start, self.sm, self.end = stamps[:, 0], stamps[:, 1], stamps[:, -1]
        self.stores = np.ones(len(stamps), bool) if stores is None else np.asarray(stores, bool)
        self.tiles: list[np.ndarray] = []
        for b, row in enumerate(stamps):
            if row[0] == 0 or row[-1] == 0:
                raise ValueError(f"block {b} has no {'start' if row[0] == 0 else 'end'} stamp: "
                                 "did the launch run with TRACE?")
            slots = row[FIRST_TILE_SLOT:FIRST_TILE_SLOT + MAX_TILES * STAMPS_PER_TILE].reshape(MAX_TILES, -1)
            n = int(np.argmin(np.all(slots > 0, axis=1))) if not np.all(slots > 0) else MAX_TILES
            if np.any(slots[n:] > 0):
                raise ValueError(f"block {b}: tile {n} is incomplete but later tiles have stamps")
            times = np.concatenate(([row[0]], slots[:n].ravel(), [row[-1]]))
            if np.any(np.diff(times) < 0):
                raise ValueError(f"block {b}: its stamps go back in time")
            self.tiles.append(slots[:n])
        self.origin = int(self.start.min())
        self.clocks = None
        if clocks is not None:
            clocks = np.asarray(clocks, dtype=np.int64)
            if clocks.shape != stamps.shape:
                raise ValueError(f"clocks must have the stamps' shape {stamps.shape}, got {clocks.shape}")
            self.clocks = [c[FIRST_TILE_SLOT:FIRST_TILE_SLOT + len(t) * STAMPS_PER_TILE].reshape(len(t), -1)
                           for c, t in zip(clocks, self.tiles)]

    @property
    def counts(self) -> np.ndarray:
        return np.array([len(t) for t in self.tiles])

    @property
    def span_us(self) -> float:
        """First block's start to last block's end."""
        return (int(self.end.max()) - self.origin) / 1e3

    def phases(self) -> list[Phase]:
        out = []
        for i in range(self.counts.max()):
            blocks = np.flatnonzero(self.counts > i)
            t = np.array([self.tiles[b][i] for b in blocks])
            before = np.array([self.start[b] if i == 0 else self.tiles[b][i - 1][2] for b in blocks])
            ghz = None
            if self.clocks is not None:
                c = np.array([self.clocks[b][i] for b in blocks])
                ghz = (c[:, 1] - c[:, 0]) / (t[:, 1] - t[:, 0])
            out.append(Phase(i, blocks, (t[:, 0] - before) / 1e3, (t[:, 1] - t[:, 0]) / 1e3,
                             (t[:, 2] - t[:, 1]) / 1e3, (t[:, 0] - self.origin) / 1e3, ghz))
        return out

    def store_us(self) -> np.ndarray:
        """Every tile's epilogue of the blocks that store C."""
        return np.concatenate([p.store[self.stores[p.blocks]] for p in self.phases()])

    def main_us(self) -> np.ndarray:
        return np.concatenate([p.main for p in self.phases()])

    def main_clock_ghz(self) -> np.ndarray | None:
        """The SM clock during every tile's main loop, where the clock counter was read."""
        return None if self.clocks is None else np.concatenate([p.clock_ghz for p in self.phases()])

    def main_peak_share(self) -> np.ndarray | None:
        """Every main loop's FLOP per SM clock as a share of the Tensor Cores' published peak per clock
        (one warpgroup's view of the block's tile: within about one K tile of the whole block's)."""
        if self.clocks is None or not self.flop_per_tile or not self.peak_flop_per_clock:
            return None
        cycles = self.main_us() * 1e3 * self.main_clock_ghz()
        return self.flop_per_tile / cycles / self.peak_flop_per_clock

    def phase_table(self, caption: str = "") -> Table:
        """A row per tile index: the median over the blocks that have it, [fastest, slowest]."""
        rng = lambda v, f=".1f": f"{np.median(v):{f}} [{v.min():{f}}, {v.max():{f}}]"
        rows = [(f"tile {p.tile}", len(p.blocks), rng(p.begin), rng(p.wait), rng(p.main),
                 rng(p.store[self.stores[p.blocks]]) if self.stores[p.blocks].any() else None)
                + ((rng(p.clock_ghz, ".2f"),) if self.clocks is not None else ()) for p in self.phases()]
        counts = self.counts
        ends = "; ".join(f"the {int((counts == n).sum())} blocks with {n} tiles end at "
                         f"{np.median((self.end[counts == n] - self.origin) / 1e3):.1f} µs"
                         for n in sorted(set(counts), reverse=True))
        clock = ("SM clock in the main loop, GHz",) if self.clocks is not None else ()
        return Table([Column("", align="left"), "blocks", "first stage arrives, µs", "wait for it, µs",
                      "main loop, µs", "store of C, µs", *clock], rows, caption=caption or self.label,
                     notes=(f"Medians over the blocks [fastest, slowest], from the launch's first block start; "
                            f"{ends} (median).",))

    def figure(self, title: str = "") -> Figure:
        """A row per block (sorted by SM), time across: each tile's main loop in its tile index's colour,
        its store of C in vermillion (STORE_HUE, a hue: it stays itself in dark mode), the wait for its first stage left blank."""
        order = np.argsort(self.sm, kind="stable")
        fig = new_figure(COLUMN_WIDTH_IN, 3.4, layout="constrained")
        ax = fig.subplots()
        for y, b in enumerate(order):
            t = (self.tiles[b] - self.origin) / 1e3
            for i, (arrived, done, stored) in enumerate(t):
                ax.broken_barh([(arrived, done - arrived)], (y - 0.5, 1), color=GROUP_HUES[i % 2 + 1], lw=0)
                ax.broken_barh([(done, stored - done)], (y - 0.5, 1), color=STORE_HUE, lw=0)
            ax.plot([(self.end[b] - self.origin) / 1e3] * 2, [y - 0.5, y + 0.5], color=MUTED_TEXT, lw=0.8)
        ax.set_xlim(0, self.span_us * 1.01)
        ax.set_ylim(len(order) - 0.5, -0.5)
        ax.set_ylabel("block (by SM)", fontsize=8)
        ax.set_yticks([])
        ax.tick_params(axis="x", labelsize=7)
        ax.set_xlabel("µs from the first block's start", fontsize=8)
        ax.set_title(f"{title or self.label}\na row per block, by SM; in colour a tile's main loop, in black its "
                     "store of C, in grey the block's end", fontsize=8, loc="left")
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        return fig


def compare_table(timelines: list[TileTimeline], caption: str = "") -> Table:
    """One row per launch: the median main loop and store of a tile, and the launch's span."""
    median = lambda v, scale=1: None if v is None else float(np.median(v)) * scale
    rows = [(t.label, median(t.main_us()), median(t.main_clock_ghz()), median(t.main_peak_share(), 100),
             median(t.store_us()) if t.stores.any() else None, t.span_us, t.series_us) for t in timelines]
    return Table([Column("launch", align="left"), Column("main loop per tile, µs", ".1f"),
                  Column("SM clock in the main loops, GHz", ".2f"),
                  Column("main loop's work per clock, % of peak", ".1f"), Column("store of C per tile, µs", ".2f"),
                  Column("first start to last end, µs", ".1f"), Column("timed series, median µs", ".1f")],
                 rows, caption=caption,
                 notes=("Medians over every tile of every block (the store: of the blocks that store C). Work per "
                        "clock: the tile's FLOP over the main loop's SM clock cycles, against what one SM's Tensor "
                        "Cores do per clock at the published peak. The timed series ran just before the traced "
                        "launch, each launch after an L2 flush.",))
