import numpy as np
import pytest

from tcgemm.engine.accuracy import compare_outputs


@pytest.fixture
def ref():
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (64, 96))
    b = rng.uniform(-1, 1, (96, 32))
    return a @ b


def test_exact_result_passes(ref):
    c = compare_outputs(ref.astype(np.float32), ref)
    assert c.passed and c.rel_fro < 1e-6 and str(c).startswith("PASS")


def test_nan_never_passes(ref):
    out = ref.copy()
    out[3, 4] = np.nan
    c = compare_outputs(out, ref)
    assert not c.passed and c.nonfinite == 1 and "NaN" in str(c)


def test_one_wrong_element_fails_although_frobenius_is_small():
    rng = np.random.default_rng(2)
    ref = rng.uniform(-1, 1, (512, 512)) @ rng.uniform(-1, 1, (512, 512))
    out = ref.copy()
    out[100, 200] += 5e-3 * np.abs(ref).max()
    c = compare_outputs(out, ref)
    assert c.rel_fro < c.tol_fro  # the Frobenius norm alone would let it through
    assert not c.passed and "(100, 200)" in c.reason


def test_fp16_accumulation_gets_a_looser_tolerance(ref):
    noisy = ref * (1 + 2e-3)
    assert not compare_outputs(noisy, ref, "float32").passed
    assert compare_outputs(noisy, ref, "float16").passed


def test_zero_reference_is_refused():
    with pytest.raises(ValueError, match="zeros"):
        compare_outputs(np.zeros((4, 4)), np.zeros((4, 4)))


def test_shape_and_precision_errors(ref):
    with pytest.raises(ValueError, match="shape"):
        compare_outputs(ref[:, :-1], ref)
    with pytest.raises(ValueError, match="precision"):
        compare_outputs(ref, ref, "bfloat16")


def test_exact_comparison_finds_one_wrong_integer():
    from tcgemm.engine.accuracy import compare_exact

    ref = np.array([[40000, -3], [7, 1]], dtype=np.int32)
    good = compare_exact(ref.copy(), ref)
    assert good.passed and str(good) == "PASS: bit-exact, max |ref| 40,000, beyond int16"
    out = ref.copy()
    out[1, 0] += 1
    bad = compare_exact(out, ref)
    assert not bad.passed and bad.mismatches == 1
    assert str(bad) == "FAIL: 1 of 4 elements differ; first at (1, 0): 8 instead of 7"
    with pytest.raises(ValueError, match="dtype"):
        compare_exact(ref.astype(np.int64), ref)


def test_tolerance_rule_follows_the_measured_growth_with_k():
    """fp32 accumulators truncate: the tolerance grows as K once u K passes u sqrt(K) (K > 400);
    fp16 accumulators round to nearest: it grows as sqrt(K)."""
    from tcgemm.engine.accuracy import MARGIN, tolerance

    fro, worst = tolerance("float32", 4096)
    assert tolerance("float32", 4 * 4096) == pytest.approx((4 * fro, 4 * worst))
    assert fro == pytest.approx(MARGIN * 2.0 ** -24 * 0.05 * 4096) and worst == 2 * fro
    assert tolerance("float32", 64)[0] == pytest.approx(MARGIN * 2.0 ** -24 * 8)     # the sqrt(K) floor
    assert tolerance("float16", 4 * 4096)[0] == pytest.approx(2 * tolerance("float16", 4096)[0])
    assert tolerance("float32") == (1e-4, 1e-3)      # without K: the fixed tolerances
    with pytest.raises(ValueError, match="positive"):
        tolerance("float32", 0)
    with pytest.raises(ValueError, match="precision"):
        tolerance("bfloat16", 64)


def test_compare_with_k_uses_the_rule(ref):
    from tcgemm.engine.accuracy import tolerance

    c = compare_outputs(ref.astype(np.float32), ref, "float32", K=96)
    assert (c.tol_fro, c.tol_max) == tolerance("float32", 96) and c.passed
