"""Values the pipelines chapter's reading cells quote, taken out of its GPU cells' results. Pure module.

The chapter's prose is computed from the run beside it (tcgemm.publish.prose); these helpers turn the
results that its tables already show into the plain numbers a reading passes to ``say``.
"""
from __future__ import annotations

import re

_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def sample_shares(by_opcode: dict[str, dict[str, int]]) -> dict[str, dict[str, float]]:
    """tcgemm.engine.gpu.ncu.stall_samples's warp samples as percentages of all samples of the launch:
    {opcode: {"all": its share, reason: that reason's share, ...}} (what tcgemm.engine.report.stall_table
    shows, for every opcode, not only the top ones). No samples: an empty dict."""
    total = sum(sum(reasons.values()) for reasons in by_opcode.values())
    if not total:
        return {}
    return {op: {"all": 100.0 * sum(reasons.values()) / total,
                 **{reason: 100.0 * n / total for reason, n in reasons.items()}}
            for op, reasons in by_opcode.items()}


def share(shares: dict[str, dict[str, float]], opcode: str, reason: str = "all") -> float:
    """One opcode's share of all samples (or of one of its reasons), 0 where it has none."""
    return shares.get(opcode, {}).get(reason, 0.0)


def span_numbers(text: str) -> list[float]:
    """The numbers of a table cell that shows one value or a range, as tcgemm.engine.timing.spread_table
    writes them: '1,602–1,776' is [1602.0, 1776.0], '500' is [500.0]."""
    found = [float(n.replace(",", "")) for n in _NUMBER.findall(str(text))]
    if not found:
        raise ValueError(f"no number in {text!r}")
    return found


WORKLOG_KERNELS_H100_US = {"k3.0": 632.0, "k3.1": 400.0}
"""The worklog's Kernels 3.0 and 3.1 (github.com/spatters/mma-matmul, built from its repository, not
part of this book) timed by the book's authors on an H100 SXM while writing the pipelines chapter:
Nsight Compute, one launch at 4096^3, caches flushed, clock left alone. A measurement of another
session on another copy of the GPU, kept as data so that the chapter can set its own run beside it;
the chapter says so where it quotes it."""
