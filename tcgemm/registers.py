"""Fragment values to the 32-bit register words an mma operand is made of, and back. Pure module.

NumPy has fp16, fp32 and the integer types but no bf16, tf32 or fp8, so those are encoded here
bit by bit: bf16 is the upper half of an fp32 word, tf32 an fp32 word whose low 13 mantissa bits
are zero, e4m3 and e5m2 the 8-bit formats of the PTX ISA (exponent bias 7 and 15). Encoding is
exact or refused: a value the type cannot hold raises, so a probe never runs on silently rounded
inputs. Element i of a lane sits in register i // (32 / bits), lowest bits first (PTX ISA: elements
are listed "low to high").
"""
from __future__ import annotations

import numpy as np

from tcgemm.errors import OperandError
from tcgemm.fragment_layouts import element_bits

_NUMPY = {"f16": np.float16, "f32": np.float32, "s8": np.int8, "s32": np.int32}
# 8-bit floats: (mantissa bits, exponent bias, largest finite value). e4m3 has no infinities and
# uses exponent 15 for normal numbers up to 448; e5m2 is IEEE-like (exponent 31: inf and NaN).
_MINIFLOATS = {"e4m3": (3, 7, 448.0), "e5m2": (2, 15, 57344.0)}
_FP32_DROPPED = {"bf16": 16, "tf32": 13}     # low fp32 mantissa bits the type does not have


def _inexact(values: np.ndarray, ok: np.ndarray, element_type: str) -> OperandError:
    bad = values[~ok]
    return OperandError(f"{bad.size} value(s) not exactly representable in {element_type}, "
                        f"e.g. {float(bad.ravel()[0])}")


def _minifloat_codes(values: np.ndarray, element_type: str) -> np.ndarray:
    mantissa, bias, largest = _MINIFLOATS[element_type]
    magnitude = np.abs(values)
    exponent = np.frexp(magnitude)[1] - 1                  # magnitude in [2^e, 2^(e+1))
    exponent = np.maximum(exponent, 1 - bias)              # subnormals share the smallest exponent
    significand = magnitude / np.exp2(exponent - mantissa)  # an integer when the value fits
    ok = np.isfinite(values) & (magnitude <= largest) & (significand == np.round(significand))
    if not ok.all():
        raise _inexact(values, ok, element_type)
    significand = significand.astype(np.int64)
    normal = significand >= 1 << mantissa
    biased = np.where(normal, exponent + bias, 0)
    fraction = significand - np.where(normal, 1 << mantissa, 0)
    return (np.signbit(values).astype(np.int64) << 7) | (biased << mantissa) | fraction


def _minifloat_values(codes: np.ndarray, element_type: str) -> np.ndarray:
    mantissa, bias, _ = _MINIFLOATS[element_type]
    codes = codes.astype(np.int64)
    biased, fraction = (codes & 0x7F) >> mantissa, codes & ((1 << mantissa) - 1)
    subnormal = fraction * np.exp2(1 - bias - mantissa)
    normal = (1 + fraction / (1 << mantissa)) * np.exp2(biased - bias)
    magnitude = np.where(biased == 0, subnormal, normal)
    if element_type == "e4m3":
        magnitude = np.where((codes & 0x7F) == 0x7F, np.nan, magnitude)
    else:
        magnitude = np.where(biased == 31, np.where(fraction == 0, np.inf, np.nan), magnitude)
    return np.where(codes & 0x80, -magnitude, magnitude)


def element_codes(values: np.ndarray, element_type: str) -> np.ndarray:
    """Each value's bit pattern, as unsigned integers of the element's width (exact or OperandError)."""
    if element_type in _MINIFLOATS:
        return _minifloat_codes(values, element_type).astype(np.uint8)
    if element_type in _FP32_DROPPED:
        words = values.astype(np.float32).view(np.uint32)
        dropped = _FP32_DROPPED[element_type]
        ok = (values.astype(np.float32) == values) & ((words & np.uint32((1 << dropped) - 1)) == 0)
        if not ok.all():
            raise _inexact(values, ok, element_type)
        return (words >> np.uint32(16)).astype(np.uint16) if element_type == "bf16" else words
    if element_type not in _NUMPY:
        element_bits(element_type)                          # raises, naming the known types
    typed = values.astype(_NUMPY[element_type])
    ok = typed.astype(np.float64) == values
    if not ok.all():
        raise _inexact(values, ok, element_type)
    return typed.view(f"u{typed.itemsize}")


def to_registers(values, element_type: str) -> np.ndarray:
    """(..., elements) values -> (..., registers) uint32 words, packed as the mma reads them."""
    values = np.asarray(values, dtype=np.float64)
    per_register = 32 // element_bits(element_type)
    if values.shape[-1] % per_register:
        raise OperandError(f"{values.shape[-1]} {element_type} elements per lane do not fill whole "
                           f"registers of {per_register}")
    codes = element_codes(values, element_type)
    return np.ascontiguousarray(codes).view(np.uint32)


def element_values(codes, element_type: str) -> np.ndarray:
    """Bit patterns (unsigned integers of the element's width; f16, f32, s8 and s32 may also come as
    their own numpy types) -> float64 values; inverse of element_codes."""
    codes = np.asarray(codes)
    if element_type in _MINIFLOATS:
        return _minifloat_values(codes, element_type)
    if element_type in ("bf16", "tf32"):
        words = codes.astype(np.uint32) << np.uint32(16) if element_type == "bf16" else codes
        with np.errstate(invalid="ignore"):     # a signaling-NaN pattern becomes a quiet NaN, silently
            return words.view(np.float32).astype(np.float64)
    if element_type not in _NUMPY:
        element_bits(element_type)
    return codes.view(_NUMPY[element_type]).astype(np.float64)


def from_registers(words, element_type: str) -> np.ndarray:
    """(..., registers) uint32 words -> (..., elements) float64 values; inverse of to_registers."""
    words = np.ascontiguousarray(words, dtype=np.uint32)
    return element_values(words.view(f"u{element_bits(element_type) // 8}"), element_type)
