"""Measure the mma.sync ceiling on this GPU: the best rate over a few occupancies, each checked."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcgemm.catalog import PROBES
from tcgemm import ceiling as model
from tcgemm.report import Timing
from tcgemm.gpu.compile import get_function
from tcgemm.gpu.device import device_info, require_gpu
from tcgemm.gpu.timing import time_launches

SOURCE = PROBES["mma_ceiling"].source
THREADS = 128               # 4 warps per block, one per SM sub-partition


@dataclass(frozen=True)
class Ceiling:
    tflops: float
    timing: Timing
    warps_per_sm: int
    iters: int
    exact: bool             # every warp's result equal to iters * sum_c A_c B

    def __str__(self) -> str:
        return (f"mma.sync m16n8k16 ceiling: {self.tflops:.1f} TFLOP/s\n"
                f"({self.warps_per_sm} warps per SM, {model.CHAINS} independent chains each, {self.iters} rounds; "
                f"result {'exact' if self.exact else 'WRONG'})")


def run_once(warps_per_sm: int, iters: int, seed: int | None = None) -> tuple[Ceiling, np.ndarray]:
    cupy = require_gpu()
    if warps_per_sm % 4:
        raise ValueError(f"warps_per_sm must be a multiple of 4 (blocks of {THREADS} threads), got {warps_per_sm}")
    info = device_info()
    blocks = info.sm_count * warps_per_sm // 4
    warps = blocks * THREADS // 32
    a_tiles, b = model.operands(seed)
    a_regs, b_regs = (cupy.asarray(x) for x in model.registers(a_tiles, b))
    d = cupy.full((warps, 32, 4), np.nan, dtype=np.float32)
    kernel = get_function(SOURCE, "mma_ceiling")
    launch = lambda: kernel((blocks,), (THREADS,), (a_regs, b_regs, d, np.int32(iters)))
    launch()
    got = model.warp_results(cupy.asnumpy(d))
    exact = bool(np.array_equal(got, np.broadcast_to(model.expected(a_tiles, b, iters), got.shape)))
    timing = time_launches(launch, warmup=3, reps=20, flush_l2=False)
    tflops = model.flops(warps, iters) / timing.median / 1e12
    return Ceiling(tflops, timing, warps_per_sm, iters, exact), got


def best_of(runs: list, what: str = "mma.sync ceiling"):
    """The fastest of `runs` (each with .tflops and .exact). Raises if any of them computed a wrong
    result: a ceiling counts only if the kernel that reached it was right."""
    wrong = [r for r in runs if not r.exact]
    if wrong:
        raise RuntimeError(f"the {what} kernel computed a wrong result: {wrong[0]}")
    return max(runs, key=lambda r: r.tflops)


def measure(warps_per_sm=(4, 8, 16, 32), iters: int = 2048, seed: int | None = None) -> Ceiling:
    """The fastest checked configuration. Raises if any configuration computes a wrong result."""
    return best_of([run_once(w, iters, seed)[0] for w in warps_per_sm])
