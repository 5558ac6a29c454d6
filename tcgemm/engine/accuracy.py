"""Is a kernel's output right? Pure module: works on numpy arrays (the GPU side copies back first).

A result passes when it has no NaN or Inf, and both its relative Frobenius error and its largest
element error (relative to the largest reference element) are under the tolerances of its precision.
The Frobenius norm measures the typical error; the max-norm catches a handful of wrong elements,
which barely move a Frobenius norm over millions of entries.
"""
from __future__ import annotations

from dataclasses import dataclass

import math

import numpy as np

from tcgemm.table import Verdict

# Tolerances by (accumulator precision). Inputs are fp16 drawn uniformly from [-1, 1).
# fp32 accumulation: errors come from the fp32 sums (~1e-6 relative); a wrong index gives O(1).
# fp16 accumulation: every partial sum is rounded to fp16 (11-bit significand), ~1e-3 relative.
TOLERANCES = {
    "float32": (1e-4, 1e-3),   # (relative Frobenius, relative max)
    "float16": (1e-2, 2e-2),
}

# The rule for a known K, measured in the numerics chapter (book/numerics.ipynb) on inputs uniform in
# [-1, 1), against an fp64 product of the same inputs. An fp32 accumulator of mma.sync truncates
# (rounds toward zero) after every instruction, so each mma shrinks |sum| a little and the relative
# error grows with the number of mma, i.e. with K: at most 0.047 u K for any input type and K from 64
# to 65,536 (u = 2^-24). An fp16 accumulator rounds to nearest and its errors walk at random: at most
# 0.083 u sqrt(K) (u = 2^-11). The tolerance is MARGIN times the larger of these lines and u sqrt(K)
# (what a sum rounded to nearest at every step gives), for the relative Frobenius error, and twice
# that for the largest element error (relative to the largest |reference|).
ACCUMULATOR_BITS = {"float32": 24, "float16": 11}
RULE = {"float32": (0.05, 1.0), "float16": (0.0, 0.1)}     # (times u K, times u sqrt(K))
MARGIN = 8.0


# A result stored in a narrower type than its accumulator (Kernel 5.9's 16-bit C) is rounded once more,
# to nearest: each element moves by at most u = 2^-bits of its value (bits: the significand's, implicit
# bit included), so both relative errors grow by at most u.
ROUNDED_OUTPUT_BITS = {"float16": 11, "bfloat16": 8}


def tolerance(precision: str = "float32", K: int | None = None, rounded_to: str | None = None) -> tuple[float, float]:
    """(relative Frobenius, relative max) tolerance for a product whose sums run over K terms in a
    `precision` accumulator; without K, the fixed TOLERANCES of that precision. `rounded_to`: the
    16-bit type the result is rounded to at the end (a key of ROUNDED_OUTPUT_BITS), if any."""
    if precision not in TOLERANCES:
        raise ValueError(f"precision must be one of {sorted(TOLERANCES)}, got {precision!r}")
    if rounded_to is not None:
        if rounded_to not in ROUNDED_OUTPUT_BITS:
            raise ValueError(f"rounded_to must be one of {sorted(ROUNDED_OUTPUT_BITS)}, got {rounded_to!r}")
        fro, worst = tolerance(precision, K)
        u = 2.0 ** -ROUNDED_OUTPUT_BITS[rounded_to]
        return fro + u, worst + u
    if K is None:
        return TOLERANCES[precision]
    if K < 1:
        raise ValueError(f"K must be a positive number of terms, got {K!r}")
    per_k, per_sqrt_k = RULE[precision]
    u = 2.0 ** -ACCUMULATOR_BITS[precision]
    fro = MARGIN * u * max(per_k * K, per_sqrt_k * math.sqrt(K))
    return fro, 2 * fro


