"""The numerics chapter's figure: relative error against K per mma type, beside the tolerance rule
of tcgemm.engine.accuracy. Pure module (matplotlib, no GPU)."""
from __future__ import annotations

import numpy as np

from tcgemm.engine.accuracy import ACCUMULATOR_BITS, tolerance
from tcgemm.style import COLUMN_WIDTH_IN, GROUP_HUES, new_figure

_MARKERS = "osD^v<>p"


def errors_figure(errors: dict, rule: str = "float32"):
    """Log-log lines of relative Frobenius error against K, one per type of `errors`
    ({label: [(K, relative error, signed mean error), ...]}: tcgemm.numerics.gpu.rounding.errors_vs_k), and
    the Frobenius tolerance tcgemm.engine.accuracy allows at each K for `rule`'s accumulator, dashed."""
    fig = new_figure(COLUMN_WIDTH_IN, 3.8, layout="constrained")
    ax = fig.subplots()
    Ks = sorted({row[0] for rows in errors.values() for row in rows})
    for i, (label, rows) in enumerate(errors.items()):
        K, rel = [r[0] for r in rows], [r[1] for r in rows]
        shown = [(k, e) for k, e in zip(K, rel) if e > 0]      # int8: exact, nothing on a log axis
        if shown:
            ax.plot(*zip(*shown), marker=_MARKERS[i % len(_MARKERS)], color=GROUP_HUES[i % len(GROUP_HUES)],
                    label=label)
    ax.plot(Ks, [tolerance(rule, k)[0] for k in Ks], "k--", linewidth=1,
            label=f"tolerance, {ACCUMULATOR_BITS[rule]}-bit accumulator")
    ax.set_xscale("log", base=4)
    ax.set_yscale("log")
    ax.set_xticks(Ks, [f"{k:,}" for k in Ks])
    ax.set_xlabel("K")
    ax.set_ylabel("relative error (Frobenius)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, ncol=2)
    return fig
