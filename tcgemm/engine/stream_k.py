"""Kernel 5.12's stream-K split (kernels/k5.12_stream_k.cu), computed as the kernel computes it, without a GPU.

A persistent kernel with one cluster per two SMs runs its tile pairs in waves. Where the last wave is
partly empty, `split` hands the tiles that do not fill a whole wave, and one wave more, to stream-K: their
K steps, laid end to end, are cut into one run per cluster. A run covers the end of one tile, perhaps
whole tiles, and the start of another; a piece of a tile that is not the whole of it is added to the
others through a slot in global memory (`StreamK.pieces`, `StreamK.pieces_of_tile`).
"""
from __future__ import annotations

from dataclasses import dataclass

# A cluster that would run fewer K steps than this in a problem of less than one wave gets no run: each
# run's pipeline fills and its sum is written and read once, whatever its length.
MIN_RUN_STEPS = 4
# The model's allowance for adding up a split tile, in K steps of a run, and the share of the whole tiles'
# time a split must come under to be taken: fitted so that the model takes the split exactly where it
# measured faster on an H200 (tests/test_dispatch.py), not a measurement of the fix-up itself.
FIXUP_STEPS = 12
SPLIT_GAIN = 0.9
# Of the floats of one slot, per consumer warpgroup: 64 rows of the tile's width.
WG_ROWS = 64
WARPGROUPS_PER_CLUSTER = 2 * 2   # cluster rank x consumer warpgroup
SLOTS_PER_RUN = 2 * WARPGROUPS_PER_CLUSTER   # its first piece and the piece that ends it, per warpgroup


@dataclass(frozen=True)
class Piece:
    """K steps [k0, k1) of tile pair `tile` (in the kernel's tile order)."""
    tile: int
    k0: int
    k1: int


@dataclass(frozen=True)
class StreamK:
    """`tiles` tile pairs of `k_tiles` K steps each on `clusters` clusters; the last `sk_tiles` of them split
    into `runs` runs (0 and 0: no split, every cluster runs whole tiles)."""
    tiles: int
    k_tiles: int
    clusters: int
    sk_tiles: int
    runs: int

    @property
    def dp_tiles(self) -> int:
        """The tiles run whole, cluster q running q, q + clusters, ..."""
        return self.tiles - self.sk_tiles

    @property
    def grid_clusters(self) -> int:
        """The clusters launched: one per run, or per tile where fewer, up to `clusters`."""
        return max(min(self.tiles, self.clusters), self.runs)

    def run_start(self, r: int) -> int:
        """The first of run r's steps, counted from the first stream-K tile's first step."""
        return r * self.sk_tiles * self.k_tiles // self.runs

    def pieces(self, q: int) -> list[Piece]:
        """What cluster q runs, in order: the kernel's `piece` for u = 0, 1, ..."""
        grid = self.grid_clusters
        out = [Piece(t, 0, self.k_tiles) for t in range(q, self.dp_tiles, grid)]
        if q >= self.runs:
            return out
        a, b = self.run_start(q), self.run_start(q + 1)
        for t in range(a // self.k_tiles, -(-b // self.k_tiles)):
            lo, hi = max(a, t * self.k_tiles), min(b, (t + 1) * self.k_tiles)
            out.append(Piece(self.dp_tiles + t, lo - t * self.k_tiles, hi - t * self.k_tiles))
        return out

    def pieces_of_tile(self, t: int) -> list[tuple[int, bool]]:
        """The runs with a piece of stream-K tile t (0 to sk_tiles - 1), in the order of K, and whether the
        piece is its run's first: the kernel's `for_each_piece`."""
        tk, steps = t * self.k_tiles, self.sk_tiles * self.k_tiles
        out = []
        for r in range(((tk + 1) * self.runs - 1) // steps, self.runs):
            a = self.run_start(r)
            if a >= tk + self.k_tiles:
                break
            if a < self.run_start(r + 1):
                out.append((r, a >= tk))
        return out

    @property
    def longest_steps(self) -> int:
        """The K steps of the busiest cluster (cluster 0): its whole tiles' and its run's."""
        whole = -(-self.dp_tiles // self.grid_clusters) * self.k_tiles
        return whole + (-(-self.sk_tiles * self.k_tiles // self.runs) if self.runs else 0)

    def steps(self, q: int) -> int:
        """The K steps cluster q runs."""
        return sum(p.k1 - p.k0 for p in self.pieces(q))

    def partial_floats(self, tile_n: int) -> int:
        """The floats of the slots the kernel may write: each run's two, per block and consumer."""
        return self.runs * SLOTS_PER_RUN * WG_ROWS * tile_n

    @property
    def counters(self) -> int:
        """One per stream-K tile, block and consumer warpgroup."""
        return self.sk_tiles * WARPGROUPS_PER_CLUSTER


def split(tiles: int, k_tiles: int, clusters: int) -> StreamK:
    """Kernel 5.12's split of `tiles` tile pairs of `k_tiles` K steps over `clusters` clusters. The tiles of
    the last partial wave and of the whole wave before it, where there is one, or all the tiles where there
    are fewer than clusters (into as many runs as give each MIN_RUN_STEPS steps, at least one per tile, at
    most one per cluster). No split where the tiles fill whole waves, or where a run's steps and the
    fix-up (FIXUP_STEPS) come to more than SPLIT_GAIN of the whole tiles' waves."""
    for name, value in (("tiles", tiles), ("k_tiles", k_tiles), ("clusters", clusters)):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    full, rest = divmod(tiles, clusters)
    none = StreamK(tiles, k_tiles, clusters, 0, 0)
    if rest == 0:
        return none
    if full == 0:
        runs = min(clusters, max(tiles, tiles * k_tiles // MIN_RUN_STEPS))
        sk = StreamK(tiles, k_tiles, clusters, tiles, runs)
    else:
        sk = StreamK(tiles, k_tiles, clusters, rest + clusters, clusters)
    return sk if sk.longest_steps + FIXUP_STEPS < SPLIT_GAIN * (full + 1) * k_tiles else none