@dataclass(frozen=True)
class Check:
    passed: bool
    rel_fro: float
    rel_max: float
    tol_fro: float
    tol_max: float
    nonfinite: int
    reason: str

    def __str__(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return (f"{verdict}: relative Frobenius error {self.rel_fro:.2e} (tolerance {self.tol_fro:.0e}), "
                f"max error {self.rel_max:.2e} of max |ref| (tolerance {self.tol_max:.0e})"
                + ("" if self.passed else f" -- {self.reason}"))


def compare_outputs(out, ref, precision: str = "float32", K: int | None = None, rounded_to: str | None = None) -> Check:
    """Compare a result with a reference computed in higher precision; with K (the length of the
    sums), under the tolerance rule for that K (see `tolerance`), and its final rounding to `rounded_to`."""
    tol_fro, tol_max = tolerance(precision, K, rounded_to)
    out = np.asarray(out, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if out.shape != ref.shape:
        raise ValueError(f"output shape {out.shape} differs from reference shape {ref.shape}")
    nonfinite = int(out.size - np.count_nonzero(np.isfinite(out)))
    ref_fro = np.linalg.norm(ref)
    ref_max = np.abs(ref).max() if ref.size else 0.0
    if ref_fro == 0 or ref_max == 0:
        raise ValueError("the reference is all zeros: test on random, non-zero inputs")
    if nonfinite:
        return Check(False, float("nan"), float("nan"), tol_fro, tol_max, nonfinite,
                     f"{nonfinite} of {out.size} elements are NaN or Inf (unwritten or overflowed)")
    diff = out - ref
    rel_fro = float(np.linalg.norm(diff) / ref_fro)
    rel_max = float(np.abs(diff).max() / ref_max)
    reasons = []
    if not rel_fro <= tol_fro:
        reasons.append("Frobenius error over tolerance")
    if not rel_max <= tol_max:
        worst = np.unravel_index(int(np.abs(diff).argmax()), diff.shape)
        reasons.append(f"worst element at {tuple(int(i) for i in worst)}")
    return Check(not reasons, rel_fro, rel_max, tol_fro, tol_max, 0, "; ".join(reasons))


INT16_MAX = 2**15 - 1


@dataclass(frozen=True)
class ExactCheck:
    """An integer result compared bit for bit with an exact reference."""
    passed: bool
    mismatches: int
    size: int
    max_abs_ref: int
    reason: str

    def __str__(self) -> str:
        if not self.passed:
            return f"FAIL: {self.reason}"
        beyond = ", beyond int16" if self.max_abs_ref > INT16_MAX else ""
        return f"PASS: bit-exact, max |ref| {self.max_abs_ref:,}{beyond}"


def compare_exact(out, ref) -> ExactCheck:
    """Compare integer results element by element: any difference fails."""
    out, ref = np.asarray(out), np.asarray(ref)
    if out.shape != ref.shape:
        raise ValueError(f"output shape {out.shape} differs from reference shape {ref.shape}")
    if out.dtype != ref.dtype:
        raise ValueError(f"output dtype {out.dtype} differs from reference dtype {ref.dtype}")
    wrong = out != ref
    mismatches = int(np.count_nonzero(wrong))
    reason = ""
    if mismatches:
        first = tuple(int(i) for i in np.argwhere(wrong)[0])
        reason = (f"{mismatches} of {out.size} elements differ; first at {first}: "
                  f"{out[first]} instead of {ref[first]}")
    biggest = int(np.abs(ref.astype(np.int64)).max()) if ref.size else 0
    return ExactCheck(not mismatches, mismatches, int(out.size), biggest, reason)


def verdict(c: "Check | ExactCheck") -> Verdict:
    """A check's verdict as the tables show it (a str), carrying its error and tolerance for the
    tables' one-line summary (tcgemm.table.Verdict)."""
    if hasattr(c, "rel_fro"):
        return Verdict.of(c, f"PASS (rel. error {c.rel_fro:.1e})" if c.passed else f"FAIL: {c.reason}")
    return Verdict.of(c)
