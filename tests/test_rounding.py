"""The rounding probe's logic without a GPU: exact rounding, cases that tell every pair of hypotheses
apart, and verdicts on synthetic observations."""
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tcgemm.registers import to_registers
from tcgemm.numerics.rounding import (FORMATS, MMA_TYPES, Hypothesis, IntHypothesis, cases, error_stats, hypotheses,
                                      predict, predict_int, predictions, quantize, round_to, to_fraction, to_int,
                                      verdict, verdict_table)

F32, F16 = FORMATS["f32"], FORMATS["f16"]
FLOAT_TYPES = [t for t in MMA_TYPES.values() if t.acc != "s32"]


def rounded(x, fmt, mode, subnormals=True):
    return to_fraction(round_to(to_int(x), fmt, mode, subnormals))


def test_round_to_nearest_even_toward_zero_and_down():
    ulp = Fraction(1, 2 ** 23)
    tie_even, tie_odd = 1 + ulp / 2, 1 + ulp + ulp / 2
    assert rounded(tie_even, F32, "RN") == 1 and rounded(tie_odd, F32, "RN") == 1 + 2 * ulp
    assert rounded(1 + ulp * Fraction(3, 4), F32, "RZ") == 1
    assert rounded(-(1 + ulp / 4), F32, "RZ") == -1
    assert rounded(-(1 + ulp / 4), F32, "RD") == -(1 + ulp)
    assert rounded(1 + ulp / 4, F32, "RD") == 1


def test_round_to_subnormals_overflow_and_exactness():
    smallest = F16.min_subnormal
    assert smallest == Fraction(1, 2 ** 24)
    assert rounded(3 * smallest, F16, "RN") == 3 * smallest
    assert rounded(3 * smallest, F16, "RN", subnormals=False) == 0
    assert rounded(Fraction(3, 2) * smallest, F16, "RN") == 2 * smallest      # tie to even
    with pytest.raises(OverflowError, match="fp16"):
        round_to(to_int(70000), F16, "RN")
    assert FORMATS["e4m3"].max_finite == 448
    with pytest.raises(ValueError, match="needs rounding"):
        round_to(to_int(1 + Fraction(1, 2 ** 30)), F32, None)
    with pytest.raises(ValueError, match="rounding must be one of"):
        round_to(to_int(1 + Fraction(1, 2 ** 30)), F32, "RU")


@pytest.mark.parametrize("t", MMA_TYPES.values(), ids=lambda t: t.label)
def test_cases_are_exact_in_their_types(t):
    """Every case's inputs are exact in the input type and C in the accumulator type (the register
    encoder refuses anything else), and A B + C stays finite."""
    case_list = cases(t)
    assert len({c.name for c in case_list}) == len(case_list)
    for c in case_list:
        assert len(c.a) == len(c.b) == t.k
        to_registers(np.array(c.a, dtype=np.float64).reshape(-1, 4), t.ab)
        to_registers(np.array([float(c.c)]), "s32" if t.acc == "s32" else "f32")
    assert {c.family for c in case_list} >= ({"exact products", "overflow"} if t.acc == "s32" else
                                             {"exact products", "alignment", "cancellation", "one more bit",
                                              "grouping", "C before/after", "subnormals"})


@pytest.mark.slow     # every pair of hypotheses on every case: half a minute
@pytest.mark.parametrize("t", MMA_TYPES.values(), ids=lambda t: t.label)
def test_every_pair_of_hypotheses_is_told_apart(t):
    """No two hypotheses predict the same D for every case: whichever the GPU follows, the
    observations single it out."""
    table = predictions(t)
    assert table.shape == (len(hypotheses(t)), len(cases(t)))
    assert np.all(np.isfinite(table))
    distinct = {tuple(row) for row in table}
    assert len(distinct) == len(table)


def test_the_hypothesis_space_holds_the_published_models():
    """Round to nearest on an exact sum (IEEE fused dot product) and truncation with a few extra
    bits (Fasi et al.'s model) are both candidates; for fp8, also two k16 instructions on the halves
    of each register, C added after by an fp32 add (what the sm_90 SASS of the fp8 probe does)."""
    t = MMA_TYPES["fp16 -> fp32"]
    hyps = set(hypotheses(t))
    assert Hypothesis("exact", None, 16, "k", "first", "RN", True) in hyps
    assert Hypothesis("exact", 27, 8, "k", "first", "RZ", True) in hyps
    assert Hypothesis("exact", 26, 16, "pairs", "fadd", "RZ", True) in hypotheses(MMA_TYPES["e4m3 -> fp32"])
    assert not any(h.order == "pairs" for h in hyps)


SAMPLED = [Hypothesis("exact", None, 16, "k", "first", "RN", True), Hypothesis("exact", 27, 8, "k", "first", "RZ", True),
           Hypothesis("exact", 24, 4, "k", "after", "RD", False), Hypothesis("rounded", 14, 16, "k", "first", None, True),
           Hypothesis("exact", 26, 16, "k", "fadd", "RZ", True)]


@pytest.mark.parametrize("h", SAMPLED, ids=str)
def test_verdict_singles_out_the_hypothesis_that_made_the_observations(h):
    t = MMA_TYPES["bf16 -> fp32"]
    case_list = cases(t)
    observed = np.array([float(predict(c, h, t)) for c in case_list])
    v = verdict(t, np.repeat(observed[:, None], 128, axis=1), case_list)
    assert v.fitting == (h,) and v.disagreeing_cases == 0
    props = v.properties()
    assert props["products"] == h.products
    assert props["group"].startswith(str(h.group))


