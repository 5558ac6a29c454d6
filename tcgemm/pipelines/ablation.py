"""The ablation of the book's fastest mma.sync kernel: Kernel 4.4 with each step of the earlier chapters
switched off alone (kernels/a1_ablation.cu, catalog key "a1"), ranked by what switching it off costs.
Pure module: tcgemm.pipelines.gpu.ablation checks and times the variants; this turns the measurements into a
ranked table and a bar chart."""
from __future__ import annotations

from dataclasses import dataclass

from tcgemm.engine.catalog import ABLATION_SWITCHES, GEMM_KERNELS
from tcgemm.hw import tflops
from tcgemm.engine.report import Timing
from tcgemm.table import Column, Table

KEY = "a1"


@dataclass(frozen=True)
class Step:
    """One optimisation of the earlier chapters, and the switch of the ablation kernel that undoes it."""
    switch: str
    step: str           # the optimisation, as the table names it
    introduced: str     # the kernel that brought it, and where the book measured it


STEPS = (
    Step("NO_XOR", "XOR-permuted shared-memory tiles", "Kernel 2.0 (bank conflicts)"),
    Step("COPY_4B", "16-byte copies", "Kernel 2.0 (bank conflicts)"),
    Step("NO_CP_ASYNC", "cp.async copies", "Kernel 3.0 (pipelines)"),
    Step("SMALL_WARP_TILE", "64 x 64 warp tiles", "Kernel 4.0 (pipelines)"),
    Step("NO_REG_DB", "fragments double-buffered in registers", "Kernel 4.1 (pipelines)"),
    Step("NO_L2_ORDER", "L2-friendly block order", "Kernel 4.2 (pipelines)"),
    Step("NO_VEC_STORE", "float2 stores of C", "Kernel 2.0 (bank conflicts)"),
)
STEP_OF = {s.switch: s for s in STEPS}
ABLATED = tuple(s.switch for s in STEPS)
ALL_ON = "none: Kernel 4.4"


@dataclass(frozen=True)
class Measurement:
    """One variant of the ablation kernel at M x N x K: the switch set to 1 (None: every step on), its check on
    fresh random inputs before it was timed, its timing, and the registers and local memory (spilled
    registers) per thread of the compiled kernel."""
    switch: str | None
    M: int
    N: int
    K: int
    passed: bool
    check: str
    timing: Timing
    registers: int
    local_bytes: int

    @property
    def tflops(self) -> float:
        return tflops(self.M, self.N, self.K, self.timing.median)


@dataclass(frozen=True)
class Ranked:
    rank: int
    step: Step
    measurement: Measurement
    slowdown: float      # time with the step off / time with every step on


def _validated(measurements) -> tuple[Measurement, list[Measurement]]:
    """The all-on measurement and the others; refuses a failed check, an unknown or repeated switch,
    and a mix of sizes."""
    measurements = list(measurements)
    failed = [m.switch or ALL_ON for m in measurements if not m.passed]
    if failed:
        raise ValueError(f"variants that failed their check cannot be ranked: {', '.join(failed)}")
    unknown = [m.switch for m in measurements if m.switch is not None and m.switch not in STEP_OF]
    if unknown:
        raise ValueError(f"unknown switch {unknown[0]!r}; the ablated switches are {', '.join(ABLATED)}")
    switches = [m.switch for m in measurements]
    repeated = sorted({s or ALL_ON for s in switches if switches.count(s) > 1})
    if repeated:
        raise ValueError(f"one measurement per variant, got several of {', '.join(repeated)}")
    if None not in switches:
        raise ValueError("no measurement with every step on (switch None): nothing to compare with")
    sizes = {(m.M, m.N, m.K) for m in measurements}
    if len(sizes) > 1:
        raise ValueError(f"measurements of different sizes cannot be compared: {sorted(sizes)}")
    base = measurements[switches.index(None)]
    return base, [m for m in measurements if m.switch is not None]


def ranked(measurements) -> list[Ranked]:
    """The variants with one step off, costliest first (rank 1), by their time over the all-on one's."""
    base, others = _validated(measurements)
    slowdowns = sorted(((m.timing.median / base.timing.median, m) for m in others),
                       key=lambda pair: (-pair[0], ABLATED.index(pair[1].switch)))
    return [Ranked(i, STEP_OF[m.switch], m, s) for i, (s, m) in enumerate(slowdowns, 1)]


