"""The matmul sweep's shapes, its summary and its table: tcgemm.matmul against cuBLAS of the same types
over shapes readers multiply (tcgemm.engine.gpu.sweep measures them). Pure module."""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path

from tcgemm.engine.kernel_types import DTYPE_NAMES
from tcgemm.table import Column, Table

SQUARES = (512, 1024, 2048, 3072, 4096, 6144, 8192)
ODD_SQUARES = (1000, 3000)
# Transformer layers: M tokens against N x K weights (4096 hidden, 14336 the MLP's width).
LLM_M = (1, 16, 64, 128, 256, 4096)
LLM_NK = ((4096, 4096), (14336, 4096), (4096, 14336))
OTHERS = ((8192, 520, 8192), (4096, 4096, 512))
SHAPES = tuple(dict.fromkeys(tuple((n, n, n) for n in SQUARES + ODD_SQUARES) +
                             tuple((m, n, k) for m in LLM_M for n, k in LLM_NK) + OTHERS))   # 4096³ once
# (input dtype, output dtype) of each sweep.
TYPES = (("float16", "float16"), ("bfloat16", "bfloat16"), ("float16", "float32"))
SCHEMA = "tcgemm-sweep/1"
# The project's targets for tcgemm.matmul (issue "tcgemm.matmul as a library"): per pair of types, the
# geometric mean and the lowest % of cuBLAS's speed, and the whole call against the library's for 16-bit C.
TARGETS = {"gmean_pct_cublas": 95.0, "min_pct_cublas": 75.0, "gmean_pct_call": 90.0}


@dataclass(frozen=True)
class SweepRow:
    M: int
    N: int
    K: int
    in_dtype: str
    out_dtype: str
    kernel: str              # what tcgemm.matmul ran (tcgemm.engine.dispatch)
    gpu_us: float            # tcgemm.matmul's GPU time (CUDA events, L2 flushed)
    cublas_us: float         # cuBLAS's, same types and operands
    call_us: float           # tcgemm.matmul's whole call, host included (back-to-back calls)
    library_call_us: float | None   # the array library's own A @ B, whole call (None where it has none)
    check: str               # PASS / FAIL against the fp64 product

    @property
    def types(self) -> str:
        return f"{DTYPE_NAMES[self.in_dtype]} → {DTYPE_NAMES[self.out_dtype]}"

    @property
    def pct_cublas(self) -> float:
        return 100 * self.cublas_us / self.gpu_us

    @property
    def pct_call(self) -> float | None:
        return None if self.library_call_us is None else 100 * self.library_call_us / self.call_us


def geometric_mean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def summary(rows: list[SweepRow]) -> dict[str, dict[str, float]]:
    """Per type: the geometric mean and the minimum of % of cuBLAS (GPU time) and of % of the library's
    call (whole call, where measured)."""
    out = {}
    for types in dict.fromkeys(r.types for r in rows):
        mine = [r for r in rows if r.types == types]
        calls = [r.pct_call for r in mine if r.pct_call is not None]
        out[types] = {"gmean_pct_cublas": geometric_mean(r.pct_cublas for r in mine),
                      "min_pct_cublas": min(r.pct_cublas for r in mine),
                      "gmean_pct_call": geometric_mean(calls) if calls else None,
                      "min_pct_call": min(calls) if calls else None}
    return out


def sweep_table(rows: list[SweepRow], device: str, library: str = "cupy.matmul / torch.matmul") -> Table:
    body = [[r.types, f"{r.M}×{r.N}×{r.K}", r.kernel, r.gpu_us, r.cublas_us, r.pct_cublas, r.call_us,
             r.pct_call, r.check] for r in rows]
    notes = [f"{types}: geometric mean {s['gmean_pct_cublas']:.0f}% of cuBLAS, lowest {s['min_pct_cublas']:.0f}%"
             + (f"; whole call {s['gmean_pct_call']:.0f}% of {library}'s (lowest {s['min_pct_call']:.0f}%)"
                if s["gmean_pct_call"] is not None else "")
             for types, s in summary(rows).items()]
    return Table(["Types", "M×N×K", "Kernel", Column("µs", ".1f"), Column("cuBLAS µs", ".1f"),
                  Column("% cuBLAS", ".0f", unit="%"), Column("call µs", ".1f"), Column("% call", ".0f", unit="%"),
                  Column("Check", verdict=True)], body, collapse=True,
                 caption=f"{device}: tcgemm.matmul against cuBLAS (cublasGemmEx, the same types and operands)",
                 notes=notes + ["µs: GPU time, median, L2 flushed; call µs: a whole call, host included, "
                                f"back to back; % call: {library}'s whole call over tcgemm.matmul's"])


def document(device: dict, rows: list[SweepRow]) -> dict:
    return {"schema": SCHEMA, "device": device, "rows": [asdict(r) for r in rows], "summary": summary(rows)}


def write(doc: dict, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return path


TYPE_STYLES = (("#0072B2", "o"), ("#D55E00", "s"), ("#009E73", "^"))    # Okabe-Ito, a marker each


def sweep_figure(rows: list[SweepRow], title: str | None = None):
    """% of cuBLAS per shape, one marker per pair of types, the shapes top to bottom in sweep order; a
    line at cuBLAS (100%). A Figure outside pyplot's state."""
    from tcgemm.style import COLUMN_WIDTH_IN, new_figure

    shapes = list(dict.fromkeys((r.M, r.N, r.K) for r in rows))
    fig = new_figure(COLUMN_WIDTH_IN, 0.2 * len(shapes) + 1.4, layout="constrained")
    ax = fig.subplots()
    for (color, marker), types in zip(TYPE_STYLES, dict.fromkeys(r.types for r in rows)):
        mine = [r for r in rows if r.types == types]
        ax.scatter([r.pct_cublas for r in mine], [shapes.index((r.M, r.N, r.K)) for r in mine], color=color,
                   marker=marker, s=22, label=types, zorder=3)
    ax.axvline(100, color="#777777", linestyle="--", linewidth=1)
    ax.set_yticks(range(len(shapes)), [f"{m}×{n}×{k}" for m, n, k in shapes], fontsize=8)
    ax.invert_yaxis()
    ax.grid(axis="y", color="#bbbbbb", linewidth=0.4)
    ax.set_xlabel("% of cuBLAS's speed (GPU time, same types)")
    ax.set_xlim(0, max(110, max(r.pct_cublas for r in rows) * 1.05))
    ax.legend(loc="lower right", fontsize=8, title="A, B → C", title_fontsize=8)
    if title:
        ax.set_title(title, fontsize=10)
    return fig
