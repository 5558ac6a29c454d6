"""The shared-memory bank model: which warp accesses conflict, and by how much. Pure module (numpy).

Shared memory has 32 banks, each 4 bytes wide: byte ``a`` lives in bank ``(a // 4) % 32``.
A warp-wide instruction is served in *phases*, each a group of lanes whose requests the hardware
considers together:

* accesses of 1, 2 or 4 bytes per lane: one phase of all 32 lanes;
* 8 bytes per lane: two phases, lanes 0-15 and 16-31;
* 16 bytes per lane: four phases, lanes 0-7, 8-15, 16-23, 24-31;
* ``ldmatrix.x{1,2,4}`` and ``stmatrix.x{1,2,4}`` (sm_90 and later): one phase per 8x8 matrix;
  lanes 8j..8j+7 give the 8 row addresses (16 bytes each) of matrix j. Lanes past ``8 * num`` are
  not used. ``.trans`` changes only which register gets which element, not the addresses.

A lane touches every 4-byte word its access covers (``width // 4`` consecutive words, or one word for
narrower accesses). Within a phase, lanes that touch the same word share it (a broadcast); distinct
words in one bank are served one per *wavefront*. So a phase needs as many wavefronts as the largest
number of distinct words requested from any one bank. The ideal is one wavefront per phase that has
an active lane; the excess is the number of bank conflicts.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tcgemm.smem.notation import OFFSET_LIMIT, check_offset
from tcgemm.table import Table

BANKS = 32
BANK_BYTES = 4
WARP = 32

WIDTHS = (1, 2, 4, 8, 16)
KINDS = ("ld", "st", "ldmatrix", "stmatrix")
MATRIX_KINDS = ("ldmatrix", "stmatrix")  # one phase per 8x8 matrix, whose 8 lanes give its row addresses
LDMATRIX_NUMS = (1, 2, 4)
LDMATRIX_ROW_BYTES = 16
INACTIVE = -1


def _int_array(values, what: str) -> np.ndarray:
    array = np.asarray(values)
    if array.dtype.kind not in "iu":
        if array.dtype.kind != "f" or not np.all(np.isfinite(array)) or np.any(array != np.round(array)):
            raise ValueError(f"{what} must be integers, got {array.dtype} values")
    return array.astype(np.int64)


def bank_of(byte_address):
    """Bank of each byte address (an int for an int, an array for an array)."""
    address = _int_array(byte_address, "byte addresses")
    if np.any(address < 0):
        raise ValueError("byte addresses must be non-negative")
    bank = (address // BANK_BYTES) % BANKS
    return int(bank) if bank.ndim == 0 else bank


@dataclass(frozen=True, eq=False)
class Access:
    """One warp-wide shared-memory instruction: a byte address per lane, -1 for an inactive lane.

    ``kind`` "ldmatrix" or "stmatrix" needs ``width=16`` and ``ldmatrix_num`` (the number of
    matrices) in (1, 2, 4); its lanes from ``8 * ldmatrix_num`` on are ignored, whatever address
    they hold.
    """

    addresses: np.ndarray
    width: int
    kind: str = "ld"
    ldmatrix_num: int | None = None

    def __post_init__(self):
        addresses = _int_array(self.addresses, "addresses")
        if addresses.shape != (WARP,):
            raise ValueError(f"addresses must have shape (32,), one per lane; got shape {addresses.shape}")
        if self.width not in WIDTHS:
            raise ValueError(f"width must be one of {WIDTHS} bytes, got {self.width!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind in MATRIX_KINDS:
            if self.ldmatrix_num not in LDMATRIX_NUMS:
                raise ValueError(f"ldmatrix_num must be one of {LDMATRIX_NUMS}, got {self.ldmatrix_num!r}")
            if self.width != LDMATRIX_ROW_BYTES:
                raise ValueError(f"{self.kind} rows are 16 bytes: width must be 16, got {self.width}")
        elif self.ldmatrix_num is not None:
            raise ValueError(f"ldmatrix_num is only for kinds {MATRIX_KINDS}, not {self.kind!r}")
        if np.any(addresses < INACTIVE):
            raise ValueError("addresses must be non-negative, or -1 for an inactive lane")
        active = self._used_lanes() & (addresses != INACTIVE)
        misaligned = np.flatnonzero(active & (addresses % self.width != 0))
        if misaligned.size:
            lane = int(misaligned[0])
            raise ValueError(f"lane {lane}: address {int(addresses[lane])} is not aligned to width {self.width}")
        addresses.setflags(write=False)
        object.__setattr__(self, "addresses", addresses)

    def _used_lanes(self) -> np.ndarray:
        used = np.ones(WARP, dtype=bool)
        if self.kind in MATRIX_KINDS:
            used[8 * self.ldmatrix_num:] = False
        return used

    @property
    def active(self) -> np.ndarray:
        """(32,) bool: the lanes whose address the instruction uses."""
        return self._used_lanes() & (self.addresses != INACTIVE)

    def words(self, lane: int) -> np.ndarray:
        """The 4-byte word indices (address // 4) that ``lane`` touches."""
        first = int(self.addresses[lane]) // BANK_BYTES
        return np.arange(first, first + max(1, self.width // BANK_BYTES))


def phase_name(p: int) -> str:
    """How a reader sees phase ``p`` (an index of ``phases``): numbered from 0, as lanes, banks and
    ldmatrix's matrices are, in the explorer's text and table and in draw_banks' figures alike."""
    return f"phase {p}"


def _phase_size(access: Access) -> int:
    if access.kind in MATRIX_KINDS:
        return 8
    return {8: 16, 16: 8}.get(access.width, WARP)


def phases(access: Access) -> list[np.ndarray]:
    """Active lane indices of every phase of the instruction, in order (a phase may be empty)."""
    size = _phase_size(access)
    count = access.ldmatrix_num if access.kind in MATRIX_KINDS else WARP // size
    active = access.active
    return [np.flatnonzero(active[j * size:(j + 1) * size]) + j * size for j in range(count)]


@dataclass(frozen=True, eq=False)
class PhaseReport:
    lanes: np.ndarray
    banks_per_lane: list[tuple[int, ...]]
    words_per_bank: np.ndarray  # (32,) distinct words requested from each bank
    wavefronts: int


@dataclass(frozen=True, eq=False)
class Report:
    phases: list[PhaseReport]
    wavefronts: int
    ideal: int
    conflicts: int
    ways: int  # the worst phase's largest number of distinct words in one bank

    def __str__(self) -> str:
        return (f"{len(self.phases)} phase(s), {self.wavefronts} wavefront(s), ideal {self.ideal}: "
                f"{self.conflicts} conflict(s), {self.ways}-way")


def _analyze_phase(access: Access, lanes: np.ndarray) -> PhaseReport:
    words_in_bank: list[set[int]] = [set() for _ in range(BANKS)]
    banks_per_lane = []
    for lane in lanes:
        words = access.words(int(lane))
        banks = words % BANKS
        banks_per_lane.append(tuple(int(b) for b in banks))
        for word, bank in zip(words, banks):
            words_in_bank[bank].add(int(word))
    words_per_bank = np.array([len(words) for words in words_in_bank])
    return PhaseReport(lanes, banks_per_lane, words_per_bank, int(words_per_bank.max()))


def analyze(access: Access) -> Report:
    reports = [_analyze_phase(access, lanes) for lanes in phases(access)]
    wavefronts = sum(r.wavefronts for r in reports)
    ideal = sum(1 for r in reports if r.lanes.size)
    ways = max((r.wavefronts for r in reports), default=0)
    return Report(reports, wavefronts, ideal, wavefronts - ideal, ways)


def analysis_table(cases: dict[str, Access]) -> Table:
    """``analyze`` of each named access as a Table: phases, wavefronts, the ideal, conflicts, ways."""
    reports = {name: analyze(access) for name, access in cases.items()}
    return Table(["Access", "Phases", "Wavefronts", "Ideal", "Conflicts", "Ways"],
                 [[name, len(r.phases), r.wavefronts, r.ideal, r.conflicts, r.ways] for name, r in reports.items()])


# ---------------------------------------------------------------------------------------------
# Layouts: (row, col) in elements of a 2-D tile -> byte offset in shared memory.


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
        row = _int_array(row, "rows")
        col = _int_array(col, "columns")
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


SWIZZLE_TOP_BIT = 31  # offsets are below 2^31; a swizzle moves bits below bit 31 only


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
        offset = _int_array(offset, "offsets")
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


# ---------------------------------------------------------------------------------------------
# Accesses the kernels make.


def strided_access(stride_bytes: int, width: int = 4, kind: str = "ld", base: int = 0) -> Access:
    """Lane i at ``base + i * stride_bytes``."""
    return Access(base + stride_bytes * np.arange(WARP), width, kind)


def _lane_addresses(layout: Layout, rows, cols) -> np.ndarray:
    rows = _int_array(rows, "rows").ravel()
    cols = _int_array(cols, "columns").ravel()
    if rows.shape != cols.shape:
        raise ValueError(f"rows and cols must have the same length, got {rows.size} and {cols.size}")
    if rows.size > WARP:
        raise ValueError(f"at most 32 lanes, got {rows.size} coordinates")
    addresses = np.full(WARP, INACTIVE, dtype=np.int64)
    addresses[:rows.size] = layout(rows, cols)
    return addresses


def layout_access(layout: Layout, rows, cols, width: int, kind: str = "ld") -> Access:
    """Lane i accesses ``width`` bytes at element (rows[i], cols[i]) of ``layout``.
    Fewer than 32 coordinates leave the remaining lanes inactive."""
    return Access(_lane_addresses(layout, rows, cols), width, kind)


def ldmatrix_access(layout: Layout, rows, cols, kind: str = "ldmatrix") -> Access:
    """ldmatrix (or stmatrix) whose lane i gives the row address of element (rows[i], cols[i]).

    8, 16 or 32 coordinates make an .x1, .x2 or .x4; the remaining lanes are unused."""
    count = np.size(rows)
    if count not in (8, 16, 32):
        raise ValueError(f"{kind} takes 8, 16 or 32 row addresses (.x1/.x2/.x4), got {count}")
    return Access(_lane_addresses(layout, rows, cols), LDMATRIX_ROW_BYTES, kind, count // 8)


def ldmatrix_tile(layout: Layout, row0: int = 0, col0: int = 0, num: int = 4) -> Access:
    """The ldmatrix.x{num} that loads one mma.m16n8k16 operand tile whose corner is (row0, col0).

    A chunk is 16 bytes (8 fp16). Matrices in lane order:
      x4 (A, 16 rows x 2 chunks): rows 0-7 chunk 0, rows 8-15 chunk 0, rows 0-7 chunk 1, rows 8-15 chunk 1;
      x2 (B stored k-contiguous, 8 rows x 2 chunks): chunk 0, chunk 1;
      x1: 8 rows x 1 chunk.
    """
    if num not in LDMATRIX_NUMS:
        raise ValueError(f"num must be one of {LDMATRIX_NUMS}, got {num!r}")
    chunk_elems = LDMATRIX_ROW_BYTES // layout.elem_bytes
    row_blocks = 2 if num == 4 else 1
    lane = np.arange(8 * num)
    matrix = lane // 8
    rows = row0 + 8 * (matrix % row_blocks) + lane % 8
    cols = col0 + chunk_elems * (matrix // row_blocks)
    return ldmatrix_access(layout, rows, cols)
