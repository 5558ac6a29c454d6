"""How does one mma.sync round? Test cases, what each hypothesis predicts for them, and the verdict.
Pure module (numpy and exact integer arithmetic; the GPU side is tcgemm.numerics.gpu.rounding).

A case is one dot product d = c + sum_k a_k b_k with K = the mma's k, run as one mma.sync with every
row of A equal to a, every column of B equal to b and every entry of C equal to c, so all 128
entries of D must agree. The values are chosen so that the hypotheses below predict different d.

A hypothesis is a model of the Tensor Core's adder, after Fasi, Higham, Mikaitis and Pranesh
(PeerJ CS 2021): the products a_k b_k are formed (exactly, or rounded to the input format), then
`group` of them at a time (consecutive k, or for 8-bit floats the register halves) are added in one
multi-operand adder together with the running sum; C joins the first addition, or is added after
all products by the same adder or by an fp32 add that rounds to nearest. The adder aligns every term
to the largest one's leading bit and keeps `width` bits from there (bits below are truncated toward
zero; None: all bits kept), adds exactly and rounds once (RN: to nearest, ties to even; RZ: toward
zero; RD: toward minus infinity), to fp32 between additions and to the accumulator format at the end.
Subnormal numbers are kept or flushed to zero, everywhere or in the accumulator only (C and D).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, fields
from functools import cached_property, lru_cache
from fractions import Fraction

import numpy as np

from tcgemm.fragment_layouts import MMA_SHAPES, MMA_VARIANTS
from tcgemm.table import Column, Table

# Every value is held as an integer count of 2^-SCALE: exact for all the formats below.
SCALE = 320
ROUNDINGS = ("RN", "RZ", "RD")


@dataclass(frozen=True)
class Format:
    """A binary floating-point format: `precision` significand bits (the implicit one included),
    normal exponents emin..emax."""
    name: str
    precision: int
    emin: int
    emax: int
    max_finite: Fraction

    @property
    def min_subnormal(self) -> Fraction:
        return Fraction(2) ** (self.emin - self.precision + 1)

    @cached_property
    def max_int(self) -> int:
        """max_finite as a count of 2^-SCALE."""
        return int(self.max_finite * 2 ** SCALE)


def _ieee(name, precision, exponent_bits):
    emax = 2 ** (exponent_bits - 1) - 1
    top = (2 - Fraction(2) ** (1 - precision)) * Fraction(2) ** emax
    return Format(name, precision, 1 - emax, emax, top)


FORMATS: dict[str, Format] = {
    "f16": _ieee("fp16", 11, 5),
    "bf16": _ieee("bf16", 8, 8),
    "tf32": _ieee("tf32", 11, 8),
    "f32": _ieee("fp32", 24, 8),
    # e4m3 has no infinities: exponent 15 holds numbers, only S.1111.111 is NaN, so the largest is 448.
    "e4m3": Format("e4m3", 4, -6, 8, Fraction(448)),
    "e5m2": _ieee("e5m2", 3, 5),
}


@dataclass(frozen=True)
class MmaType:
    """One mma.sync variant the probes run: a key of tcgemm.fragment_layouts.MMA_VARIANTS, and its
    shape, input type ab and accumulator type acc (PTX names)."""
    label: str
    variant: str
    shape: str
    ab: str
    acc: str

    @property
    def k(self) -> int:
        return MMA_SHAPES[self.shape][2]

    @property
    def kernel_suffix(self) -> str:
        """kernels/probe_rounding.cu names its kernels rounding_<suffix> and accumulate_<suffix>."""
        return f"{self.ab}_{self.acc}"


MMA_TYPES: dict[str, MmaType] = {label: MmaType(label, variant, *MMA_VARIANTS[variant]) for label, variant in (
    ("fp16 -> fp32", "m16n8k16.f32"),
    ("fp16 -> fp16", "m16n8k16.f16"),
    ("bf16 -> fp32", "m16n8k16.bf16.f32"),
    ("tf32 -> fp32", "m16n8k8.tf32.f32"),
    ("e4m3 -> fp32", "m16n8k32.e4m3.f32"),
    ("e5m2 -> fp32", "m16n8k32.e5m2.f32"),
    ("int8 -> int32", "m16n8k32.s32"),
)}


# ---- exact values ------------------------------------------------------------------------------

def to_int(x) -> int:
    """An exact binary value (int, float or Fraction) as a count of 2^-SCALE."""
    v = Fraction(x) * 2 ** SCALE
    if v.denominator != 1:
        raise ValueError(f"{x} is not a multiple of 2^-{SCALE}")
    return int(v)


def to_fraction(v: int) -> Fraction:
    return Fraction(v, 2 ** SCALE)


def _exponent(magnitude: int) -> int:
    """floor(log2) of a positive value held as a count of 2^-SCALE."""
    return magnitude.bit_length() - 1 - SCALE


def round_to(v: int, fmt: Format, mode: str, subnormals: bool = True) -> int:
    """v rounded to `fmt` with `mode` (RN, RZ or RD; None: v must be exact in fmt); a result below
    the smallest normal becomes 0 unless `subnormals`. Raises OverflowError past the largest finite
    value."""
    if v == 0:
        return 0
    negative, magnitude = v < 0, abs(v)
    drop = max(_exponent(magnitude), fmt.emin) - fmt.precision + 1 + SCALE
    if drop > 0:
        kept, rest = magnitude >> drop, magnitude & ((1 << drop) - 1)
        if mode == "RN":
            half = 1 << (drop - 1)
            kept += rest > half or (rest == half and kept & 1)
        elif mode == "RD":
            kept += negative and rest > 0
        elif mode is None and rest:
            raise ValueError(f"{to_fraction(v)} needs rounding to {fmt.name}, and no rounding was given")
        elif mode not in (*ROUNDINGS, None):
            raise ValueError(f"rounding must be one of {ROUNDINGS}, got {mode!r}")
        magnitude = kept << drop
    if magnitude > fmt.max_int:
        raise OverflowError(f"{to_fraction(v)} overflows {fmt.name}")
    if not subnormals and _exponent(magnitude) < fmt.emin:
        return 0
    return -magnitude if negative else magnitude


def representable(x, fmt: Format) -> bool:
    v = to_int(x)
    try:
        return round_to(v, fmt, "RZ") == v
    except OverflowError:
        return False


# ---- the hypotheses ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Hypothesis:
    products: str            # "exact" or "rounded" (to the input format's precision, to nearest)
    width: int | None        # significand bits the adder keeps from the largest term's leading bit
    group: int               # products added per multi-operand addition
    order: str               # which products go together: "k" (consecutive k) or "pairs" (first every
                             # k with k % 4 in {0, 1}, then the others: the two halves of each register
                             # of four 8-bit values, as two k16 instructions would take them)
    c: str                   # C is a term of the first addition ("first"), or added after all products
                             # by the same adder ("after") or by an fp32 add rounding to nearest ("fadd")
    rounding: str | None     # RN, RZ or RD, when the adder's sum becomes the accumulator format
    subnormals: bool | str   # True: subnormal inputs (A, B, C) and results kept; False: read or written as
                             # 0; ACCUMULATOR_FLUSH: kept in A and B, read or written as 0 in C and D

    @property
    def accumulator_subnormals(self) -> bool:
        return self.subnormals is True


@dataclass(frozen=True)
class IntHypothesis:
    overflow: str            # "wraps" (modulo 2^32) or "saturates" (at the int32 limits)


ACCUMULATOR_FLUSH = "accumulator"
SUBNORMALS = (True, False, ACCUMULATOR_FLUSH)
WIDTHS = (*range(13, 28), None)
GROUPS = (4, 8, 16, 32)
ORDERS = ("k", "pairs")
C_PLACES = ("first", "after", "fadd")
EIGHT_BIT_FLOATS = ("e4m3", "e5m2")


def hypotheses(t: MmaType) -> list:
    """Every hypothesis the probe tells apart on mma type t. Where the adder keeps so few bits that
    its sum always fits fp32 (width + the bits of group - 1 <= 25: checked by the tests, which run every
    case), an fp32 accumulator needs no rounding: those hypotheses carry rounding None."""
    if t.acc == "s32":
        return [IntHypothesis(o) for o in ("wraps", "saturates")]
    # Flushing in the accumulator only differs from flushing everywhere where the cases' subnormal input
    # is a subnormal number of the input type that the accumulator holds as a normal one.
    fin, fout = FORMATS[t.ab], FORMATS[t.acc]
    e_sub = _subnormal_input_exponent(fin)
    subnormals = SUBNORMALS if fout.emin <= e_sub < fin.emin else SUBNORMALS[:2]
    groups = [g for g in GROUPS if g <= t.k]
    orders = ORDERS if t.ab in EIGHT_BIT_FLOATS else ORDERS[:1]
    out = []
    for products, width, group, order, c, subnormals in itertools.product(
            ("exact", "rounded"), WIDTHS, groups, orders, C_PLACES, subnormals):
        if order != "k" and group != t.k // 2:
            continue                    # the halves of the registers are one addition each
        exact = t.acc == "f32" and width is not None and \
            width + (group - 1).bit_length() <= FORMATS["f32"].precision + 1
        for rounding in ((None,) if exact else ROUNDINGS):
            if c == "fadd" and (rounding == "RN" or t.acc != "f32"):
                continue                # RN: c = "after" says it; an fp16 C would not need an fp32 add
            out.append(Hypothesis(products, width, group, order, c, rounding, subnormals))
    return out


def _precision_only(fmt: Format) -> Format:
    """fmt's significand with an exponent range wide enough for any product here."""
    return Format(f"{fmt.precision}-bit", fmt.precision, 20 - SCALE, 60, Fraction(2) ** 61)


