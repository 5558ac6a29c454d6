"""How tcgemm times a kernel, as arithmetic: how long to warm up, how many runs to time, and whether
two runs of a size sweep agree. Pure module; tcgemm.engine.gpu.timing does the launching.

A GPU idles at a low clock and raises it under load, over some tens of milliseconds, so a kernel is
timed only after the GPU has run it back to back for a while (`warmup_s`, not a count of runs: ten
runs of a 20 µs kernel are over before the clock has moved). Then the number of timed runs comes from
a first estimate of one run's time: enough to add up to `target_s` of kernel time (thousands of runs
for a short kernel) and at least `wanted_reps`, unless those take longer than `window_s` (a long
kernel gets the runs that fill `window_s`, and never fewer than `min_reps`). The GPU's clock and power
state move over tenths of a second, so a median of a few dozen runs of a millisecond kernel moves with
them from one timing to the next; a median over about a second of runs holds still (book/pipelines.ipynb
measures both). Under a heavy kernel an H100 also comes down from its top clock to what its power limit
allows over a few tenths of a second (book/hopper.ipynb, "Under the power limit"), longer than `warmup_s`;
tcgemm.hopper.gpu.power times a kernel only after that has settled.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from tcgemm.table import Column, Table

MAX_WARMUP_BATCH = 10_000   # warm-up runs launched between two looks at the clock


@dataclass(frozen=True)
class TimingPlan:
    """What tcgemm.engine.gpu.timing.time_launches does before and while timing."""
    warmup_s: float = 0.2       # run back to back at least this long before timing (clocks ramp up)
    min_warmup: int = 3         # ... and at least this many runs (the first may load the module)
    estimate_runs: int = 5      # runs timed first, to choose the number of timed runs
    target_s: float = 0.05      # the timed runs add up to at least this much kernel time
    wanted_reps: int = 500      # ... and are at least this many,
    window_s: float = 1.0       # ... unless that many take longer than this: then as many as fill it
    min_reps: int = 20          # never fewer runs than this
    max_reps: int = 5000        # ... nor more than this (below 10 µs a run, fewer than target_s)

    def __post_init__(self):
        for name in ("warmup_s", "target_s", "window_s"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be a number of seconds >= 0, got {getattr(self, name)!r}")
        for name in ("min_warmup", "estimate_runs", "min_reps", "wanted_reps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.max_reps < self.min_reps:
            raise ValueError(f"max_reps ({self.max_reps}) is below min_reps ({self.min_reps})")

    def with_counts(self, reps: int | None = None, warmup: int | None = None) -> "TimingPlan":
        """This plan with exactly `reps` timed runs and at least `warmup` warm-up runs, where given."""
        plan = self if warmup is None else replace(self, min_warmup=warmup)
        return plan if reps is None else replace(plan, min_reps=reps, max_reps=reps)

    @property
    def fixed_reps(self) -> bool:
        """The number of timed runs needs no estimate."""
        return self.min_reps == self.max_reps

    def reps_for(self, estimate_s: float) -> int:
        """Timed runs for a kernel whose one run took about `estimate_s`: enough to add up to
        target_s, and wanted_reps or as many as fill window_s if fewer; within [min_reps, max_reps]."""
        if not (math.isfinite(estimate_s) and estimate_s > 0):
            raise ValueError(f"the estimate of one run must be a positive time, got {estimate_s!r}")
        wanted = min(self.wanted_reps, math.ceil(self.window_s / estimate_s))
        return min(self.max_reps, max(self.min_reps, math.ceil(self.target_s / estimate_s), wanted))

    def warmup_batch(self, done: int, elapsed_s: float) -> int:
        """How many warm-up runs to launch next, after `done` runs took `elapsed_s` of wall time
        (launched and finished): 0 when the warm-up is over, else at least the runs still missing
        from min_warmup, and enough to fill the rest of warmup_s at the rate seen so far."""
        if done >= self.min_warmup and elapsed_s >= self.warmup_s:
            return 0
        missing = max(self.min_warmup - done, 1)
        if done == 0 or elapsed_s <= 0:
            return missing
        left = math.ceil((self.warmup_s - elapsed_s) * done / elapsed_s)
        return min(MAX_WARMUP_BATCH, max(missing, left))


DEFAULT_PLAN = TimingPlan()
TARGET_ONLY_PLAN = TimingPlan(wanted_reps=1)   # the default until November 2026: target_s of runs, 20 at least


def plan_label(plan: TimingPlan) -> str:
    """What a plan times, in a few words: e.g. '≥ 50 ms, ≥ 500 runs or 1 s'."""
    label = f"≥ {plan.target_s * 1e3:g} ms"
    if plan.wanted_reps > plan.min_reps:
        label += f", ≥ {plan.wanted_reps} runs or {plan.window_s:g} s"
    return label + f", ≥ {plan.min_reps} runs"


def spread_table(rows: list[tuple[str, str, list[int], list[float]]], condition: str, caption: str) -> Table:
    """Consecutive timings of one kernel under different conditions: (who, the condition, the runs and the
    median in seconds of each timing) per row, with the spread of the medians (highest / lowest - 1)."""
    span = lambda values, fmt: (f"{min(values):{fmt}}–{max(values):{fmt}}" if min(values) != max(values)
                                else f"{values[0]:{fmt}}")
    body = [[who, how, span(runs, ",d"), span([m * 1e6 for m in medians], ",.2f" if max(medians) < 1e-4 else ",.0f"),
             100 * (max(medians) / min(medians) - 1)] for who, how, runs, medians in rows]
    return Table([Column("kernel"), Column(condition), Column("runs", align="right"),
                  Column("medians, µs", align="right"), Column("spread", ".1f", unit="%")], body,
                 caption=f"{caption}; spread: highest median / lowest − 1")


def windows_table(rows: list[tuple[str, TimingPlan, list[int], list[float]]], size: str) -> Table:
    """Consecutive timings of one launch under different plans: (who, plan, runs, medians) per row."""
    counts = sorted({len(medians) for *_, medians in rows})
    return spread_table([(who, plan_label(plan), runs, medians) for who, plan, runs, medians in rows],
                        "timing plan", f"{'/'.join(map(str, counts))} timings in a row at {size}")


# --- a size sweep: passes, and two runs compared ------------------------------------------------

SWEEP_PASSES = 4    # passes of tcgemm.engine.gpu.bench.size_sweep over all its shapes, each on fresh arrays; each
                    # shape keeps its fastest median: a small GEMM's time depends on where its arrays lie
                    # (tcgemm.engine.gpu.bench.placement_spread), and a pass may also meet the GPU in a slower state


def faster_pass(first: dict, second: dict) -> dict:
    """One shape of a size sweep measured in two passes (or the best of the passes so far, and one more):
    each side's higher TFLOP/s (kernel and cuBLAS separately; NaN where the kernel skipped the shape),
    passed only if both passes passed."""
    if (first["family"], first["label"]) != (second["family"], second["label"]):
        raise ValueError(f"passes of different shapes: {first['label']} and {second['label']}")
    return {**first, "passed": first["passed"] and second["passed"],
            "kernel_tflops": max(first["kernel_tflops"], second["kernel_tflops"]),
            "cublas_tflops": max(first["cublas_tflops"], second["cublas_tflops"])}


@dataclass(frozen=True)
class ShapeAgreement:
    """One shape of two sweeps: TFLOP/s of the kernel and of cuBLAS in each run."""
    family: str
    label: str
    kernel: tuple[float, float]
    cublas: tuple[float, float]

    @staticmethod
    def _ratio(pair: tuple[float, float]) -> float:
        first, second = pair
        return second / first if first > 0 and math.isfinite(first) and math.isfinite(second) else math.nan

    @property
    def kernel_ratio(self) -> float:
        """The second run's TFLOP/s over the first's (NaN where the kernel skipped the shape)."""
        return self._ratio(self.kernel)

    @property
    def cublas_ratio(self) -> float:
        return self._ratio(self.cublas)


@dataclass(frozen=True)
class SweepAgreement:
    """Two runs of tcgemm.engine.gpu.bench.size_sweep, shape by shape."""
    shapes: tuple[ShapeAgreement, ...]
    kernel: str = "Kernel"

    def deviations(self) -> list[tuple[float, str, str]]:
        """(|ratio - 1|, shape label, "kernel" or "cuBLAS") of every measured pair."""
        return [(abs(ratio - 1), s.label, who) for s in self.shapes
                for ratio, who in ((s.kernel_ratio, self.kernel), (s.cublas_ratio, "cuBLAS"))
                if not math.isnan(ratio)]

    @property
    def max_deviation(self) -> float:
        """The largest |second / first - 1| over all shapes, kernel and cuBLAS."""
        return max(d for d, _, _ in self.deviations())

    def within(self, tolerance: float = 0.05) -> bool:
        return self.max_deviation <= tolerance

    @property
    def table(self) -> Table:
        worst, label, who = max(self.deviations())
        rows = [[s.family, s.label.replace("x", "×"), s.kernel_ratio, s.cublas_ratio] for s in self.shapes]
        return Table([Column("Shapes"), Column("M×N×K", align="right"),
                      Column(f"{self.kernel}: run 2 / run 1", ".3f"), Column("cuBLAS: run 2 / run 1", ".3f")],
                     rows, notes=[f"TFLOP/s of the second sweep over the first, per shape; largest deviation "
                                  f"{100 * worst:.1f}% ({who} at {label.replace('x', '×')})"])


def sweep_agreement(first: list[dict], second: list[dict], kernel: str = "Kernel") -> SweepAgreement:
    """Compare two size sweeps of the same shapes (rows of tcgemm.engine.gpu.bench.size_sweep)."""
    if [(r["family"], r["label"]) for r in first] != [(r["family"], r["label"]) for r in second]:
        raise ValueError("the two sweeps ran different shapes; compare sweeps of the same shapes, in order")
    if not first:
        raise ValueError("the sweeps have no shapes")
    return SweepAgreement(tuple(
        ShapeAgreement(a["family"], a["label"], (a["kernel_tflops"], b["kernel_tflops"]),
                       (a["cublas_tflops"], b["cublas_tflops"]))
        for a, b in zip(first, second)), kernel)
