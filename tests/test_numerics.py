import numpy as np
import pytest

from tcgemm.numerics import emulated

ULP_TF32_AT_1 = 2.0 ** -10


@pytest.mark.parametrize("value, expected", [
    (1.0, 1.0),
    (1 + ULP_TF32_AT_1, 1 + ULP_TF32_AT_1),                      # representable: unchanged
    (1 + ULP_TF32_AT_1 / 2 - 2.0 ** -23, 1.0),                   # just under half an ulp: down
    (1 + ULP_TF32_AT_1 / 2, 1 + ULP_TF32_AT_1),                  # a tie: away from zero
    (-(1 + ULP_TF32_AT_1 / 2), -(1 + ULP_TF32_AT_1)),
    (2 - 2.0 ** -23, 2.0),                                       # carries into the exponent
    (np.finfo(np.float32).max, np.inf),
])
def test_tf32_rounding_of_single_values(value, expected):
    got = emulated.round_mantissa(np.array([value], dtype=np.float32))
    assert got.dtype == np.float32
    assert got[0] == np.float32(expected)


def test_non_finite_values_pass_unchanged():
    x = np.array([np.nan, np.inf, -np.inf], dtype=np.float32)
    got = emulated.round_mantissa(x)
    assert np.isnan(got[0]) and got[1] == np.inf and got[2] == -np.inf


def test_rounding_is_to_nearest_and_keeps_ten_bits():
    x = np.random.default_rng(0).uniform(-1, 1, 100_000).astype(np.float32)
    r = emulated.round_mantissa(x)
    mantissa = r.view(np.uint32) & np.uint32((1 << 23) - 1)
    assert not np.any(mantissa & np.uint32((1 << 13) - 1))       # only the top 10 bits survive
    ulp = np.exp2(np.floor(np.log2(np.abs(x.astype(np.float64)))) - 10)
    assert np.all(np.abs(r.astype(np.float64) - x) <= ulp / 2)
    assert np.array_equal(emulated.round_mantissa(x, 23), x)


def test_bad_arguments():
    with pytest.raises(TypeError, match="float32"):
        emulated.round_mantissa(np.ones(3))
    with pytest.raises(ValueError, match="mantissa_bits"):
        emulated.round_mantissa(np.ones(3, dtype=np.float32), 24)
    with pytest.raises(ValueError, match="mantissa_bits"):
        emulated.uniform_inputs_rel_fro(-1)


def test_tf32_estimate_for_uniform_inputs():
    assert emulated.uniform_inputs_rel_fro() == pytest.approx(2.61e-4, rel=1e-3)


@pytest.mark.parametrize("bits, K", [(10, 1024), (10, 64), (7, 512)])
def test_emulation_agrees_with_the_estimate(bits, K):
    got = emulated.emulated_rel_fro(128, 128, K, bits, seed=1)
    assert got == pytest.approx(emulated.uniform_inputs_rel_fro(bits), rel=0.05)


def test_fp32_inputs_lose_nothing():
    assert emulated.emulated_rel_fro(32, 32, 64, emulated.FP32_MANTISSA_BITS, seed=2) == 0.0
