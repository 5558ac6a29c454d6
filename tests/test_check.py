import numpy as np
import pytest

from tcgemm.check import compare


@pytest.fixture
def ref():
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (64, 96))
    b = rng.uniform(-1, 1, (96, 32))
    return a @ b


def test_exact_result_passes(ref):
    c = compare(ref.astype(np.float32), ref)
    assert c.passed and c.rel_fro < 1e-6 and str(c).startswith("PASS")


def test_nan_never_passes(ref):
    out = ref.copy()
    out[3, 4] = np.nan
    c = compare(out, ref)
    assert not c.passed and c.nonfinite == 1 and "NaN" in str(c)


def test_one_wrong_element_fails_although_frobenius_is_small():
    rng = np.random.default_rng(2)
    ref = rng.uniform(-1, 1, (512, 512)) @ rng.uniform(-1, 1, (512, 512))
    out = ref.copy()
    out[100, 200] += 5e-3 * np.abs(ref).max()
    c = compare(out, ref)
    assert c.rel_fro < c.tol_fro  # the Frobenius norm alone would let it through
    assert not c.passed and "(100, 200)" in c.reason


def test_fp16_accumulation_gets_a_looser_tolerance(ref):
    noisy = ref * (1 + 2e-3)
    assert not compare(noisy, ref, "float32").passed
    assert compare(noisy, ref, "float16").passed


def test_zero_reference_is_refused():
    with pytest.raises(ValueError, match="zeros"):
        compare(np.zeros((4, 4)), np.zeros((4, 4)))


def test_shape_and_precision_errors(ref):
    with pytest.raises(ValueError, match="shape"):
        compare(ref[:, :-1], ref)
    with pytest.raises(ValueError, match="precision"):
        compare(ref, ref, "bfloat16")
