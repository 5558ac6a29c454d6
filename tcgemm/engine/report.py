"""Bench arithmetic and the results tables. Pure module: numbers in, tables and figures out."""
from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass

import numpy as np

from tcgemm.engine.catalog import configured
from tcgemm.engine.accuracy import Check
from tcgemm.hw import known_peaks, lower_bound_seconds, mma_count, tflops
from tcgemm.engine.plan import TILES, GpuShape, blocks_per_sm, estimate, plan
from tcgemm.table import Column, Table, Verdict


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
    key: str = ""           # the catalog key (or "cublas", "cublas-sgemm") it was run as

    @property
    def tflops(self) -> float:
        return tflops(self.M, self.N, self.K, self.timing.median)


BAR_LABEL_CHARS = 30    # bar_chart wraps kernel names longer than this


def size_label(M: int, N: int, K: int) -> str:
    """'4096³' for a cube, else '4096×512×1024'."""
    return f"{M}³" if M == N == K else f"{M}×{N}×{K}"


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


def bench_table(results: list[BenchResult], baseline: str | None = None, peak_tflops: float | None = None,
                ceiling_tflops: float | None = None, ceiling_name: str = "mma.sync",
                baseline_label: str = "baseline", caption: str = "", notes=()) -> Table:
    """The results as a Table: median time, its spread (half the interquartile range), TFLOP/s, and
    TFLOP/s as a share of the baseline's, of the datasheet peak and of the measured ceiling (each
    column only when that reference is given)."""
    rows = table_rows(results, baseline, peak_tflops, ceiling_tflops)
    shares = [(f"% {name}", field) for name, field, given in [
        (baseline_label, "pct_baseline", baseline is not None), ("peak", "pct_peak", peak_tflops is not None),
        (ceiling_name, "pct_ceiling", ceiling_tflops is not None)] if given]
    columns = [Column("Kernel"), Column("µs", ".0f"), Column("±", ".1f", unit="%"), Column("TFLOP/s", ".1f"),
               *(Column(name, ".1f") for name, _ in shares), Column("Check")]
    body = [[r["kernel"], r["time_us"], r["spread_pct"] / 2, r["tflops"], *(r[field] for _, field in shares),
             r["check"]] for r in rows]
    return Table(columns, body, caption, notes)


def peak_table(M: int, N: int, K: int) -> Table:
    """The datasheet peak of each GPU tcgemm knows, and the shortest time of an M x N x K GEMM at it."""
    rows = [[p.label, p.tflops, lower_bound_seconds(M, N, K, p.tflops) * 1e6, p.source] for p in known_peaks()]
    return Table([Column("GPU"), Column("Peak TFLOP/s", ".1f"), Column(f"Bound at {size_label(M, N, K)} (µs)", ".0f"),
                  Column("Source")], rows)


def checks_table(checks: list[tuple[str, tuple[int, int, int], Check]]) -> Table:
    """(kernel, (M, N, K), Check) triples as a table of checks: each check's errors beside its
    tolerances, and one note for them all. In HTML, one line sums the checks up (every FAIL named in
    it) above the table, which stays folded until opened (tcgemm.table)."""
    rows = [[name, "×".join(map(str, mnk)), c.rel_fro, c.tol_fro, c.rel_max, c.tol_max,
             Verdict.of(c, "PASS" if c.passed else f"FAIL: {c.reason}")] for name, mnk, c in checks]
    note = ("Check: PASS when the relative Frobenius error and the largest element error (relative to max "
            "|reference|) are at most their tolerances, set by the accumulator's precision and K "
            "(tcgemm.engine.accuracy.tolerance)")
    return Table([Column("Kernel"), Column("M×N×K", align="right"), Column("Rel. Frobenius error", ".2e"),
                  Column("Tolerance", ".0e"), Column("Max error / max |ref|", ".2e"), Column("Max tolerance", ".0e"),
                  Column("Check", verdict=True)], rows, notes=[note], collapse=True)


