"""Measure the mma.sync ceiling of each variant on this GPU: the best rate over a few occupancies,
each checked."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcgemm.engine.catalog import PROBES
from tcgemm.engine import ceiling as model
from tcgemm.errors import UnsupportedOnGPUError
from tcgemm.fragment_layouts import MMA_VARIANTS, unsupported
from tcgemm.hw import peak_for
from tcgemm.table import Table
from tcgemm.engine.report import Timing
from tcgemm.engine.gpu.compile import current_arch, get_function
from tcgemm.engine.gpu.device import device_info, require_gpu
from tcgemm.engine.gpu.timing import time_launches

SOURCE = PROBES["mma_ceiling"].source
THREADS = 128               # 4 warps per block, one per SM sub-partition


@dataclass(frozen=True)
class Ceiling:
    tflops: float
    timing: Timing
    warps_per_sm: int
    rounds: int
    exact: bool             # every warp's result equal to sum_c A_c B
    variant: str = model.DEFAULT_VARIANT

    def __str__(self) -> str:
        return (f"mma.sync {self.variant} ceiling: {self.tflops:.1f} {model.rate_unit(self.variant)}\n"
                f"({self.warps_per_sm} warps per SM, {model.CHAINS} independent chains each, {self.rounds} rounds; "
                f"result {'exact' if self.exact else 'WRONG'})")


def prepare(warps_per_sm: int, rounds: int, seed: int | None = None, variant: str = model.DEFAULT_VARIANT):
    """The probe's launch at `warps_per_sm`, on fresh operands: (launch, warps, result), where result()
    reads every warp's D back. UnsupportedOnGPUError where this GPU lacks the variant."""
    if warps_per_sm % 4:
        raise ValueError(f"warps_per_sm must be a multiple of 4 (blocks of {THREADS} threads), got {warps_per_sm}")
    if reason := unsupported(variant, current_arch()):
        raise UnsupportedOnGPUError(reason)
    cupy = require_gpu()
    blocks = device_info().sm_count * warps_per_sm // 4
    warps = blocks * THREADS // 32
    a_tiles, b = model.operands(variant, seed)
    a_regs, b_regs, b_neg = (cupy.asarray(x) for x in model.registers(variant, a_tiles, b))
    d = cupy.full((warps, 32, 4), np.nan, dtype=np.float32)
    kernel = get_function(SOURCE, model.entry(variant))
    launch = lambda: kernel((blocks,), (THREADS,), (a_regs, b_regs, b_neg, d, np.int32(rounds)))
    result = lambda: (model.warp_results(variant, cupy.asnumpy(d)), model.expected(a_tiles, b))
    return launch, warps, result


def run_once(warps_per_sm: int, rounds: int, seed: int | None = None,
             variant: str = model.DEFAULT_VARIANT) -> tuple[Ceiling, np.ndarray]:
    """One checked, timed configuration; UnsupportedOnGPUError where this GPU lacks the variant."""
    launch, warps, result = prepare(warps_per_sm, rounds, seed, variant)
    launch()
    got, expected = result()
    exact = bool(np.array_equal(got, np.broadcast_to(expected, got.shape)))
    timing = time_launches(launch, warmup=3, reps=20, flush_l2=False)
    tflops = model.flops(variant, warps, rounds) / timing.median / 1e12
    return Ceiling(tflops, timing, warps_per_sm, rounds, exact, variant), got


def best_of(runs: list, what: str = "mma.sync ceiling"):
    """The fastest of `runs` (each with .tflops and .exact). Raises if any of them computed a wrong
    result: a ceiling counts only if the kernel that reached it was right."""
    wrong = [r for r in runs if not r.exact]
    if wrong:
        raise RuntimeError(f"the {what} kernel computed a wrong result: {wrong[0]}")
    return max(runs, key=lambda r: r.tflops)


def measure(warps_per_sm=(4, 8, 16, 32), rounds: int = 1024, seed: int | None = None,
            variant: str = model.DEFAULT_VARIANT) -> Ceiling:
    """The fastest checked configuration. Raises if any configuration computes a wrong result."""
    return best_of([run_once(w, rounds, seed, variant)[0] for w in warps_per_sm])


def measure_variants(variants=None) -> tuple[list[Ceiling], list[str]]:
    """The ceiling (`measure`) of every variant this GPU executes (default: all of MMA_VARIANTS), and
    one line for each variant it lacks."""
    variants = MMA_VARIANTS if variants is None else variants
    reasons = {v: unsupported(v, current_arch()) for v in variants}
    return [measure(variant=v) for v, r in reasons.items() if r is None], [r for r in reasons.values() if r]


def variants_table(variants=None) -> Table:
    """measure_variants as a table, beside the datasheet rate of each variant's types, with the mma
    each SM completes per clock at the driver's highest clock."""
    ceilings, skipped = measure_variants(variants)
    info = device_info()
    return model.variants_table(ceilings, peak_for(info.name), skipped, info.sm_count, info.sm_clock_mhz)
