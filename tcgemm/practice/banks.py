"""Exercises of the shared-memory bank chapter (book/bank_conflicts.ipynb): the bank of an element under a
layout, the wavefronts of an ldmatrix, and a conflict-free XOR layout, checked with tcgemm.layouts and the
bank model tcgemm.smem.banks. Pure module."""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Callable

import numpy as np

from tcgemm import layouts
from tcgemm.practice.exercise import Exercise, Report
from tcgemm.smem import banks

CHAPTER = "bank_conflicts"
FP16_BYTES = 2
PADDED_TILES = ((64, 0), (32, 0), (32, 16), (16, 4), (40, 0))     # (fp16 per row, bytes of padding)


def _padded_cases():
    for row_elems, pad in PADDED_TILES:
        for row in range(8):
            for col in range(row_elems):
                yield (row, col, row_elems, pad), f"element ({row}, {col}), {row_elems} fp16 per row + {pad} B"


def _padded_bank(row: int, col: int, row_elems: int, pad_bytes: int) -> int:
    return banks.bank_of(layouts.padded(row_elems, FP16_BYTES, pad_bytes)(row, col))


def _xor_cases():
    return (((row, col), f"element ({row}, {col})") for row in range(64) for col in range(32))


def _xor_bank(row: int, col: int) -> int:
    return banks.bank_of(layouts.xor_permuted()(row, col))


def _wavefront_cases():
    return (((row_elems, pad), f"{row_elems} fp16 per row + {pad} B") for row_elems in (16, 24, 32, 40, 64, 128)
            for pad in (0, 16, 32, 48, 64, 128))


def _ldmatrix_wavefronts(row_elems: int, pad_bytes: int) -> int:
    tile = layouts.padded(row_elems, FP16_BYTES, pad_bytes)
    return banks.analyze(banks.ldmatrix_tile(tile, 0, 0, num=4)).wavefronts


# A layout the reader writes for a 64 x 64 fp16 tile of 128-byte rows, scored case by case: first the layout
# itself (each 16-byte chunk whole, aligned and in its own slot of the 8 KiB), then each phase of every
# ldmatrix.x4 of a 16 x 16 block and of every 16-byte store of four whole rows.
TILE = 64
TILE_BYTES = TILE * TILE * FP16_BYTES
CHUNK_ELEMS = 8
LAYOUT_OK = "every 16-byte chunk whole, aligned, in its own slot of the 8 KiB"


class Finding(str):
    """What the layout check found, shown without quotes in a report."""
    __repr__ = str.__str__


@dataclass(frozen=True)
class PhaseScore:
    """The wavefronts of one phase and the bank group (banks 4g to 4g+3) of each lane's 16 bytes; the model
    gives the wavefronts only, since any 8 different groups will do."""
    wavefronts: int
    groups: tuple[int, ...] | None = None

    def __repr__(self) -> str:
        text = f"{self.wavefronts} wavefront{'s' if self.wavefronts != 1 else ''}"
        return text if self.groups is None else f"{text} (bank groups {' '.join(map(str, self.groups))})"


def _same_score(got, expected) -> bool:
    if isinstance(expected, PhaseScore) and expected.groups is None and isinstance(got, PhaseScore):
        return got.wavefronts == expected.wavefronts
    return got == expected