def bar_chart(results: list[BenchResult], peak_tflops: float | None = None, title: str | None = None):
    """Horizontal bars of TFLOP/s per kernel, with the datasheet peak as a dashed line. A Figure outside
    pyplot's state: a notebook shows it once, as the value of the cell."""
    from tcgemm.style import COLUMN_WIDTH_IN, new_figure

    names = [textwrap.fill(r.name, BAR_LABEL_CHARS) for r in results]   # long kernel names on 2-3 lines
    values = [r.tflops for r in results]
    lines = max(name.count("\n") + 1 for name in names)
    # As wide as the book's text column, so that it is shown unscaled.
    fig = new_figure(COLUMN_WIDTH_IN, (0.25 + 0.14 * lines) * len(results) + 1.3, layout="constrained")
    ax = fig.subplots()
    colors = ["#0072B2" if r.passed else "#D55E00" for r in results]
    bars = ax.barh(names, values, color=colors)
    ax.tick_params(axis="y", labelsize=9)
    ax.invert_yaxis()
    for bar, v in zip(bars, values):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {v:.1f}", va="center", fontsize=9)
    if peak_tflops:
        ax.axvline(peak_tflops, color="#444444", linestyle="--", linewidth=1)
        # Along the line, inside the axes, at the bottom: clear of the title and of the bar labels
        # (the fastest bars are not at the peak).
        ax.text(peak_tflops, 0.02, "datasheet peak ", transform=ax.get_xaxis_transform(), rotation=90,
                ha="right", va="bottom", fontsize=8, color="#444444")
    ax.set_xlabel("TFLOP/s (median of repeated runs)")
    if title:
        ax.set_title(title)
    ax.set_xlim(0, max(values + [peak_tflops or 0]) * 1.15)
    return fig


def _shape_tick(label: str) -> str:
    """A shape's tick label: "4096x4096x4096" as 4096³, "16384x128x4096" as 16384×128×4096."""
    sizes = label.split("x")
    return f"{sizes[0]}³" if len(sizes) == 3 and len(set(sizes)) == 1 else "×".join(sizes)


def sweep_figure(rows: list[dict], title: str | None = None):
    """TFLOP/s of a kernel and of cuBLAS per shape, one panel per family of shapes.
    rows: dicts with 'family', 'label', 'kernel_tflops', 'cublas_tflops' (in plotting order)."""
    from tcgemm.style import COLUMN_WIDTH_IN, new_figure

    families = list(dict.fromkeys(r["family"] for r in rows))
    # As wide as the book's text column, each panel as wide as its shapes need.
    fig = new_figure(COLUMN_WIDTH_IN, 3.6, layout="constrained")
    axes = fig.subplots(1, len(families), squeeze=False,
                        width_ratios=[sum(r["family"] == f for r in rows) + 1 for f in families])[0]
    for ax, family in zip(axes, families):
        sel = [r for r in rows if r["family"] == family]
        x = range(len(sel))
        ax.plot(x, [r["cublas_tflops"] for r in sel], "s--", color="#0072B2", label="cuBLAS")
        ax.plot(x, [r["kernel_tflops"] for r in sel], "o-", color="#D55E00", label="this book's kernel")
        ax.set_xticks(list(x), [_shape_tick(r["label"]) for r in sel], rotation=45, ha="right",
                      rotation_mode="anchor", fontsize=8)
        ax.set_title(family, fontsize=9)
        ax.set_ylabel("TFLOP/s")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


# The pipelines chapter's size sweep: square sizes, tall-skinny problems, and a small M (a batch of
# tokens against a weight matrix), as tcgemm.engine.gpu.bench.size_sweep takes them.
SWEEP_SHAPES: dict[str, list[tuple[int, int, int]]] = {
    "square": [(s, s, s) for s in (512, 1024, 2048, 3000, 4096, 6144, 8192)],
    "tall-skinny": [(16384, 128, 4096), (16384, 256, 1024), (32768, 64, 2048), (8192, 520, 8192)],
    "small M": [(1, 4096, 4096), (16, 4096, 4096), (77, 8192, 4096), (256, 12288, 4096)],
}


