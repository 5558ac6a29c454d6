"""What a GPU does while one kernel runs back to back for a while: how long each launch takes once the
clock has settled, and what NVML (the driver's management library) says beside it: the SM clock,
the board's power and power limit, and the reasons it gives for holding the clock down. Pure: the
sampling is tcgemm.hopper.gpu.power's."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcgemm.style import COLUMN_WIDTH_IN, GROUP_HUES, MUTED_TEXT, new_figure
from tcgemm.table import Column, Table

# NVML's clock event reasons (nvmlClocksEventReasons), one bit each
REASONS = {0x1: "idle", 0x2: "applications clocks setting", 0x4: "power cap", 0x8: "hardware slowdown",
           0x10: "sync boost", 0x20: "thermal slowdown (software)", 0x40: "thermal slowdown (hardware)",
           0x80: "power brake (hardware)", 0x100: "display clock setting"}
POWER_CAP = 0x4
SLOWDOWN = 0x8 | 0x20 | 0x40 | 0x80   # heat or the board's own protection: not a GPU's usual state
SLOWDOWN_WARNING = 0.1                # a run with more of its samples slowed than this is flagged


def reason_names(mask: int) -> tuple[str, ...]:
    """The names of the reasons set in an NVML clock event reasons mask."""
    if mask < 0:
        raise ValueError(f"a reasons mask is a non-negative integer, got {mask}")
    return tuple(name for bit, name in REASONS.items() if mask & bit)


@dataclass(frozen=True)
class Sample:
    """One NVML reading, `t_s` seconds after the series' first launch was queued."""
    t_s: float
    sm_mhz: float
    power_w: float | None
    temp_c: float | None
    reasons: int


@dataclass(frozen=True)
class Sustained:
    """A kernel run back to back: each launch's GPU time and when it ended (seconds since the first
    began), and the NVML samples read meanwhile. Only what comes after `settle_s` counts."""
    label: str
    launch_s: np.ndarray
    end_s: np.ndarray
    samples: tuple[Sample, ...]
    settle_s: float
    limit_w: float | None = None
    flop: float | None = None            # per launch, for TFLOP/s
    flushed: bool = True                 # an L2 flush before each launch (as the bench times)

    def __post_init__(self):
        launch_s, end_s = np.asarray(self.launch_s, float), np.asarray(self.end_s, float)
        if launch_s.ndim != 1 or launch_s.shape != end_s.shape or not len(launch_s):
            raise ValueError(f"{self.label}: launch times and end times must be equal-length, non-empty 1-D "
                             f"arrays, got shapes {launch_s.shape} and {end_s.shape}")
        if (launch_s <= 0).any() or (np.diff(end_s) < 0).any():
            raise ValueError(f"{self.label}: launch times must be positive and end times must not go back")
        if self.settle_s < 0:
            raise ValueError(f"{self.label}: settle_s must be >= 0, got {self.settle_s}")
        if not (end_s - launch_s >= self.settle_s).any():
            raise ValueError(f"{self.label}: no launch started after the first {self.settle_s} s "
                             f"(the series lasted {end_s[-1]:.3f} s): run it longer")
        object.__setattr__(self, "launch_s", launch_s)
        object.__setattr__(self, "end_s", end_s)

    def settled_launches(self) -> np.ndarray:
        """The GPU times of the launches that began after settle_s."""
        return self.launch_s[self.end_s - self.launch_s >= self.settle_s]

    @property
    def seconds(self) -> float:
        return float(self.end_s[-1])

    def settled_samples(self) -> list[Sample]:
        return [s for s in self.samples if self.settle_s <= s.t_s <= self.seconds]

    def time_us(self) -> float:
        """Median GPU time of the launches that began after settle_s."""
        return float(np.median(self.settled_launches())) * 1e6

    def tflops(self) -> float | None:
        return None if self.flop is None else self.flop / (self.time_us() * 1e-6) / 1e12

    def _median(self, name: str) -> float | None:
        values = [getattr(s, name) for s in self.settled_samples() if getattr(s, name) is not None]
        return float(np.median(values)) if values else None

    def clock_mhz(self) -> float | None:
        return self._median("sm_mhz")

    def power_w(self) -> float | None:
        return self._median("power_w")

    def share(self, bits: int) -> float | None:
        """The share of the settled samples with any of `bits` among their clock event reasons."""
        samples = self.settled_samples()
        return sum(bool(s.reasons & bits) for s in samples) / len(samples) if samples else None

    def slowed(self) -> bool:
        """Held down by heat or the board's protection in more than SLOWDOWN_WARNING of its samples."""
        return (self.share(SLOWDOWN) or 0) > SLOWDOWN_WARNING