def switches_table() -> Table:
    """The ablation kernel's switches: the step each undoes, where the book introduced it, and what
    setting it to 1 does (tcgemm.engine.catalog)."""
    rows = [[name, STEP_OF[name].step if name in STEP_OF else "none: the numerics chapter's remedy",
             STEP_OF[name].introduced if name in STEP_OF else "", does]
            for name, does in ABLATION_SWITCHES]
    return Table(["Switch", "Step it undoes", "Introduced in", "Setting it to 1"], rows,
                 caption=f"{GEMM_KERNELS[KEY].title}: kernels/{GEMM_KERNELS[KEY].source}")


def ablation_table(measurements, device: str = "") -> Table:
    """Kernel 4.4, then each step switched off alone, costliest first."""
    base, _ = _validated(measurements)
    def cells(m: Measurement) -> list:
        return [m.timing.median * 1e6, m.timing.median / base.timing.median, m.registers, m.local_bytes]

    rows = [["", "none (Kernel 4.4 as it is)", "", "", *cells(base)]]
    rows += [[r.rank, r.step.step, r.step.switch, r.step.introduced, *cells(r.measurement)]
             for r in ranked(measurements)]
    where = f"{device}, " if device else ""
    return Table(["Rank", "Step switched off", "Switch", "Introduced in", Column("µs", ".0f"),
                  Column("Time / all on", ".2f", unit="×"), "Registers", "Spilled bytes"], rows,
                 caption=f"{where}{GEMM_KERNELS[KEY].title}, C = A @ B at {size_text(base)}",
                 notes=("µs: median of repeated runs after a warm-up, L2 flushed before each run. Every "
                        "variant passed its check on fresh random inputs before it was timed (a failed check "
                        "stops the table). Registers and spilled bytes (local memory): per thread, as the "
                        "driver reports them for the loaded kernel",))


def size_text(m: Measurement) -> str:
    return f"{m.M}³" if m.M == m.N == m.K else f"{m.M}×{m.N}×{m.K}"


def ablation_figure(measurements, title: str | None = None):
    """Horizontal bars: each step's time switched off, over the time with every step on, costliest on
    top, with a line at 1 (no cost). A Figure outside pyplot's state."""
    from tcgemm.style import COLUMN_WIDTH_IN, new_figure

    rows = ranked(measurements)
    labels = [f"{r.step.step}\n({r.step.switch})" for r in rows]
    values = [r.slowdown for r in rows]
    fig = new_figure(COLUMN_WIDTH_IN, 0.45 * len(rows) + 1.2, layout="constrained")
    ax = fig.subplots()
    bars = ax.barh(labels, [v - 1 for v in values], left=1, color="#0072B2")   # from 1x: no cost
    ax.invert_yaxis()
    ax.tick_params(axis="y", labelsize=9)
    for bar, value in zip(bars, values):
        ax.text(max(value, 1), bar.get_y() + bar.get_height() / 2, f" {value:.2f}×", va="center", fontsize=9)
    ax.axvline(1.0, color="#444444", linestyle="--", linewidth=1)
    ax.set_xlim(min(0.95, min(values) - 0.05), max(values) + 0.15 * (max(values) - 0.9))
    ax.set_xlabel("time with the step switched off / time with every step on")
    if title:
        ax.set_title(title, fontsize=10)
    return fig


def knockout_table(kernel: str, scaling: dict, Ks, K: int = 4096) -> Table:
    """Kernel 4.4's time against K as written and with measurement switches on (the dict of
    tcgemm.pipelines.gpu.scaling.switch_scaling: label -> (seconds at each of Ks, its tcgemm.pipelines.scaling fit)):
    the main loop's rate, the time outside it, that time's share at K, and the times the fit went through.
    The pipelines chapter's table without its ceiling column, for the predictions of this page."""
    rows = [[label, fit.loop_tflops, fit.fixed_us, 100 * fit.share_fixed(K), ", ".join(f"{t * 1e6:.0f}" for t in times)]
            for label, (times, fit) in scaling.items()]
    return Table([kernel, Column("Main loop TFLOP/s", ".1f"), Column("Outside the loop (µs)", ".1f"),
                  Column(f"% of the time at K = {K}", ".1f"),
                  Column(f"µs at K = {', '.join(f'{k // 1024}k' for k in Ks)}", align="right")], rows)