@dataclass(frozen=True)
class SweepSummary:
    """A size sweep in two numbers: the geometric mean of the kernel's % of cuBLAS over the shapes
    it ran, and its lowest % (with that shape's label)."""
    geomean: float
    lowest: float
    lowest_label: str
    shapes: int

    def __str__(self) -> str:
        return (f"geometric mean over {self.shapes} shapes: {self.geomean:.1f}% of cuBLAS; lowest "
                f"{self.lowest:.1f}% at {self.lowest_label.replace('x', '×')}")


def _sweep_percents(rows: list[dict]) -> list[tuple[float, str]]:
    """(% of cuBLAS, label) of each shape of a sweep that the kernel ran."""
    return [(100.0 * r["kernel_tflops"] / r["cublas_tflops"], r["label"]) for r in rows
            if math.isfinite(r["kernel_tflops"]) and r["cublas_tflops"] > 0]


def sweep_summary(rows: list[dict]) -> SweepSummary:
    """Geometric mean and minimum of the kernel's % of cuBLAS over tcgemm.engine.gpu.bench.size_sweep's rows
    (skipped shapes left out). The geometric mean is the mean for ratios: 50% and 200% average to 100%."""
    percents = _sweep_percents(rows)
    if not percents:
        raise ValueError("the sweep has no shape the kernel ran")
    lowest, label = min(percents)
    geomean = math.exp(sum(math.log(p) for p, _ in percents) / len(percents))
    return SweepSummary(geomean, lowest, label, len(percents))


def sweep_table(rows: list[dict], kernel: str = "Kernel") -> Table:
    """tcgemm.engine.gpu.bench.size_sweep's rows as a Table: both rates per shape, the kernel's as % of cuBLAS,
    and (in a note) their geometric mean and lowest value."""
    body = [[r["family"], r["label"].replace("x", "×"), r["kernel_tflops"], r["cublas_tflops"],
             percent(r["kernel_tflops"], r["cublas_tflops"]),
             "skipped" if r["skipped"] else "PASS" if r["passed"] else "FAIL"] for r in rows]
    notes = [f"{kernel}: {sweep_summary(rows)}"] if _sweep_percents(rows) else []
    return Table([Column("Shapes"), Column("M×N×K", align="right"), Column(f"{kernel} TFLOP/s", ".1f"),
                  Column("cuBLAS TFLOP/s", ".1f"), Column("% cuBLAS", ".1f"), Column("Check")], body, notes=notes)


def sweep_comparison_table(sweeps: dict[str, list[dict]]) -> Table:
    """Several kernels' size sweeps over the same shapes ({kernel name: size_sweep rows}), side by side
    as % of cuBLAS (each against the cuBLAS time of its own sweep); each one's summary in a note."""
    names = list(sweeps)
    shapes = [[(r["family"], r["label"]) for r in rows] for rows in sweeps.values()]
    if not names or any(s != shapes[0] for s in shapes):
        raise ValueError("compare sweeps of the same shapes, in the same order")
    body = [[family, label.replace("x", "×"),
             *(percent(sweeps[n][i]["kernel_tflops"], sweeps[n][i]["cublas_tflops"]) for n in names)]
            for i, (family, label) in enumerate(shapes[0])]
    columns = [Column("Shapes"), Column("M×N×K", align="right"), *(Column(f"{n}: % cuBLAS", ".1f") for n in names)]
    return Table(columns, body, notes=[f"{n}: {sweep_summary(sweeps[n])}" for n in names])


def tiles_table(gpu: GpuShape) -> Table:
    """Kernel 4.6's tile configurations (tcgemm.engine.plan.TILES) and how many blocks of each fit an SM of `gpu`."""
    rows = [[t.name, f"{t.warps_m}×{t.warps_n}", t.bk, t.stages, t.threads, t.smem_bytes / 1024, t.regs,
             blocks_per_sm(t, gpu), 100 * t.efficiency] for t in TILES]
    return Table([Column("Tile"), Column("Warps"), Column("BK"), Column("Stages"), Column("Threads"),
                  Column("Shared KB", ".0f"), Column("Registers"), Column("Blocks per SM"),
                  Column("% of ceiling", ".0f")], rows,
                 caption=f"Kernel 4.6's tile configurations on {gpu.name}",
                 notes=["% of ceiling: the rate of the tile with every SM busy, as a share of the mma.sync "
                        "ceiling, fitted to H100 measurements (tcgemm.engine.plan)"])