def _add(terms: tuple[int, ...], h: Hypothesis, fmt: Format) -> int:
    terms = [t for t in terms if t]
    if not terms:
        return 0
    if h.width is not None:
        drop = max(abs(t).bit_length() for t in terms) - h.width
        if drop > 0:
            terms = [(t >> drop << drop) if t > 0 else -(-t >> drop << drop) for t in terms]
    return round_to(sum(terms), fmt, h.rounding, h.accumulator_subnormals)


def _operands(case: "Case", t: MmaType, h: Hypothesis) -> tuple[list[int], int]:
    """The products and C as hypothesis h's adder sees them."""
    fin, fout = FORMATS[t.ab], FORMATS[t.acc]

    def read(x, fmt, keep):
        v = to_int(x)
        return 0 if v and not keep and _exponent(abs(v)) < fmt.emin else v

    keep_inputs = h.subnormals is not False
    products = [read(x, fin, keep_inputs) * read(y, fin, keep_inputs) >> SCALE for x, y in zip(case.a, case.b)]
    if h.products == "rounded":
        products = [round_to(p, _precision_only(fin), "RN") for p in products]
    return products, read(case.c, fout, h.accumulator_subnormals)


def predict(case: "Case", h: Hypothesis, t: MmaType) -> Fraction:
    """The D that hypothesis h predicts for one case on mma type t."""
    products, c = _operands(case, t, h)
    return to_fraction(_accumulate(products, c, h, t))


