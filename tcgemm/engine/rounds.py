"""Interleaved rounds, as arithmetic: kernels and their baseline timed in turn, round after round, and
what the rounds say about each kernel against the baseline. Pure module; tcgemm.engine.gpu.bench.time_in_rounds
does the timing.

Within one round every runner is timed once (tcgemm.engine.gpu.timing.time_launches, a median over its own
runs), one after the other, so the kernel and the baseline of a round meet the GPU in nearly the same
state (clock, temperature, power). A kernel's speed in a round is the baseline's time over the kernel's
in that round. Its verdict against the baseline rests on the median of those ratios and their spread
over the rounds: "ahead" only when every round puts it ahead, "behind" only when every round puts it
behind, else "level". Two rounds at least: one round has no spread.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from tcgemm.table import Column, Table

MIN_ROUNDS = 2


def round_order(names: list[str], round_index: int) -> list[str]:
    """The order the runners are timed in round `round_index`: rotated by one each round, so that no
    runner always follows the same one (the GPU's state after a heavy kernel differs from after a light one)."""
    if not names:
        return []
    shift = round_index % len(names)
    return names[shift:] + names[:shift]


@dataclass(frozen=True)
class RoundsResult:
    """One kernel against the baseline over the rounds: baseline time / kernel time, per round."""
    name: str
    times: tuple[float, ...]       # the kernel's median seconds, per round
    ratios: tuple[float, ...]      # the baseline's time over the kernel's, per round

    @property
    def median(self) -> float:
        return statistics.median(self.ratios)

    @property
    def low(self) -> float:
        return min(self.ratios)

    @property
    def high(self) -> float:
        return max(self.ratios)

    @property
    def verdict(self) -> str:
        """'ahead', 'behind' or 'level' (the rounds disagree, or some round has them equal)."""
        if self.low > 1:
            return "ahead"
        if self.high < 1:
            return "behind"
        return "level"


def summarize_rounds(times: dict[str, list[float]], baseline: str) -> list[RoundsResult]:
    """Each runner but the baseline against the baseline, from `times` (name -> median seconds per
    round, every runner timed in every round)."""
    if baseline not in times:
        raise ValueError(f"the baseline {baseline!r} was not timed; timed: {', '.join(times)}")
    counts = {name: len(ts) for name, ts in times.items()}
    if len(set(counts.values())) != 1:
        raise ValueError(f"every runner must be timed in every round; rounds per runner: {counts}")
    if counts[baseline] < MIN_ROUNDS:
        raise ValueError(f"rounds must be at least {MIN_ROUNDS} (one round has no spread), got {counts[baseline]}")
    base = times[baseline]
    for name, ts in times.items():
        if not all(math.isfinite(t) and t > 0 for t in ts):
            raise ValueError(f"{name}: times must be positive seconds, got {ts}")
    return [RoundsResult(name, tuple(ts), tuple(b / t for b, t in zip(base, ts)))
            for name, ts in times.items() if name != baseline]


def rounds_table(results: list[RoundsResult], baseline: str, size: str, rounds: int) -> Table:
    """The median ratio, its spread over the rounds and the verdict, one row per kernel."""
    rows = [[r.name, 100 * r.median, f"{100 * r.low:.1f} to {100 * r.high:.1f}%", 1e6 * statistics.median(r.times),
             r.verdict] for r in results]
    return Table([Column("Kernel"), Column(f"% of {baseline}", ".1f", unit="%"),
                  Column("spread over the rounds", align="right"), Column("median µs", ".0f"),
                  Column("verdict", align="left")], rows,
                 caption=f"{size}: {rounds} interleaved rounds",
                 notes=(f"Per round: {baseline}'s time over the kernel's (each the median of its own runs, L2 "
                        "flushed before each run), the runners timed in turn; the median over the rounds and its "
                        "lowest and highest. ahead / behind: in every round; level: the rounds disagree.",))
