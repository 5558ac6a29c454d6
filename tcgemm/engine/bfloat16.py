"""bf16 held as uint16 bit patterns (CuPy has no bf16 dtype), for NumPy and CuPy arrays alike (they
share the operators used here). Pure module.

A bf16 value is the top 16 bits of the fp32 with the same value: decoding shifts them back up;
encoding rounds the fp32's low 16 bits away to nearest, ties to even (the rounding of cvt.rn.bf16.f32).
"""
from __future__ import annotations

import numpy as np


def bits_of(x):
    """fp32 (or narrower float) values -> their bf16 bit patterns (uint16), rounded to nearest even.
    Finite values only: a NaN's payload is not kept."""
    u = x.astype(np.float32).view(np.uint32)
    return ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(np.uint16)


def values_of(bits):
    """bf16 bit patterns (uint16) -> their values as fp32, exactly."""
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


NAN_BITS = 0x7FC0      # a quiet NaN, to poison outputs
