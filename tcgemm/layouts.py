"""Shared-memory layouts, as CuTe has them: a Layout maps tile coordinates (row, col), in elements, to a
byte offset. Row-major, padded, Kernel 2.0's XOR-permuted chunks, CuTe's Swizzle<B,M,S>, and any
function. The bank model (tcgemm.smem.banks) counts the conflicts of accesses to them; wgmma's and
TMA's canonical layouts (tcgemm.canonical) are built from them. Pure module (numpy).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

WIDTHS = (1, 2, 4, 8, 16)   # bytes of an element, and of one lane's shared-memory access
OFFSET_LIMIT = 2 ** 31      # every offset, before a swizzle and after, lies in 0..2^31-1
SWIZZLE_TOP_BIT = 31        # so a swizzle moves bits below bit 31 only


def int_array(values, what: str) -> np.ndarray:
    """``values`` as int64; ValueError naming ``what`` if any is not a whole number."""
    array = np.asarray(values)
    if array.dtype.kind not in "iu":
        if array.dtype.kind != "f" or not np.all(np.isfinite(array)) or np.any(array != np.round(array)):
            raise ValueError(f"{what} must be integers, got {array.dtype} values")
    return array.astype(np.int64)


def check_offset(value: int, row: int, col: int) -> int:
    """``value``, the offset of element (row, col), if it lies in 0..2^31-1; ValueError otherwise."""
    if not 0 <= value < OFFSET_LIMIT:
        raise ValueError(f"offset {value} of element ({row}, {col}) is outside 0..2^31-1")
    return value


class Layout:
    """A named map from tile coordinates (row, col), in elements, to a byte offset in 0..2^31-1.

    ``row_elems``, when given, is the tile's width: columns outside ``[0, row_elems)`` are refused.
    """

    def __init__(self, name: str, offset: Callable, elem_bytes: int, row_elems: int | None = None):
        if elem_bytes not in WIDTHS:
            raise ValueError(f"elem_bytes must be one of {WIDTHS}, got {elem_bytes!r}")
        if row_elems is not None and row_elems < 1:
            raise ValueError(f"row_elems must be positive, got {row_elems!r}")
        self.name = name
        self.elem_bytes = elem_bytes
        self.row_elems = row_elems
        self._offset = offset

    def __call__(self, row, col):
        row = int_array(row, "rows")
        col = int_array(col, "columns")
        if np.any(row < 0) or np.any(col < 0):
            raise ValueError(f"{self.name}: rows and columns must be non-negative")
        if self.row_elems is not None and np.any(col >= self.row_elems):
            raise ValueError(f"{self.name}: columns must be below row_elems={self.row_elems}")
        offset = np.asarray(self._offset(row, col), dtype=np.int64)
        outside = np.flatnonzero(((offset < 0) | (offset >= OFFSET_LIMIT)).ravel())
        if outside.size:
            rows, cols = (np.broadcast_to(a, offset.shape).ravel() for a in (row, col))
            first = outside[0]
            check_offset(int(offset.ravel()[first]), int(rows[first]), int(cols[first]))
        return int(offset) if offset.ndim == 0 else offset

    def __repr__(self) -> str:
        return f"Layout({self.name!r})"


def _check_non_negative(**values):
    for key, value in values.items():
        if not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{key} must be a non-negative integer, got {value!r}")


def row_major(row_elems: int, elem_bytes: int) -> Layout:
    _check_non_negative(row_elems=row_elems)
    row_bytes = row_elems * elem_bytes
    return Layout(f"row-major ({row_bytes} B rows)",
                  lambda r, c: r * row_bytes + c * elem_bytes, elem_bytes, row_elems)


def padded(row_elems: int, elem_bytes: int, pad_bytes: int) -> Layout:
    """Row-major with ``pad_bytes`` of unused space after every row."""
    _check_non_negative(row_elems=row_elems, pad_bytes=pad_bytes)
    row_bytes = row_elems * elem_bytes
    stride = row_bytes + pad_bytes
    return Layout(f"padded ({row_bytes} B rows + {pad_bytes} B)",
                  lambda r, c: r * stride + c * elem_bytes, elem_bytes, row_elems)


def xor_chunk(smem_row, chunk, tile_chunks: int = 4):
    """Kernel 2.0's permutation: where logical 16-byte chunk ``chunk`` of shared-memory row
    ``smem_row`` is stored. ``chunk ^ (smem_row % tile_chunks)``."""
    return np.bitwise_xor(chunk, np.asarray(smem_row) % tile_chunks)


def xor_permuted(tile_chunks: int = 4, row_chunks: int = 8, chunk_bytes: int = 16,
                 elem_bytes: int = 2) -> Layout:
    """Kernel 2.0's permuted layout (CUTLASS's, as Patterson's worklog uses it) of a tile whose rows are
    ``tile_chunks`` chunks of ``chunk_bytes``.

    Shared memory rows are ``row_chunks`` chunks (8 x 16 B = 128 B: all 32 banks), so each holds
    ``row_chunks // tile_chunks`` consecutive tile rows side by side (two 64-byte K-slices in
    Kernel 2.0). Tile row ``r`` lands in shared row ``r // 2``, logical chunk ``(r % 2) * 4 + k_chunk``,
    stored at chunk ``xor_chunk(r // 2, logical)``. In address bits of the byte offset
    (bits 0-3: byte in chunk, 4-5: k chunk, 6: which tile row, 7 and up: shared row) that is
    "bits 4-5 ^= bits 7-8", i.e. Swizzle<2,4,3> on byte offsets (Swizzle<2,3,3> on fp16 element
    offsets). Bit 6 is left alone: both tile rows of a shared row get the same XOR.
    """
    for key, value in dict(tile_chunks=tile_chunks, row_chunks=row_chunks, chunk_bytes=chunk_bytes).items():
        if not isinstance(value, (int, np.integer)) or value < 1 or value & (value - 1):
            raise ValueError(f"{key} must be a positive power of two, got {value!r}")
    if row_chunks % tile_chunks:
        raise ValueError(f"tile_chunks={tile_chunks} must divide row_chunks={row_chunks}")
    if chunk_bytes % elem_bytes:
        raise ValueError(f"elem_bytes={elem_bytes} must divide chunk_bytes={chunk_bytes}")
    chunk_elems = chunk_bytes // elem_bytes
    rows_per_smem_row = row_chunks // tile_chunks

    def offset(r, c):
        smem_row = r // rows_per_smem_row
        logical = (r % rows_per_smem_row) * tile_chunks + c // chunk_elems
        stored = xor_chunk(smem_row, logical, tile_chunks)
        return (smem_row * row_chunks + stored) * chunk_bytes + (c % chunk_elems) * elem_bytes

    return Layout(f"XOR-permuted ({tile_chunks} chunks per row, chunk ^ row % {tile_chunks})",
                  offset, elem_bytes, tile_chunks * chunk_elems)


@dataclass(frozen=True)
class Swizzle:
    """CuTe's Swizzle<B, M, S>: XOR the B bits at position M + S (S > 0) into the B bits at M.

    CuTe's definition: ``yyy = ((1 << B) - 1) << (M + max(0, S))``;
    ``offset ^ shiftr(offset & yyy, S)``, a left shift when S < 0. It is unit-agnostic: CuTe
    composes it with a layout's codomain, i.e. element offsets, so Swizzle<3,3,3> on fp16
    elements is Swizzle<3,4,3> on bytes.
    """

    bits: int
    base: int
    shift: int

    def __post_init__(self):
        if self.bits < 0 or self.base < 0:
            raise ValueError(f"Swizzle bits and base must be non-negative, got B={self.bits}, M={self.base}")
        if abs(self.shift) < self.bits:
            raise ValueError(f"Swizzle needs |S| >= B so the bit ranges don't overlap, got B={self.bits}, S={self.shift}")
        if self.bits + self.base + abs(self.shift) > SWIZZLE_TOP_BIT:
            raise ValueError(f"Swizzle<{self.bits},{self.base},{self.shift}> reaches past bit {SWIZZLE_TOP_BIT - 1}: "
                             f"B + M + |S| must be at most {SWIZZLE_TOP_BIT}")

    @property
    def name(self) -> str:
        return f"Swizzle<{self.bits},{self.base},{self.shift}>"

    def __call__(self, offset):
        offset = int_array(offset, "offsets")
        yyy = ((1 << self.bits) - 1) << (self.base + max(0, self.shift))
        moved = offset & yyy
        moved = moved >> self.shift if self.shift >= 0 else moved << -self.shift
        result = offset ^ moved
        return int(result) if result.ndim == 0 else result


def swizzle(B: int, M: int, S: int) -> Swizzle:
    return Swizzle(B, M, S)


def swizzle_layout(B: int, M: int, S: int, row_elems: int, elem_bytes: int, unit: str = "element") -> Layout:
    """Row-major tile with Swizzle<B,M,S> applied to its ``unit`` offsets ("element", CuTe's
    convention, or "byte")."""
    if unit not in ("element", "byte"):
        raise ValueError(f"unit must be 'element' or 'byte', got {unit!r}")
    _check_non_negative(row_elems=row_elems)
    sw = Swizzle(B, M, S)
    if unit == "element":
        def offset(r, c):
            return sw(r * row_elems + c) * elem_bytes
    else:
        def offset(r, c):
            return sw((r * row_elems + c) * elem_bytes)
    return Layout(f"{sw.name} on {unit}s ({row_elems * elem_bytes} B rows)", offset, elem_bytes, row_elems)


def custom(fn: Callable, name: str, elem_bytes: int = 2, row_elems: int | None = None) -> Layout:
    """Any vectorised ``fn(row, col) -> byte offset`` as a layout."""
    return Layout(name, fn, elem_bytes, row_elems)
