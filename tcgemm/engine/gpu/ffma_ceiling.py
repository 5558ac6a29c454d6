"""Measure the FFMA ceiling on this GPU: fp32 FFMA from registers only, every result checked exactly."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcgemm.engine.catalog import PROBES
from tcgemm.engine.report import Timing
from tcgemm.engine.gpu.ceiling import best_of
from tcgemm.engine.gpu.compile import get_function
from tcgemm.engine.gpu.device import device_info, require_gpu
from tcgemm.engine.gpu.timing import time_launches

SOURCE = PROBES["ffma_ceiling"].source
CHAINS = 8                  # as in the kernel
UNROLL = 16
THREADS = 256
STEP = 2.0 ** -6            # t: exact sums up to 2^24 * t


@dataclass(frozen=True)
class FfmaCeiling:
    tflops: float
    timing: Timing
    blocks_per_sm: int
    trips: int
    exact: bool

    def __str__(self) -> str:
        return (f"FFMA ceiling: {self.tflops:.1f} TFLOP/s\n({self.blocks_per_sm} blocks of {THREADS} threads "
                f"per SM, {CHAINS} independent chains each; result {'exact' if self.exact else 'WRONG'})")


def run_once(blocks_per_sm: int = 8, trips: int = 1024) -> FfmaCeiling:
    cupy = require_gpu()
    blocks = device_info().sm_count * blocks_per_sm
    threads = blocks * THREADS
    out = cupy.full(threads * CHAINS, np.nan, dtype=np.float32)
    kernel = get_function(SOURCE, "ffma_ceiling")
    launch = lambda: kernel((blocks,), (THREADS,), (out, np.float32(1.0), np.float32(STEP), np.int32(trips)))
    launch()
    expected = np.arange(CHAINS, dtype=np.float64) + trips * UNROLL * STEP
    got = cupy.asnumpy(out).reshape(threads, CHAINS)
    exact = bool(np.array_equal(got, np.broadcast_to(expected.astype(np.float32), got.shape)))
    timing = time_launches(launch, warmup=3, reps=20, flush_l2=False)
    flops = 2.0 * threads * CHAINS * UNROLL * trips
    return FfmaCeiling(flops / timing.median / 1e12, timing, blocks_per_sm, trips, exact)


def measure(blocks_per_sm=(4, 8), trips: int = 1024) -> FfmaCeiling:
    """The fastest checked configuration. Raises if any configuration computes a wrong result."""
    return best_of([run_once(b, trips) for b in blocks_per_sm], "FFMA ceiling")
