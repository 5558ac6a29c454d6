"""Split a kernel's time into a part that grows with K and a part that does not. Pure (numpy).

At fixed M and N, the main loop runs K / BK times per block and everything else (launch, filling
the pipeline, the epilogue, the last partial wave of blocks) runs once, so time ~ fixed + K * per_k.
A least-squares line through times at several K gives both, and the main loop's own rate.
"""
from __future__ import annotations

import textwrap
from typing import NamedTuple

import numpy as np

from tcgemm.engine.report import size_label
from tcgemm.style import TEXT_COLUMN_CHARS
from tcgemm.table import Column, Table


class KScaling(NamedTuple):
    fixed_us: float       # time at K = 0: everything outside the main loop
    per_k_ns: float       # time per unit of K
    loop_tflops: float    # the main loop's rate: 2 M N per unit of K

    def share_fixed(self, K: int) -> float:
        """The fraction of the time at this K spent outside the main loop."""
        return self.fixed_us / (self.fixed_us + self.per_k_ns * K / 1e3)


def fit_k_scaling(M: int, N: int, Ks, seconds) -> KScaling:
    Ks, seconds = np.asarray(Ks, dtype=float), np.asarray(seconds, dtype=float)
    if Ks.shape != seconds.shape or len(set(Ks.tolist())) < 2:
        raise ValueError("need times at two or more different K")
    per_k, fixed = np.polyfit(Ks, seconds, 1)
    if per_k <= 0:
        raise ValueError(f"time does not grow with K (slope {per_k:.3g} s per K): not a GEMM main loop")
    return KScaling(fixed * 1e6, per_k * 1e9, 2.0 * M * N / per_k / 1e12)


def scaling_table(kernel: str, scaling: dict[str, tuple[list[float], KScaling]], ceiling_tflops: float,
                  Ks, K: int = 4096) -> Table:
    """One row per variant (label -> (seconds at each of Ks, its fit)): the main loop's rate, also as
    a share of the mma.sync ceiling; the time outside the loop, also as a share of the time at K."""
    rows = [[label, fit.loop_tflops, 100 * fit.loop_tflops / ceiling_tflops, fit.fixed_us,
             100 * fit.share_fixed(K), ", ".join(f"{t * 1e6:.0f}" for t in times)]
            for label, (times, fit) in scaling.items()]
    return Table([kernel, Column("Main loop TFLOP/s", ".1f"), Column("% of the ceiling", ".1f"),
                  Column("Outside the loop (µs)", ".1f"), Column(f"% of the time at K = {K}", ".1f"),
                  Column(f"µs at K = {', '.join(f'{k // 1024}k' for k in Ks)}", align="right")], rows)


def loop_at_ceiling_text(fixed_us: float, ceiling_tflops: float, M: int, N: int, K: int) -> str:
    """What the time outside the main loop alone costs: the share of the ceiling an M x N x K
    product reaches if its main loop runs exactly at the ceiling."""
    ideal_loop = 2 * M * N * K / (ceiling_tflops * 1e12)
    share = 100 * ideal_loop / (ideal_loop + fixed_us * 1e-6)
    return textwrap.fill(f"with its main loop at the ceiling, the part outside it alone would hold "
                         f"{size_label(M, N, K)} to {share:.1f}% of the ceiling", TEXT_COLUMN_CHARS)

