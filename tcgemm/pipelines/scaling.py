"""Split a kernel's time into a part that grows with K and a part that does not. Pure (numpy).

At fixed M and N, the main loop runs K / BK times per block and everything else (launch, filling
the pipeline, the epilogue, the last partial wave of blocks) runs once, so time ~ fixed + K * per_k.
A least-squares line through times at several K gives both, and the main loop's own rate.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


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