def layout_cases():
    yield ("layout",), f"the layout of the {TILE} x {TILE} tile"
    for row0 in range(0, TILE, 16):
        for col0 in range(0, TILE, 16):
            for p in range(4):
                row, col = row0 + 8 * (p % 2), col0 + CHUNK_ELEMS * (p // 2)
                yield (("ldmatrix", row0, col0, p), f"ldmatrix.x4 at ({row0}, {col0}), phase {p} "
                                                    f"(rows {row}-{row + 7}, columns {col}-{col + 7})")
    for row0 in range(0, TILE, 4):
        for p in range(4):
            yield ("store", row0, p), f"16-byte stores of rows {row0}-{row0 + 3}, phase {p} (row {row0 + p})"


def _offsets(offset: Callable) -> np.ndarray | None:
    """The byte offset of every element as a table; None when the answer is not written yet (None everywhere)."""
    given = {}
    for row in range(TILE):
        for col in range(TILE):
            try:
                given[row, col] = offset(row, col)
            except Exception as exc:
                raise ValueError(f"offset({row}, {col}) raised {type(exc).__name__}: {exc}") from exc
    if all(value is None for value in given.values()):
        return None
    table = np.empty((TILE, TILE), dtype=np.int64)
    for (row, col), value in given.items():
        value = np.asarray(value)
        if value.ndim or value.dtype.kind not in "iuf" or not 0 <= value < 2 ** 31 or value % 1:
            raise ValueError(f"offset({row}, {col}) is {value.tolist()!r}, not a byte offset (a whole "
                             f"number from 0 to 2^31 - 1)")
        table[row, col] = value
    return table


def _layout_finding(table: np.ndarray) -> Finding:
    seen = {}
    for (row, col), value in np.ndenumerate(table):
        if int(value) in seen:
            return Finding(f"elements {seen[int(value)]} and {(row, col)} both at byte {value}")
        seen[int(value)] = (row, col)
    for (row, col), value in np.ndenumerate(table):
        if value >= TILE_BYTES:
            return Finding(f"element {(row, col)} at byte {value}, past the tile's {TILE_BYTES} bytes")
    for (row, col), value in np.ndenumerate(table):
        start = table[row, col - col % CHUNK_ELEMS]
        if start % 16:
            return Finding(f"element {(row, col)} at byte {value}: its chunk does not start on a 16-byte boundary")
        if value != start + FP16_BYTES * (col % CHUNK_ELEMS):
            return Finding(f"element {(row, col)} at byte {value}, not {FP16_BYTES * (col % CHUNK_ELEMS)} bytes "
                           f"after its chunk's first element (byte {start})")
    return Finding(LAYOUT_OK)


def _phase_score(access: banks.Access, phase: int) -> PhaseScore:
    report = banks.analyze(access).phases[phase]
    return PhaseScore(report.wavefronts, tuple(lane_banks[0] // 4 for lane_banks in report.banks_per_lane))


def score_layout(offset: Callable) -> Callable:
    """The reader's `offset` as a function of a case: its layout finding, or a phase's PhaseScore."""
    found = {}

    def tile() -> layouts.Layout | None:
        if "tile" not in found:
            table = _offsets(offset)
            if table is None:
                found["tile"] = None
                return None
            found["finding"] = _layout_finding(table)
            slots = table - table % 16      # a row address is read from the 16-byte slot holding it
            found["tile"] = layouts.custom(lambda r, c: slots[r, c], "your layout", FP16_BYTES, TILE)
        return found["tile"]

    def score(kind: str, *where):
        layout = tile()
        if layout is None:                   # not answered yet
            return None
        if kind == "layout":
            return found["finding"]
        if kind == "ldmatrix":
            row0, col0, phase = where
            return _phase_score(banks.ldmatrix_tile(layout, row0, col0, num=4), phase)
        row0, phase = where
        lane = np.arange(banks.WARP)
        access = banks.layout_access(layout, row0 + lane // 8, CHUNK_ELEMS * (lane % 8), 16, kind="st")
        return _phase_score(access, phase)
    return score


_REFERENCE = score_layout(layouts.swizzle_layout(3, 3, 3, TILE, FP16_BYTES))   # the chapter's conflict-free one


def reference_score(kind: str, *where):
    """The model's answer: what the chapter's Swizzle<3,3,3> (on fp16 offsets) scores, any groups accepted."""
    found = _REFERENCE(kind, *where)
    return PhaseScore(found.wavefronts) if isinstance(found, PhaseScore) else found


@dataclass(frozen=True)
class LayoutExercise(Exercise):
    """An exercise whose answer is a layout offset(row, col): `score` turns it (and each hint's typical
    layout) into a function of the cases, compared with the model's answer case by case."""
    score: Callable = score_layout
    same: Callable = staticmethod(_same_score)

    def check(self, answer) -> Report:
        if not callable(answer):
            return super().check(answer)
        plain = Exercise(**{f.name: getattr(self, f.name) for f in fields(Exercise)})
        scored_hints = tuple((self.score(typical), what) for typical, what in self.hints)
        return Exercise.check(replace(plain, hints=scored_hints), self.score(answer))


# The book's answers, written from the chapter's rules: bank = (byte address // 4) % 32, and a 16-byte chunk
# at byte a covers the four banks of bank group (a // 16) % 8.
def padded_bank(row: int, col: int, row_elems: int, pad_bytes: int) -> int:
    address = row * (FP16_BYTES * row_elems + pad_bytes) + FP16_BYTES * col
    return address // 4 % 32


def xor_bank(row: int, col: int) -> int:
    line = row // 2                 # two 64-byte tile rows per 128-byte line
    chunk = (4 * (row % 2) + col // 8) ^ (line % 4)
    return 4 * chunk + (col % 8) // 2


def ldmatrix_wavefronts(row_elems: int, pad_bytes: int) -> int:
    stride = FP16_BYTES * row_elems + pad_bytes
    # the bank groups of one phase's 8 rows; the four phases are alike up
    # to a rotation of the groups
    groups = [i * stride // 16 % 8 for i in range(8)]
    return 4 * max(groups.count(g) for g in groups)


def conflict_free_offset(row: int, col: int) -> int:
    chunk = (col // 8) ^ (row % 8)
    return 128 * row + 16 * chunk + FP16_BYTES * (col % 8)


EXERCISES = (
    Exercise(
        key="banks.padded_bank", chapter=CHAPTER, title="The bank of an element of a row-major or padded tile",
        task="An fp16 tile is stored row-major, `row_elems` elements per row followed by `pad_bytes` bytes of "
             "padding (0: plain row-major). Write `padded_bank(row, col, row_elems, pad_bytes) -> bank` (0 to 31) "
             "of element (row, col), the tile starting at byte 0.",
        cases=_padded_cases, model=_padded_bank, solution=padded_bank,
        hints=((lambda r, c, w, pad: (r * (2 * w + pad) + 2 * c) % 32,
                "a bank is 4 bytes wide: divide the byte address by 4 before taking it modulo 32"),
               (lambda r, c, w, pad: (r * 2 * w + 2 * c) // 4 % 32,
                "each row takes 2 row_elems + pad_bytes bytes: the padding shifts every row after the first"),
               (lambda r, c, w, pad: (r * (2 * w + pad) + 2 * c) // 4,
                "there are 32 banks: the bank is the word index (byte address // 4) modulo 32"))),
    Exercise(
        key="banks.xor_bank", chapter=CHAPTER, title="The bank of an element of Kernel 2.0's XOR-permuted tile",
        task="Kernel 2.0's 64 x 32 fp16 tile: tile row r goes to 128-byte line r // 2, logical chunk "
             "4 (r % 2) + col // 8, stored at chunk logical ^ (line % 4). Write `xor_bank(row, col) -> bank` "
             "(0 to 31) of element (row, col).",
        cases=_xor_cases, model=_xor_bank, solution=xor_bank,
        hints=((lambda r, c: (16 * r + c // 2) % 32,
                "that is the plain row-major tile: the chunk is XOR-permuted within its line, chunk ^ (row // 2) % 4"),
               (lambda r, c: 4 * ((4 * (r % 2) + c // 8) ^ (r % 4)) + (c % 8) // 2,
                "the XOR takes the line, row // 2, modulo 4 (address bits 7-8), not the row"),
               (lambda r, c: 4 * ((4 * (r % 2) + c // 8) ^ (r // 2 % 8)) + (c % 8) // 2,
                "only bits 4-5 (the chunk along k) are XORed; bit 6, which tile row of the line, stays: XOR with "
                "line % 4, not line % 8"))),
    Exercise(
        key="banks.ldmatrix_wavefronts", chapter=CHAPTER, title="Wavefronts of ldmatrix.x4 in a padded tile",
        task="An fp16 tile is stored row-major, `row_elems` elements per row followed by `pad_bytes` bytes of "
             "padding. Write `ldmatrix_wavefronts(row_elems, pad_bytes) -> int`: the wavefronts one `ldmatrix.x4` "
             "of the 16 x 16 block at (0, 0) needs (the A fragment's addresses), ideal included.",
        cases=_wavefront_cases, model=_ldmatrix_wavefronts, solution=ldmatrix_wavefronts,
        hints=((lambda w, pad: ldmatrix_wavefronts(w, pad) - 4,
                "that counts the conflicts, the wavefronts beyond the ideal; the question asks for all of them, the "
                "ideal 4 (one per phase) included"),
               (lambda w, pad: ldmatrix_wavefronts(w, 0),
                "each row takes 2 row_elems + pad_bytes bytes: the padding is what moves the rows to other banks"),
               (lambda w, pad: ldmatrix_wavefronts(w, pad) // 4,
                "ldmatrix.x4 is served in four phases, one per 8 x 8 matrix, each at least one wavefront"))),
    LayoutExercise(
        key="banks.conflict_free_layout", chapter=CHAPTER, title="A conflict-free layout for 128-byte rows",
        task="A 64 x 64 fp16 tile has 128-byte rows, 8 KiB in all. Write `offset(row, col) -> bytes`: a layout "
             "that keeps the 8 fp16 of every 16-byte chunk side by side and 16-byte aligned, gives each chunk its "
             "own place in the 8 KiB, and makes every `ldmatrix.x4` of a 16 x 16 block at (16 i, 16 j) and every "
             "16-byte store of whole rows (lane t: chunk t % 8 of row t // 8) free of bank conflicts. The bank "
             "model scores each phase.",
        cases=layout_cases, model=reference_score, solution=conflict_free_offset,
        hints=((lambda r, c: 128 * r + FP16_BYTES * c,
                "without a permutation the 8 rows of an ldmatrix phase, 128 bytes apart, all fall in one bank group: "
                "XOR the chunk col // 8 with the row"),
               (lambda r, c: 128 * r + 16 * ((c // 8) ^ (r // 2 % 4)) + FP16_BYTES * (c % 8),
                "that is Kernel 2.0's XOR, made for 64-byte rows, two per line (row // 2, % 4); a 128-byte row is a "
                "whole line of 8 chunks: XOR the chunk with row % 8"),
               (lambda r, c: 128 * r + 16 * ((c // 8) ^ (r % 4)) + FP16_BYTES * (c % 8),
                "XOR all three bits of the chunk (bits 4-6 of the byte offset) with row % 8: with row % 4 the 8 rows "
                "of a phase reach only 4 bank groups"),
               (lambda r, c: FP16_BYTES * layouts.swizzle(3, 4, 3)(64 * r + c),
                "Swizzle<3,4,3> is right on byte offsets; on fp16 element offsets the same XOR is Swizzle<3,3,3>: "
                "the unit matters"),
               (lambda r, c: 128 * r + FP16_BYTES * (c ^ (r % 8)),
                "XOR the chunk index col // 8 (bits 4-6 of the byte offset), not col: ldmatrix reads 8 fp16 side by "
                "side from each row address, so the XOR must move whole chunks"),
               (lambda r, c: 144 * r + FP16_BYTES * c,
                "padding spreads the rows over the banks too, but the tile must stay 8 KiB: permute the chunks "
                "within each row instead of widening it"))),
)