def _accumulate(products: list[int], c: int, h: Hypothesis, t: MmaType) -> int:
    # Between the additions of one instruction the running sum is fp32 (it is the register's format
    # for fp32 accumulators; for fp16 ones, the final rounding below makes it fp16).
    f32 = FORMATS["f32"]
    if h.order == "pairs":
        products = [p for k, p in enumerate(products) if k % 4 < 2] + \
                   [p for k, p in enumerate(products) if k % 4 >= 2]
    acc = c if h.c == "first" else 0
    for start in range(0, len(products), h.group):
        acc = _add((acc, *products[start:start + h.group]), h, f32)
    if h.c == "after":
        acc = _add((acc, c), h, f32)
    elif h.c == "fadd":
        acc = round_to(acc + c, f32, "RN", h.accumulator_subnormals)
    return round_to(acc, FORMATS[t.acc], h.rounding, h.accumulator_subnormals)


def predict_int(case: "Case", h: IntHypothesis) -> Fraction:
    total = int(case.c) + sum(int(x) * int(y) for x, y in zip(case.a, case.b))
    lo, hi = -2 ** 31, 2 ** 31 - 1
    if h.overflow == "saturates":
        return Fraction(min(max(total, lo), hi))
    return Fraction((total - lo) % 2 ** 32 + lo)