def plans_table(shapes, gpu: GpuShape) -> Table:
    """tcgemm.engine.plan.plan for each (M, N, K) on `gpu`: the tile and split chosen, its blocks, waves and
    modelled time; and the waves and modelled time of the largest tile alone (Kernel 4.5's), unsplit."""
    rows = []
    for M, N, K in shapes:
        chosen = plan(M, N, K, gpu).choice
        alone = estimate(TILES[0], 1, M, N, K, gpu)
        rows.append([size_label(M, N, K), chosen.tile.name, chosen.splits, chosen.tiles * chosen.splits,
                     chosen.waves, chosen.bound, chosen.seconds * 1e6,
                     *((alone.waves, alone.seconds * 1e6) if alone else (None, None))])
    return Table([Column("M×N×K", align="right"), Column("Tile"), Column("Splits"), Column("Blocks"),
                  Column("Waves", ".2f"), Column("Bound"), Column("Model µs", ".1f"),
                  Column(f"{TILES[0].name} only: waves", ".2f"), Column(f"{TILES[0].name} only: µs", ".1f")], rows,
                 caption=f"Kernel 4.6's plans on {gpu.name}, by tcgemm.engine.plan's model (not measured)")


def prediction_table(comparisons, caption: str = "") -> Table:
    """tcgemm.smem.gpu.predictions.predicted_vs_measured's rows as a Table; metrics this GPU lacks (NaN) in a note."""
    rows = [[c.metric, c.predicted, c.measured, c.measured - c.predicted]
            for c in comparisons if not math.isnan(c.measured)]
    missing = [c.metric for c in comparisons if math.isnan(c.measured)]
    return Table([Column("ncu metric"), Column("Predicted", ","), Column("Measured", ",.0f"),
                  Column("Excess", "+,.0f")], rows, caption,
                 [f"Not available on this GPU: {', '.join(missing)}"] if missing else ())


def occupancy_table(compiled) -> Table:
    """tcgemm.pipelines.gpu.occupancy.compiled_occupancy results as a Table: each kernel's resources, the blocks
    per SM the model allows (and what limits them), and the driver's own count."""
    rows = [[c.spec.title, c.spec.variant, c.model.threads_per_block, c.registers,
             c.model.smem_per_block / 1024, c.model.blocks_per_sm, c.model.warps_per_sm, c.model.limiter,
             c.driver_blocks_per_sm] for c in compiled]
    return Table([Column("Kernel"), Column("Config"), Column("Threads"), Column("Registers"),
                  Column("Shared KB", ".1f"), Column("Blocks per SM"), Column("Warps per SM"),
                  Column("Limited by"), Column("Driver: blocks per SM")], rows,
                 notes=[f"Model: tcgemm.pipelines.occupancy for {compiled[0].model.arch}; driver: "
                        "cuOccupancyMaxActiveBlocksPerMultiprocessor"] if compiled else ())


def stall_table(by_opcode: dict[str, dict[str, int]], top: int = 6) -> Table:
    """tcgemm.engine.gpu.ncu.stall_samples as a Table: the opcodes holding most warp samples, each with its
    share of all samples and its three largest reasons (also as shares of all samples)."""
    total = sum(sum(reasons.values()) for reasons in by_opcode.values())
    rows = []
    for op, reasons in sorted(by_opcode.items(), key=lambda kv: -sum(kv[1].values()))[:top] if total else []:
        main = sorted(reasons.items(), key=lambda kv: -kv[1])[:3]
        rows.append([op, 100 * sum(reasons.values()) / total,
                     ", ".join(f"{r} {100 * n / total:.1f}%" for r, n in main)])
    return Table([Column("Opcode"), Column("% of samples", ".1f"), Column("Largest reasons (% of samples)")],
                 rows, notes=() if total else ("no samples",))
