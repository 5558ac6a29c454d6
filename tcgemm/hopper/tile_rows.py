"""The Hopper chapter's prediction for Kernel 5.15 (64-row tiles), from the catalog's tiles and stages
alone: no GPU. A product of 64 or 128 rows against a long N reads B once from DRAM, a stage's B box per
block per K step; the bytes of B a block keeps in flight are its stages times that box."""
from __future__ import annotations

from dataclasses import dataclass

from tcgemm.engine.catalog import configured
from tcgemm.table import Column, Table

TILE_K, BYTES = 64, 2     # the K step and fp16


@dataclass(frozen=True)
class RingShape:
    key: str            # the kernel (k5.14 or k5.15)
    width: int          # the tile's columns

    def _spec(self):
        return configured(self.key, "sm_90").with_tile_n(self.width)

    @property
    def rows(self) -> int:
        return self._spec().tile_m

    @property
    def stages(self) -> int:
        return self._spec().stages

    def a_kb(self) -> float:
        """KB of A per stage (from L2: every block of a short M reads the same rows)."""
        return self.rows * TILE_K * BYTES / 1024

    def b_kb(self) -> float:
        """KB of B per stage (from DRAM: each column of B is read by one cluster)."""
        return self.width * TILE_K * BYTES / 1024

    def b_in_flight_kb(self) -> float:
        """KB of B the block's ring holds, every stage loading."""
        return self.stages * self.b_kb()


def prediction_table(rings) -> Table:
    rows = [[f"Kernel {r.key[1:]}", f"{r.rows} × {r.width}", r.stages, r.a_kb(), r.b_kb(), r.b_in_flight_kb()]
            for r in rings]
    return Table(["Kernel", "tile", "stages", Column("KB of A per stage", ".0f"), Column("KB of B per stage", ".0f"),
                  Column("KB of B in flight", ".0f")], rows,
                 caption="The ring of a block, fp16, from the catalog's tiles and stages (tcgemm.engine.catalog)",
                 notes=["KB of B in flight: stages × KB of B per stage, every stage waiting for its copy"])
