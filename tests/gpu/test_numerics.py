"""The numerics chapter on the GPU: the rounding probe runs and singles out one hypothesis per type,
the same one on every run; int8 sums are exact; the fp32 sums stay under tcgemm.engine.accuracy's rule."""
import numpy as np
import pytest

from tcgemm.engine.accuracy import tolerance
from tcgemm.errors import UnsupportedOnGPUError
from tcgemm.numerics.rounding import MMA_TYPES, cases, verdict
from tcgemm.numerics.gpu import rounding

pytestmark = pytest.mark.gpu

TYPES = list(MMA_TYPES.values())


def runnable(t):
    if reason := rounding.skipped(t):
        pytest.skip(reason)
    return t


@pytest.mark.parametrize("t", TYPES, ids=lambda t: t.label)
def test_probe_singles_out_one_hypothesis_on_every_run(t):
    runnable(t)
    case_list = cases(t)
    first, second = rounding.observe(t, case_list), rounding.observe(t, case_list)
    assert np.array_equal(first, second)
    v = verdict(t, first, case_list)
    assert v.disagreeing_cases == 0, "the 128 entries of D differ in some case: a fragment layout is wrong"
    assert len(v.fitting) == 1, f"{len(v.fitting)} hypotheses fit {t.label}"


def test_int8_sums_are_exact():
    t = runnable(MMA_TYPES["int8 -> int32"])
    rng = np.random.default_rng(3)
    A = rng.integers(-128, 128, (32, 4096)).astype(np.float64)
    B = rng.integers(-128, 128, (4096, 16)).astype(np.float64)
    assert np.array_equal(rounding.accumulate(t, A, B), A @ B)


@pytest.mark.parametrize("t", [t for t in TYPES if t.acc == "f32"], ids=lambda t: t.label)
def test_fp32_sums_stay_under_the_tolerance_rule(t):
    runnable(t)
    (errors,) = rounding.errors_vs_k(Ks=(64, 4096), M=32, N=32, types=[t]).values()
    for K, rel, _ in errors:
        assert 0 <= rel <= tolerance("float32", K)[0]


def test_accumulate_checks_shapes():
    t = runnable(MMA_TYPES["fp16 -> fp32"])
    with pytest.raises(ValueError, match="multiples of 16, 8, 16"):
        rounding.accumulate(t, np.zeros((16, 24)), np.zeros((24, 8)))


def test_missing_fp8_is_one_clear_line():
    t = MMA_TYPES["e4m3 -> fp32"]
    reason = rounding.skipped(t)
    if reason is None:
        pytest.skip("this GPU has fp8 mma.sync")
    assert "sm_89" in reason and "\n" not in reason
    with pytest.raises(UnsupportedOnGPUError, match="sm_89"):
        rounding.observe(t)


def test_fresh_accumulator_removes_the_bias():
    """On U[0,1) inputs the mma accumulator's sums lean low; FRESH_ACC's fp32 adds do not."""
    table = rounding.bias_vs_k(Ks=(4096,), M=256, N=256)
    (row,) = table.rows
    _, _, biased, _, fresh = row
    assert biased < 0
    assert abs(fresh) < abs(biased) / 4