def test_verdict_of_observations_no_hypothesis_predicts():
    t = MMA_TYPES["tf32 -> fp32"]
    case_list = cases(t)
    observed = np.array([float(predict(c, SAMPLED[1], t)) for c in case_list])
    observed[0] += 1
    v = verdict(t, observed, case_list)
    assert v.fitting == () and v.properties() == {}
    assert "no hypothesis fits" in str(verdict_table([v]))
    with pytest.raises(ValueError, match="observations for"):
        verdict(t, observed[:-1], case_list)


def test_verdict_counts_cases_whose_entries_disagree():
    t = MMA_TYPES["fp16 -> fp32"]
    case_list = cases(t)
    observed = np.repeat(np.array([float(predict(c, SAMPLED[0], t)) for c in case_list])[:, None], 128, axis=1)
    observed[3, 17] += 1
    assert verdict(t, observed, case_list).disagreeing_cases == 1


@pytest.mark.parametrize("overflow", ["wraps", "saturates"])
def test_int8_verdict(overflow):
    t = MMA_TYPES["int8 -> int32"]
    case_list = cases(t)
    observed = [float(predict_int(c, IntHypothesis(overflow))) for c in case_list]
    v = verdict(t, observed, case_list)
    assert v.fitting == (IntHypothesis(overflow),)
    table = verdict_table([v])
    assert table.rows == () and table.notes == (f"int8 -> int32: every case exact; int32 overflow {overflow}",)


def test_int8_overflow_cases_wrap_or_saturate():
    t = MMA_TYPES["int8 -> int32"]
    top = next(c for c in cases(t) if c.name.startswith("C = 2^31 - 1"))
    assert predict_int(top, IntHypothesis("wraps")) == -2 ** 31
    assert predict_int(top, IntHypothesis("saturates")) == 2 ** 31 - 1


def test_verdict_table_has_a_row_per_float_type():
    verdicts = []
    for t in FLOAT_TYPES[:2]:
        case_list = cases(t)
        verdicts.append(verdict(t, [float(predict(c, SAMPLED[1], t)) for c in case_list], case_list))
    table = verdict_table(verdicts)
    assert table.column("mma type") == [t.label for t in FLOAT_TYPES[:2]]
    assert table.column("bits kept in the sum") == ["27 (+3 vs fp32)"] * 2
    assert table.column("rounding") == ["RZ"] * 2


@pytest.mark.parametrize("ab", ["f16", "bf16", "tf32", "e4m3", "e5m2", "s8"])
def test_quantize_gives_values_of_the_type_nearest_the_input(ab):
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, 4096) * (127 if ab == "s8" else 1)
    q = quantize(x, ab)
    to_registers(q, ab)                              # raises unless every value is exact in ab
    fmt = FORMATS.get(ab)
    ulp = 1 if fmt is None else np.exp2(np.maximum(np.frexp(x)[1] - 1, fmt.emin) - fmt.precision + 1)
    assert np.all(np.abs(q - x) <= ulp / 2)


def test_error_stats_keeps_the_sign_of_a_bias():
    ref = np.linspace(1, 2, 100)
    rel, mean = error_stats(ref * (1 - 1e-3), ref)
    assert rel == pytest.approx(1e-3) and mean == pytest.approx(-1e-3)
    assert error_stats(ref * (1 + 1e-3), ref)[1] > 0


RECORDED = json.loads((Path(__file__).parent / "data" / "rounding_h100_sm90.json").read_text())


# fp8's hypotheses are the most (every subnormal answer applies): over ten seconds each, so `make test` runs
# them and `make test-fast` does not.
@pytest.mark.parametrize("label", [pytest.param(label, marks=pytest.mark.slow) if "e4m3" in label or "e5m2" in label
                                   else label for label in RECORDED["observed"]])
def test_recorded_h100_observations_fit_one_hypothesis(label):
    """The probe's D on an H100 (sm_90), recorded by case name: the cases recorded then single out
    one hypothesis (cases added since are not in the recording)."""
    t = MMA_TYPES[label]
    recorded = RECORDED["observed"][label]
    case_list = [c for c in cases(t) if c.name in recorded]
    assert len(case_list) == len(recorded)
    v = verdict(t, [float.fromhex(recorded[c.name]) for c in case_list], case_list)
    assert len(v.fitting) == 1


def test_recorded_h100_verdicts_are_the_books():
    """What book/numerics.ipynb says of the H100: fp32 accumulators truncate after 26 bits, all
    products of an instruction in one addition; fp8 is two fp16 additions and an fp32 add."""
    def fit(label):
        t = MMA_TYPES[label]
        recorded = RECORDED["observed"][label]
        case_list = [c for c in cases(t) if c.name in recorded]
        (h,) = verdict(t, [float.fromhex(recorded[c.name]) for c in case_list], case_list).fitting
        return h

    for label in ("fp16 -> fp32", "bf16 -> fp32"):
        assert fit(label) == Hypothesis("exact", 26, 16, "k", "first", "RZ", True)
    assert fit("tf32 -> fp32") == Hypothesis("exact", 26, 8, "k", "first", "RZ", True)
    assert fit("fp16 -> fp16").rounding == "RN"
    assert fit("e4m3 -> fp32") == Hypothesis("exact", 26, 16, "pairs", "fadd", "RZ", True)
    assert fit("int8 -> int32") == IntHypothesis("wraps")
