"""Bench arithmetic and the results table. Pure module: numbers in, text and figures out."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tcgemm.hw import tflops


@dataclass(frozen=True)
class Timing:
    """Summary of repeated timings of one kernel, in seconds."""
    median: float
    q1: float
    q3: float
    minimum: float
    maximum: float
    runs: int

    @property
    def spread(self) -> float:
        """Interquartile range relative to the median."""
        return (self.q3 - self.q1) / self.median


def summarize(seconds) -> Timing:
    t = np.asarray(seconds, dtype=np.float64)
    if t.ndim != 1 or t.size == 0:
        raise ValueError("need a non-empty 1-D sequence of times")
    if not np.all(np.isfinite(t)) or np.any(t <= 0):
        raise ValueError("times must be finite and positive")
    q1, med, q3 = np.percentile(t, [25, 50, 75])
    return Timing(float(med), float(q1), float(q3), float(t.min()), float(t.max()), int(t.size))


@dataclass(frozen=True)
class BenchResult:
    name: str
    M: int
    N: int
    K: int
    timing: Timing
    passed: bool
    check: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def tflops(self) -> float:
        return tflops(self.M, self.N, self.K, self.timing.median)


def percent(part: float, whole: float | None) -> float | None:
    if whole is None or whole <= 0:
        return None
    return 100.0 * part / whole


def table_rows(results: list[BenchResult], baseline: str | None, peak_tflops: float | None,
               ceiling_tflops: float | None = None) -> list[dict]:
    """One dict per kernel: time (us), TFLOP/s, % of the baseline's TFLOP/s, % of the datasheet peak,
    % of the measured mma.sync ceiling."""
    base = next((r for r in results if r.name == baseline), None)
    rows = []
    for r in results:
        rows.append({
            "kernel": r.name,
            "time_us": r.timing.median * 1e6,
            "spread_pct": 100.0 * r.timing.spread,
            "tflops": r.tflops,
            "pct_baseline": percent(r.tflops, base.tflops) if base else None,
            "pct_peak": percent(r.tflops, peak_tflops),
            "pct_ceiling": percent(r.tflops, ceiling_tflops),
            "check": "PASS" if r.passed else "FAIL",
        })
    return rows


def _fmt_pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1f}%"


def format_table(results: list[BenchResult], baseline: str | None = "cuBLAS",
                 peak_tflops: float | None = None, ceiling_tflops: float | None = None,
                 ceiling_name: str = "mma.sync") -> str:
    """The results as a text table; the "% <ceiling_name>" column appears when a ceiling is given."""
    rows = table_rows(results, baseline, peak_tflops, ceiling_tflops)
    with_ceiling = ceiling_tflops is not None
    header = ["Kernel", "Time (us)", "IQR", "TFLOP/s", f"% {baseline or 'baseline'}", "% peak",
              *([f"% {ceiling_name}"] if with_ceiling else []), "Check"]
    body = [[r["kernel"], f"{r['time_us']:.0f}", f"±{r['spread_pct'] / 2:.1f}%", f"{r['tflops']:.1f}",
             _fmt_pct(r["pct_baseline"]), _fmt_pct(r["pct_peak"]),
             *([_fmt_pct(r["pct_ceiling"])] if with_ceiling else []), r["check"]] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(b) for b in body)])


def bar_chart(results: list[BenchResult], peak_tflops: float | None = None, title: str | None = None):
    """Horizontal bars of TFLOP/s per kernel, with the datasheet peak as a dashed line."""
    import matplotlib.pyplot as plt

    names = [r.name for r in results]
    values = [r.tflops for r in results]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(results) + 1.2))
    colors = ["#0072B2" if r.passed else "#D55E00" for r in results]
    bars = ax.barh(names, values, color=colors)
    ax.invert_yaxis()
    for bar, v in zip(bars, values):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {v:.1f}", va="center", fontsize=9)
    if peak_tflops:
        ax.axvline(peak_tflops, color="#444444", linestyle="--", linewidth=1)
        ax.text(peak_tflops, -0.6, " datasheet peak", fontsize=8, color="#444444", va="bottom")
    ax.set_xlabel("TFLOP/s (median of repeated runs)")
    if title:
        ax.set_title(title)
    ax.set_xlim(0, max(values + [peak_tflops or 0]) * 1.15)
    fig.tight_layout()
    return fig


def sweep_figure(rows: list[dict], title: str | None = None):
    """TFLOP/s of a kernel and of cuBLAS per shape, one panel per family of shapes.
    rows: dicts with 'family', 'label', 'kernel_tflops', 'cublas_tflops' (in plotting order)."""
    from matplotlib.figure import Figure

    families = list(dict.fromkeys(r["family"] for r in rows))
    fig = Figure(figsize=(4.2 * len(families), 3.6), layout="constrained")
    axes = fig.subplots(1, len(families), squeeze=False)[0]
    for ax, family in zip(axes, families):
        sel = [r for r in rows if r["family"] == family]
        x = range(len(sel))
        ax.plot(x, [r["cublas_tflops"] for r in sel], "s--", color="#0072B2", label="cuBLAS")
        ax.plot(x, [r["kernel_tflops"] for r in sel], "o-", color="#D55E00", label="this book's kernel")
        ax.set_xticks(list(x), [r["label"] for r in sel], rotation=45, ha="right", fontsize=7)
        ax.set_title(family, fontsize=9)
        ax.set_ylabel("TFLOP/s")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def format_stall_samples(by_opcode: dict[str, dict[str, int]], top: int = 6) -> str:
    """tcgemm.gpu.ncu.stall_samples as text: the opcodes holding most warp samples, each with its
    share of all samples and its three largest reasons (also as shares of all samples)."""
    total = sum(sum(reasons.values()) for reasons in by_opcode.values())
    if not total:
        return "no samples"
    lines = []
    for op, reasons in sorted(by_opcode.items(), key=lambda kv: -sum(kv[1].values()))[:top]:
        main = sorted(reasons.items(), key=lambda kv: -kv[1])[:3]
        lines.append(f"{op:<8} {100 * sum(reasons.values()) / total:5.1f}% of samples   ("
                     + ", ".join(f"{r} {100 * n / total:.1f}%" for r, n in main) + ")")
    return "\n".join(lines)
