"""Kernel D1's input types on the host: real values to the arrays the kernel takes, and back. Pure module.

NumPy and CuPy have fp16, fp32 and int8 but no bf16 or fp8, so Kernel D1 takes bf16 and fp8 operands
as their bit patterns (uint16, uint8). `encode` makes those arrays from any real values: each value is
rounded to the nearest value of the type (ties to even, tcgemm.numerics.rounding.quantize) and encoded bit by
bit (tcgemm.registers); a value beyond the type's range is refused, never clipped. `decode`
gives the values the kernel multiplies. tf32 operands stay fp32 arrays: the kernel rounds each to tf32
as it loads it (to nearest, ties away from zero: cvt.rna, tcgemm.numerics.emulated.round_mantissa), so decode
rounds too, and encode returns values that are tf32 already.
"""
from __future__ import annotations

import numpy as np

from tcgemm.engine.catalog import ELEMENTS
from tcgemm.engine.kernel_types import Element
from tcgemm.errors import OperandError
from tcgemm.registers import element_codes, element_values
from tcgemm.numerics.emulated import round_mantissa
from tcgemm.numerics.rounding import FORMATS, quantize

INT8_RANGE = (-128, 127)


def element(name: str) -> Element:
    """The entry of tcgemm.engine.catalog.ELEMENTS called `name`; ValueError naming the types otherwise."""
    if name not in ELEMENTS:
        raise ValueError(f"unknown input type {name!r}; Kernel D1 takes {', '.join(ELEMENTS)}")
    return ELEMENTS[name]


def encode(values, name: str) -> np.ndarray:
    """Real values -> the array Kernel D1 takes for input type `name`, of the same shape: fp16 as
    float16, bf16 as uint16 bits, tf32 as float32 (low 13 mantissa bits zero), int8 as int8, e4m3 and
    e5m2 as uint8 bits. Rounded to nearest, ties to even; OperandError for a value out of range."""
    e = element(name)
    values = np.asarray(values, dtype=np.float64)
    if not np.isfinite(values).all():
        raise OperandError(f"{np.count_nonzero(~np.isfinite(values))} value(s) are NaN or infinite; "
                           f"Kernel D1 takes finite {e.name} values")
    rounded = quantize(values, e.ptx)      # int8: clipped to the range, so checked before it
    if e.ptx == "s8":
        (low, high), checked = INT8_RANGE, np.round(values)
    else:
        high = float(FORMATS[e.ptx].max_finite)
        low, checked = -high, rounded
    outside = (checked < low) | (checked > high)
    if outside.any():
        raise OperandError(f"{np.count_nonzero(outside)} value(s) outside {e.name}'s range {low:g} to {high:g}, "
                           f"e.g. {float(values[outside].ravel()[0])}")
    return element_codes(rounded, e.ptx).view(e.dtype)


def decode(x, name: str) -> np.ndarray:
    """The values Kernel D1 multiplies for an array `x` of input type `name` (encode's output, or any
    fp32 array for tf32), as float64."""
    e = element(name)
    x = np.asarray(x)
    if x.dtype != np.dtype(e.dtype):
        raise OperandError(f"{e.name} operands are {e.dtype} arrays, got {x.dtype}")
    if e.ptx == "tf32":
        return round_mantissa(x).astype(np.float64)
    return element_values(x, e.ptx)
