"""Inputs rounded to fewer mantissa bits, emulated on the CPU, and the error that causes in a GEMM.
Pure module.

TF32, the Tensor Cores' mode for fp32 inputs, keeps fp32's 8-bit exponent and 10 of its 23 explicit
mantissa bits; the products are summed in fp32.
"""
from __future__ import annotations

import math

import numpy as np

FP32_MANTISSA_BITS = 23
TF32_MANTISSA_BITS = 10


def round_mantissa(x, mantissa_bits: int = TF32_MANTISSA_BITS) -> np.ndarray:
    """fp32 values rounded to ``mantissa_bits`` explicit mantissa bits, to nearest with ties away
    from zero (PTX's ``cvt.rna.tf32.f32``), still stored as fp32. NaN and Inf pass unchanged; a
    value that rounds past the largest finite fp32 becomes Inf."""
    if not 0 <= mantissa_bits <= FP32_MANTISSA_BITS:
        raise ValueError(f"mantissa_bits must be in 0..{FP32_MANTISSA_BITS}, got {mantissa_bits}")
    x = np.asarray(x)
    if x.dtype != np.float32:
        raise TypeError(f"round_mantissa takes float32 values, got {x.dtype}")
    dropped = FP32_MANTISSA_BITS - mantissa_bits
    if dropped == 0:
        return x.copy()
    # Adding half of the dropped part's weight to the bit pattern carries into the kept bits
    # (and, for a mantissa of all ones, into the exponent) exactly when the value rounds up.
    bits = x.view(np.uint32) + np.uint32(1 << (dropped - 1))
    rounded = (bits & np.uint32(0xFFFFFFFF ^ ((1 << dropped) - 1))).view(np.float32)
    return np.where(np.isfinite(x), rounded, x)


def uniform_inputs_rel_fro(mantissa_bits: int = TF32_MANTISSA_BITS) -> float:
    """Expected relative Frobenius error of C = A B when the entries of A and B, independent and
    uniform on [-1, 1), are rounded to nearest with ``mantissa_bits`` and the products summed exactly.

    An input a has the rounding error e(a), uniform over one unit in the last place: on |a| in
    [2^-j, 2^-j+1), which has probability 2^-j, E[e^2] = (2^(-j-m))^2 / 12. Summed over j >= 1 that is
    E[e^2] = 2^-2m / 84, against E[a^2] = 1/3. To first order C's error is sum_k (e(a_k) b_k + a_k e(b_k)),
    independent terms, so the ratio of expected squares is 2 E[e^2] / E[a^2] = 2^-2m / 14 for every K.
    """
    if mantissa_bits < 0:
        raise ValueError(f"mantissa_bits must be >= 0, got {mantissa_bits}")
    return 2.0 ** -mantissa_bits / math.sqrt(14)


def emulated_rel_fro(M: int, N: int, K: int, mantissa_bits: int = TF32_MANTISSA_BITS,
                     seed: int | None = None) -> float:
    """Relative Frobenius error of C = A B with A (M x K) and B (K x N) drawn in fp32 uniformly from
    [-1, 1) and rounded by ``round_mantissa``, against the unrounded product; both sums in fp64, so
    the number is the inputs' rounding alone."""
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    B = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    exact = A.astype(np.float64) @ B.astype(np.float64)
    rounded = (round_mantissa(A, mantissa_bits).astype(np.float64)
               @ round_mantissa(B, mantissa_bits).astype(np.float64))
    return float(np.linalg.norm(rounded - exact) / np.linalg.norm(exact))
