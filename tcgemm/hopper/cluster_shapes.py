"""The Hopper chapter's prediction for Kernel 5.14 (the cluster's shape a choice), from the tiles alone: no
GPU. Each block of a cluster of cluster_m x cluster_n copies 1 / cluster_n of its A tile and 1 / cluster_m
of its B tile per K step (64 of K, 2 bytes each) and receives the rest by multicast; a cluster's blocks run
on one GPC, so the clusters of four that fit at once are the driver's to say (a GPU cell measures it)."""
from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from tcgemm.hopper.split_waves import HOPPER_SMS
from tcgemm.table import Column, Table

TILE_M, TILE_K, BYTES = 128, 64, 2     # Kernel 5.14's tile rows, K step and fp16 input


@dataclass(frozen=True)
class ClusterShape:
    cluster_m: int      # blocks along M, sharing B's tile
    cluster_n: int      # blocks along N, sharing A's tile
    width: int          # the tile's columns

    @property
    def blocks(self) -> int:
        return self.cluster_m * self.cluster_n

    @property
    def label(self) -> str:
        return f"{self.cluster_m}×{self.cluster_n}, {self.width} wide"

    def copied_kb(self) -> float:
        """KB one block copies from L2 per K step: its share of A's tile and of B's."""
        return (TILE_M / self.cluster_n + self.width / self.cluster_m) * TILE_K * BYTES / 1024

    def clusters(self, M: int, N: int) -> int:
        """The clusters' tiles (cluster_m x cluster_n tiles each) that cover M x N."""
        return ceil(M / (TILE_M * self.cluster_m)) * ceil(N / (self.width * self.cluster_n))

    def waves(self, M: int, N: int, slots: int) -> int:
        """Waves of those, `slots` clusters at a time."""
        return ceil(self.clusters(M, N) / slots)


def prediction_table(problems, sms: int = HOPPER_SMS) -> Table:
    """Per problem (M, N, K, [ClusterShape, ...]) and cluster shape: KB each block copies per K step, the
    clusters, and their waves were every SM to hold a block (sms / blocks clusters at once)."""
    rows = [[f"{M}×{N}×{K}", shape.label, shape.copied_kb(), shape.clusters(M, N), sms // shape.blocks,
             shape.waves(M, N, sms // shape.blocks)]
            for M, N, K, shapes in problems for shape in shapes]
    return Table(["M×N×K", "cluster, tile", Column("KB per block per K step", ".0f"), "clusters",
                  "at once (if all SMs)", "waves"], rows,
                 caption="Kernel 5.14's cluster shapes, predicted from the tiles (128 rows, fp16)",
                 notes=["KB per block per K step: the block's share of A's 128 × 64 tile and of B's width × 64, "
                        "copied from L2 (the rest comes by multicast from the cluster's other blocks)",
                        "at once (if all SMs): SMs / blocks per cluster; a GPC's SMs that do not make a whole "
                        "cluster stay idle, so the GPU may run fewer (measured below)"])
