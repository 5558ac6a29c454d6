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

import numpy as np

from tcgemm.layouts import WIDTHS, Layout, int_array
from tcgemm.table import Table

BANKS = 32
BANK_BYTES = 4
WARP = 32

KINDS = ("ld", "st", "ldmatrix", "stmatrix")
MATRIX_KINDS = ("ldmatrix", "stmatrix")  # one phase per 8x8 matrix, whose 8 lanes give its row addresses
LDMATRIX_NUMS = (1, 2, 4)
LDMATRIX_ROW_BYTES = 16
INACTIVE = -1


def bank_of(byte_address):
    """Bank of each byte address (an int for an int, an array for an array)."""
    address = int_array(byte_address, "byte addresses")
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
        addresses = int_array(self.addresses, "addresses")
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
# Accesses the kernels make, to tiles laid out as tcgemm.layouts has them.


def strided_access(stride_bytes: int, width: int = 4, kind: str = "ld", base: int = 0) -> Access:
    """Lane i at ``base + i * stride_bytes``."""
    return Access(base + stride_bytes * np.arange(WARP), width, kind)


def _lane_addresses(layout: Layout, rows, cols) -> np.ndarray:
    rows = int_array(rows, "rows").ravel()
    cols = int_array(cols, "columns").ravel()
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