# ---- the cases ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    family: str              # what it tests
    name: str                # the case, in words
    a: tuple                 # K values (Fractions, exact in the input format)
    b: tuple
    c: Fraction


def _pow2(e: int) -> Fraction:
    return Fraction(2) ** e


def _int_cases(K: int, add) -> None:
    add("exact products", "32 x (-128)(-128)", {k: (-128, -128) for k in range(K)})
    add("exact products", "32 x 127 (-128)", {k: (127, -128) for k in range(K)})
    add("cancellation", "+-127^2 alternating, C = 5", {k: (127, 127 if k % 2 else -127) for k in range(K)}, 5)
    add("overflow", "C = 2^31 - 1, plus 1", {0: (1, 1)}, 2 ** 31 - 1)
    add("overflow", "C = -2^31, minus 32 x 127^2", {k: (127, -127) for k in range(K)}, -2 ** 31)


def cases(t: MmaType) -> list[Case]:
    """The test cases for mma type t, each exact in its input and accumulator formats."""
    K = t.k
    out = []

    def add(family, name, pairs, c=0):
        a, b = [Fraction(0)] * K, [Fraction(0)] * K
        for k, (x, y) in pairs.items():
            a[k], b[k] = Fraction(x), Fraction(y)
        out.append(Case(family, name, tuple(a), tuple(b), Fraction(c)))

    if t.acc == "s32":
        _int_cases(K, add)
        return out

    fin, fout = FORMATS[t.ab], FORMATS[t.acc]
    p = fin.precision
    # Big products 2^(2s) from inputs 2^s; small ones 2^(2s - j) as 2^(s - ceil(j/2)) 2^(s - j//2),
    # both normal numbers (fp16 accumulators: 2^(2s) must stay below 65504).
    s = min(fin.emax, (fout.emax - 3) // 2, 8)
    S = 2 * s

    def small(j, sign=1):
        return (_pow2(s - (j + 1) // 2), sign * _pow2(s - j // 2))

    big, minus_big = (_pow2(s), _pow2(s)), (_pow2(s), -_pow2(s))

    def normal(x, fmt):
        return x == 0 or (representable(x, fmt) and abs(x) >= _pow2(fmt.emin))

    def add_if(family, name, pairs, c=0):
        """Add the case if its inputs are normal numbers and no sum can overflow the accumulator."""
        inputs = [x for pair in pairs.values() for x in pair]
        largest = abs(c) + sum(abs(x * y) for x, y in pairs.values())
        if all(normal(x, fin) for x in inputs) and normal(c, fout) and largest < fout.max_finite / 2:
            add(family, name, pairs, c)

    x = 1 + _pow2(1 - p)
    add("exact products", f"(1 + 2^-{p - 1})^2", {0: (x, x)})
    add("exact products", f"(1 + 2^-{p - 1})(1 - 2^-{p})", {0: (x, 1 - _pow2(-p))})
    add("exact products", f"(1 + 2^-{p - 1})^2 - 1 - 2^-{p - 2}", {0: (x, x), 1: (1, -1), 2: (_pow2(2 - p), -1)})
    add("exact products", f"(1 + 2^-{p - 1}) 1.5 - 1.5 - 2^-{p - 1}",
        {0: (x, Fraction(3, 2)), 1: (Fraction(3, 2), -1), 2: (_pow2(1 - p), -1)})
    j_max = 2 * (s - fin.emin)                   # the smallest small(j) of normal inputs
    # Alignment: a small term 2^-j below a big one survives the adder iff j < width.
    # With four 8-bit values per register, also at k = 4, in the same half of the registers as k = 0, 1.
    for third in ((2, 4) if t.ab in EIGHT_BIT_FLOATS else (2,)):
        for j in range(1, min(30, j_max + 1)):
            add_if("cancellation", f"2^{S} - 2^{S} + 2^{S - j}" + (f" at k = {third}" if third != 2 else ""),
                   {0: big, 1: minus_big, third: small(j)})
    # ... and where 2^(S - j) is too small for an fp16 accumulator, the same one octave higher.
    for j in range(S - fout.emin + 1, min(30, j_max + 2)):
        add_if("cancellation", f"2^{S + 1} - 2^{S + 1} + 2^{S + 1 - j}",
               {0: (big[0], 2 * big[1]), 1: (big[0], -2 * big[1]), 2: small(j - 1)})
    P = FORMATS["f32"].precision
    for sign, op in ((1, "+"), (-1, "-")):
        add_if("C before/after", f"C = 2^{S}, {op} 2^{S - P} {op} 2^{S - P - 1}",
               {0: small(P, sign), 1: small(P + 1, sign)}, _pow2(S))
    for P in sorted({FORMATS["f32"].precision, fout.precision}):
        for j in range(P - 3, P + 3):
            for sign, op in ((1, "+"), (-1, "-")):
                add_if("alignment", f"2^{S} {op} 2^{S - j}", {0: big, 1: small(j, sign)})
                add_if("alignment", f"-2^{S} {op} 2^{S - j}", {0: minus_big, 1: small(j, sign)})
                add_if("C before/after", f"C = 2^{S}, {op} 2^{S - j}", {0: small(j, sign)}, _pow2(S))
        # Sums one bit wider than the accumulator: small terms that only together reach its last place.
        for e in range(0, 4):
            for n in sorted({K - 1, K // 2 - 1, 3}):
                for sign, op in ((1, "+"), (-1, "-")):
                    add_if("one more bit", f"2^{S} {op} {n} x 2^{S - P - e}",
                           {0: big, **{k: small(P + e, sign) for k in range(1, n + 1)}})
        for n in (1, 3):
            add_if("one more bit", f"2 x 2^{S} + {n} x 2^{S - P + 1}",
                   {0: big, 1: big, **{k: small(P - 1) for k in range(2, n + 2)}})
    # Many big terms: their sum is wider than each, so a kept small term needs rounding.
    positions = {"k": list(range(K))}
    if t.ab in EIGHT_BIT_FLOATS:
        positions["k % 4 < 2"] = [k for k in range(K) if k % 4 < 2]
    for where, ks in positions.items():
        for n in (n for n in (3, 7, 15, 31) if n < len(ks)):
            for j in range(18, 26):
                for sign, op in ((1, "+"), (-1, "-")):
                    for many, lead in ((big, ""), (minus_big, "-")):
                        add_if("one more bit", f"{lead}{n} x 2^{S} {op} 2^{S - j}" + (f" ({where})" if where != "k" else ""),
                               {**{k: many for k in ks[:n]}, ks[n]: small(j, sign)})
    # Grouping: two big terms cancel and a tiny one survives, or not, depending on which addition
    # (groups of consecutive k) each term falls in.
    j_tiny = min(30, j_max, S - fout.emin)     # also a normal number of the accumulator format
    tiny, t_exp = small(j_tiny), -j_tiny
    for k in (2, 4, 8, 16):
        if k < K:
            add_if("grouping", f"2^{S} - 2^{S}, tiny at k = {k}", {0: big, 1: minus_big, k: tiny})
            add_if("grouping", f"2^{S} + tiny, -2^{S} at k = {k}", {0: big, 1: tiny, k: minus_big})
    add_if("C before/after", f"C = 2^{S + t_exp}, products 2^{S} - 2^{S}", {0: big, 1: minus_big},
           tiny[0] * tiny[1])
    add_if("C before/after", f"C = -2^{S}, products 2^{S} + 2^{S + t_exp}", {0: big, 1: tiny}, -_pow2(S))
    # Subnormals: an input below the smallest normal, a C below fp32's, a product below the output's.
    e_sub = _subnormal_input_exponent(fin)
    add("subnormals", f"subnormal input 2^{e_sub} x 1", {0: (_pow2(e_sub), 1)})
    e_sub = fout.emin - fout.precision + 3
    add("subnormals", f"subnormal C 2^{e_sub}", {}, _pow2(e_sub))
    e_out = fout.emin - 3
    ea, eb = e_out // 2, e_out - e_out // 2
    if ea >= fin.emin and eb >= fin.emin:
        add("subnormals", f"2^{ea} x 2^{eb}: subnormal product", {0: (_pow2(ea), _pow2(eb))})
    return out


def _subnormal_input_exponent(fin: Format) -> int:
    """The exponent of the subnormal input of the cases: 4 times the smallest subnormal of `fin`."""
    return fin.emin - fin.precision + 3


def _columns(t: MmaType, case_list) -> np.ndarray:
    """predictions(t, case_list), taken from the (cached) table of all of t's cases where it can be."""
    where = {c: i for i, c in enumerate(cases(t))}
    if all(c in where for c in case_list):
        return predictions(t)[:, [where[c] for c in case_list]]
    return predictions(t, case_list)


def _to_float(v: int) -> float:
    return math.ldexp(float(v), -SCALE)     # exact: the values here have at most 32 significant bits


def predictions(t: MmaType, case_list=None) -> np.ndarray:
    """predictions[h, i]: the D of case i under hypothesis h of hypotheses(t) (float64, exact)."""
    return _predictions(t, tuple(cases(t) if case_list is None else case_list))


@lru_cache(maxsize=16)
def _predictions(t: MmaType, case_list: tuple) -> np.ndarray:
    hyps = hypotheses(t)
    if t.acc == "s32":
        return np.array([[float(predict_int(c, h)) for c in case_list] for h in hyps])
    # The products and C depend on two of the hypothesis' fields only: form them once per pair.
    operands = {}
    out = np.empty((len(hyps), len(case_list)))
    for i, h in enumerate(hyps):
        key = (h.products, h.subnormals)
        if key not in operands:
            operands[key] = [_operands(c, t, h) for c in case_list]
        out[i] = [_to_float(_accumulate(p, c, h, t)) for p, c in operands[key]]
    out.setflags(write=False)
    return out


# ---- the verdict -------------------------------------------------------------------------------

PROPERTIES = {
    "products": "products",
    "width": "bits kept in the sum",
    "group": "products per addition",
    "order": "products together",
    "c": "C added",
    "rounding": "rounding",
    "subnormals": "subnormals",
    "overflow": "int32 overflow",
}


def _describe(field: str, value, t: MmaType) -> str:
    if field == "width":
        if value is None:
            return "all (exact sum)"
        extra = value - FORMATS["f32"].precision
        return f"{value} ({extra:+d} vs fp32)"
    if field == "c":
        return {"first": "in the first addition", "after": "after, by the same adder",
                "fadd": "after, by an fp32 add (RN)"}[value]
    if field == "order":
        return "consecutive k" if value == "k" else "k % 4 < 2, then the rest"
    if field == "subnormals":
        return {True: "kept", False: "flushed to 0", ACCUMULATOR_FLUSH: "kept in A and B, flushed to 0 in C and D"}[value]
    if field == "rounding" and value is None:
        return "none needed (the sum fits)"
    if field == "group":
        return f"{value}" + (" (all)" if value == t.k else "")
    return str(value)


@dataclass(frozen=True)
class Verdict:
    mma: MmaType
    fitting: tuple            # the hypotheses that predict every observed D
    disagreeing_cases: int    # cases whose 128 D entries were not all equal

    def properties(self) -> dict[str, str]:
        """Per property, the values the fitting hypotheses have ('no hypothesis fits' if none)."""
        if not self.fitting:
            return {}
        names = [f.name for f in fields(self.fitting[0])]
        return {n: " or ".join(dict.fromkeys(_describe(n, getattr(h, n), self.mma) for h in self.fitting))
                for n in names}


def verdict(t: MmaType, observed, case_list=None) -> Verdict:
    """Which hypotheses predict every observation. observed: (cases, 128) D entries of each case's
    mma (or (cases,) values)."""
    case_list = cases(t) if case_list is None else case_list
    observed = np.asarray(observed, dtype=np.float64)
    if observed.ndim == 1:
        observed = observed[:, None]
    if observed.shape[0] != len(case_list):
        raise ValueError(f"{observed.shape[0]} observations for {len(case_list)} cases of {t.label}")
    disagreeing = int(np.count_nonzero(np.any(observed != observed[:, :1], axis=1)))
    hyps = hypotheses(t)
    fit = np.all(_columns(t, case_list) == observed[:, 0][None, :], axis=1)
    return Verdict(t, tuple(h for h, ok in zip(hyps, fit) if ok), disagreeing)


def verdict_table(verdicts) -> Table:
    """One row per floating-point mma type: what the fitting hypotheses say about each property;
    integer types as a note (exact or not, and what int32 overflow does)."""
    names = [f.name for f in fields(Hypothesis)]
    rows, notes = [], []
    for v in verdicts:
        props = v.properties()
        if v.mma.acc == "s32":
            notes.append(f"{v.mma.label}: " + (f"every case exact; int32 overflow {props['overflow']}"
                                                if props else "not exact: no hypothesis fits"))
        else:
            rows.append([v.mma.label, *(props[n] for n in names)] if props else
                        [v.mma.label, "no hypothesis fits", *[""] * (len(names) - 1)])
    return Table(["mma type", *(PROPERTIES[n] for n in names)], rows, notes=notes)


# ---- random inputs and the error they give -----------------------------------------------------

def quantize(x, ab: str) -> np.ndarray:
    """float64 values rounded to nearest (ties to even) in input type ab, subnormals included;
    int8: rounded to integers and clipped to -128..127."""
    x = np.asarray(x, dtype=np.float64)
    if ab == "s8":
        return np.clip(np.round(x), -128, 127)
    fmt = FORMATS[ab]
    exponent = np.maximum(np.frexp(x)[1] - 1, fmt.emin)      # |x| in [2^e, 2^(e+1))
    quantum = np.exp2(exponent - fmt.precision + 1)
    return np.round(x / quantum) * quantum


def error_stats(out, ref) -> tuple[float, float]:
    """(relative Frobenius error, signed mean error relative to the mean |ref|) of out against ref:
    the first says how far, the second whether the errors lean one way."""
    out, ref = np.asarray(out, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    diff = out - ref
    return float(np.linalg.norm(diff) / np.linalg.norm(ref)), float(diff.mean() / np.abs(ref).mean())


# ---- the probe, explained ------------------------------------------------------------------------

# Two hypotheses to set side by side: an IEEE-style fused dot product (every product exact, one
# rounding to nearest at the end), and a truncating adder with 3 bits beyond fp32, groups of 8.
IEEE_FUSED = Hypothesis("exact", None, 16, "k", "first", "RN", True)
TRUNCATING = Hypothesis("exact", 27, 8, "k", "first", "RZ", True)


def cases_table(t: MmaType, per_family: int = 2, shown=(IEEE_FUSED, TRUNCATING)) -> Table:
    """`per_family` cases of each family for mma type t (those on which the hypotheses of `shown`
    disagree first), with the D each of them predicts (exact values, as floats)."""
    chosen, seen = [], {}
    # Cases on which the shown hypotheses disagree first, then the others, per_family per family.
    for c in sorted(cases(t), key=lambda c: len({predict(c, h, t) for h in shown}) == 1):
        if seen.setdefault(c.family, 0) < per_family:
            seen[c.family] += 1
            chosen.append(c)
    chosen.sort(key=cases(t).index)
    rows = [[c.family, c.name, *(float(predict(c, h, t)) for h in shown)] for c in chosen]
    names = [f"{h.rounding}, {'all bits' if h.width is None else f'{h.width} bits'}, groups of {h.group}"
             for h in shown]
    return Table(["family", "case", *(Column(n, ".9g") for n in names)], rows,
                 caption=f"Some of the {len(cases(t))} cases for {t.label}, and what two hypotheses predict")


def discrimination_table(types=None) -> Table:
    """Per mma type: cases, hypotheses, and how many different prediction vectors they give (equal
    to the hypotheses when every pair of hypotheses disagrees on some case)."""
    rows = []
    for t in (MMA_TYPES.values() if types is None else types):
        table = predictions(t)
        rows.append([t.label, table.shape[1], table.shape[0], len({tuple(r) for r in table})])
    return Table(["mma type", Column("cases", ","), Column("hypotheses", ","),
                  Column("distinct predictions", ",")], rows)
