"""Kernel 5.6's cooperative consumer warpgroups against Kernel 5.8's ping-pong ones. Pure module.

A model of when each consumer runs a main loop (its wgmma) and when it stores C, with two costs:
`main`, the main loop of one of 5.6's 128 x 256 tiles with the Tensor Cores busy throughout, and
`store`, the time one consumer warpgroup takes to store its accumulators (5.6's 64 x 256 or 5.8's
tile: as many). Cooperative (5.6): both consumers run a tile's main loop together, then both store
their halves at once, and the Tensor Cores idle meanwhile. Ping-pong (5.8): each consumer takes a tile
of half that size of its own (`main / 2` alone on the Tensor Cores) and the two alternate: a
consumer's main loop starts once the other's has ended and its own last store is done.

And the price of the smaller tiles, as arithmetic on the catalog: operand bytes read per MAC from
shared memory (by wgmma) and from L2 (by TMA, B multicast across the cluster).
"""
from __future__ import annotations

from dataclasses import dataclass

from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.engine.kernel_types import ITEMSIZE
from tcgemm.table import Column, Table

MODES = ("cooperative", "ping-pong")
WGMMA_M, WGMMA_K = 64, 16
# Consumer warpgroups that share one tile of the block: 5.6's two split its rows, 5.8's each own one.
SHARED_BY = {"k5.6": 2, "k5.8": 1}


@dataclass(frozen=True)
class Span:
    consumer: int        # 0 or 1
    tile: int            # the block's tile, in its order (5.6's, or 5.8's of half the size)
    kind: str            # "main" (wgmma) or "store" (C)
    start: float
    end: float


def consumer_spans(mode: str, work: int, main: float, store: float) -> list[Span]:
    """Both consumers' spans over `work` of 5.6's tiles (ping-pong: twice as many of half the size)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if work < 1 or not main > 0 or not store >= 0:
        raise ValueError(f"need work >= 1, main > 0 and store >= 0, got {work}, {main}, {store}")
    spans = []
    if mode == "cooperative":
        for t in range(work):
            start = t * (main + store)
            spans += [Span(c, t, kind, a, b) for c in (0, 1)
                      for kind, a, b in (("main", start, start + main), ("store", start + main, start + main + store))]
        return spans
    main_end, store_end = 0.0, [0.0, 0.0]
    for t in range(2 * work):
        c = t % 2
        start = max(main_end, store_end[c])
        main_end = start + main / 2
        store_end[c] = main_end + store
        spans += [Span(c, t, "main", start, main_end), Span(c, t, "store", main_end, store_end[c])]
    return spans


def tensor_cores_idle(spans: list[Span]) -> float:
    """The share of the time (from 0 to the last end) in which no consumer runs a main loop."""
    busy, covered = 0.0, 0.0
    for s in sorted((s for s in spans if s.kind == "main"), key=lambda s: s.start):
        busy += max(0.0, s.end - max(s.start, covered))
        covered = max(covered, s.end)
    return 1 - busy / max(s.end for s in spans)


def bytes_per_mac(key: str) -> tuple[float, float]:
    """Operand bytes per multiply-add of Kernel `key` (k5.6 or k5.8): read by wgmma from shared memory
    (each wgmma reads its 64 rows of A and all of the tile's B), and copied by TMA from L2 (a cluster's
    A tiles, and its B tile once: multicast)."""
    spec = GEMM_KERNELS[key]
    rows, size = spec.tile_m // SHARED_BY[key], ITEMSIZE[spec.in_dtype]
    smem = (rows + rows // WGMMA_M * spec.tile_n) * WGMMA_K * size / (rows * spec.tile_n * WGMMA_K)
    block_rows = spec.tile_m * spec.cluster
    l2 = (block_rows + spec.tile_n) * size / (block_rows * spec.tile_n)
    return smem, l2


def traffic_table(keys=("k5.6", "k5.8")) -> Table:
    """bytes_per_mac of each kernel, and relative to the first."""
    base, first = bytes_per_mac(keys[0]), GEMM_KERNELS[keys[0]].short_title
    rows = []
    for key in keys:
        smem, l2 = bytes_per_mac(key)
        spec = GEMM_KERNELS[key]
        consumer_rows = spec.tile_m // SHARED_BY[key]
        rows.append([spec.short_title, f"{consumer_rows}×{spec.tile_n}",
                     f"m64n{spec.tile_n}k16 × {consumer_rows // WGMMA_M}", smem, smem / base[0], l2, l2 / base[1]])
    return Table(["Kernel", "Tile per consumer", "wgmma per k16", Column("Shared memory, B/MAC", ".4f"),
                  Column(f"× {first}", ".2f"), Column("L2, B/MAC", ".4f"), Column(f"L2 × {first}", ".2f")], rows,
                 caption="Operand bytes per multiply-add: read by wgmma, and copied from L2 by TMA (clusters of 2)")