def sustained_table(runs: list[Sustained], reference: str | None = None, caption: str = "") -> Table:
    """A row per run: settled time, TFLOP/s, % of the `reference` run's speed (by label), and NVML's
    clock, power, power limit and the shares of samples at the power cap and slowed down."""
    labels = [r.label for r in runs]
    if reference is not None and reference not in labels:
        raise ValueError(f"reference {reference!r} is not one of the runs: {labels}")
    ref = runs[labels.index(reference)] if reference is not None else None
    pct = lambda v: None if v is None else 100 * v
    rows = [(r.label, r.time_us(), r.tflops(),
             None if ref is None or r.flop is None or ref.flop is None or r.flop != ref.flop
             else 100 * ref.time_us() / r.time_us(),
             r.clock_mhz(), r.power_w(), r.limit_w, pct(r.share(POWER_CAP)), pct(r.share(SLOWDOWN)))
            for r in runs]
    columns = [Column("kernel", align="left"), Column("µs per launch", ".1f"), Column("TFLOP/s", ".0f"),
               Column(f"% of {reference}" if reference else "% of reference", ".1f"),
               Column("SM clock as NVML reports it, MHz", ".0f"), Column("board power, W", ".0f"), Column("power limit, W", ".0f"),
               Column("samples at the power cap, %", ".0f"), Column("samples slowed by heat or the board, %", ".0f")]
    settle = sorted({r.settle_s for r in runs})
    seconds = sorted({round(r.seconds, 1) for r in runs})
    flushed, plain = [r.label for r in runs if r.flushed], [r.label for r in runs if not r.flushed]
    how = ("each launch after an L2 flush, as the bench times" if not plain else "without an L2 flush" if not flushed
           else f"each launch of {', '.join(flushed)} after an L2 flush, as the bench times; {', '.join(plain)} without")
    span = f"{seconds[0]:g}" if len(seconds) == 1 else f"{seconds[0]:g}-{seconds[-1]:g}"
    notes = [f"Each kernel ran back to back for {span} s ({how}); times are medians of the launches that began after the first {'/'.join(f'{s:g}' for s in settle)} s, "
             "clock and power the medians of NVML's readings over the same part (the clock NVML reports is "
             "the SM clock at the moment it reads it)."]
    slowed = [r.label for r in runs if r.slowed()]
    if slowed:
        notes.append(f"Warning: {', '.join(slowed)} ran slowed by heat or the board's protection in more than "
                     f"{SLOWDOWN_WARNING:.0%} of the samples: these times are not this GPU's usual ones.")
    return Table(columns, rows, caption=caption, notes=notes)


def sustained_figure(runs: list[Sustained], title: str = ""):
    """The SM clock and the board's power NVML read during each run, against seconds since the run
    began, the power limit dashed; the part before settling (not counted) shaded."""
    fig = new_figure(COLUMN_WIDTH_IN, 3.6, layout="constrained")
    clock_ax, power_ax = fig.subplots(2, 1, sharex=True)
    for i, r in enumerate(runs):
        t = [s.t_s for s in r.samples if s.t_s <= r.seconds]
        style = dict(color=GROUP_HUES[i % len(GROUP_HUES)], lw=1.2, label=r.label)
        clock_ax.plot(t, [s.sm_mhz for s in r.samples if s.t_s <= r.seconds], **style)
        power_ax.plot(t, [s.power_w for s in r.samples if s.t_s <= r.seconds], **style)
    limits = {r.limit_w for r in runs if r.limit_w}
    for limit in limits:
        power_ax.axhline(limit, color=MUTED_TEXT, lw=1, ls="--")
        power_ax.annotate(f"power limit {limit:.0f} W", (0, limit), xytext=(2, 2), textcoords="offset points",
                          fontsize=7, color="black", va="bottom")
    settle = max(r.settle_s for r in runs)
    for ax, label in ((clock_ax, "SM clock, MHz"), (power_ax, "board power, W")):
        ax.axvspan(0, settle, color=MUTED_TEXT, alpha=0.15, lw=0)
        ax.set_ylabel(label, fontsize=8)
        ax.tick_params(labelsize=7)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    power_ax.set_ylim(0, max(limits | {max((s.power_w or 0) for r in runs for s in r.samples)}) * 1.15)
    power_ax.set_xlim(0, max(r.seconds for r in runs))
    power_ax.set_xlabel("seconds since the kernel's first launch (shaded: before the clock settles, not counted)",
                        fontsize=8)
    power_ax.legend(fontsize=7, ncol=min(len(runs), 3), loc="lower right", frameon=False)
    clock_ax.set_title(title or "Each kernel back to back, as NVML reads the GPU", fontsize=8, loc="left")
    return fig
