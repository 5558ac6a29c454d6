"""Exercises of the ldmatrix chapter (book/ldmatrix.ipynb): the row address each lane passes, and the lane
and register that receive an element, checked against tcgemm.fragment_layouts. Pure module."""
from __future__ import annotations

from functools import lru_cache
from itertools import permutations

from tcgemm.fragment_layouts import (ldmatrix_address_lane, ldmatrix_layout, ldmatrix_placed, mma_layout,
                                     same_positions)
from tcgemm.layouts import row_major
from tcgemm.practice.exercise import Exercise

CHAPTER = "ldmatrix"
FP16_BYTES = 2


@lru_cache(maxsize=None)
def _fragment_origins(num: int, trans: bool, operand: str, stored_transposed: bool) -> tuple:
    """The top-left operand entry of each stored 8x8 matrix for which ldmatrix.x{num} returns the
    mma.m16n8k16 fragment of `operand`: the order of the operand's 8x8 blocks the tables confirm."""
    fragment = mma_layout("m16n8k16", operand, "f16", "f32")
    rows, cols = fragment.shape
    blocks = [(r, c) for c in range(0, cols, 8) for r in range(0, rows, 8)]
    for order in permutations(blocks, num):
        if same_positions(ldmatrix_placed(num, trans, order, fragment.shape, stored_transposed), fragment):
            return order
    raise ValueError(f"no order of ldmatrix.x{num} matrices gives the {operand} fragment")


def _row_address(num: int, trans: bool, operand: str, stored_transposed: bool = False):
    """The model: the byte offset lane `lane` passes, for a tile stored row-major with `row_elems` fp16
    per row, whose operand block starts at stored (row0, col0)."""
    def address(lane: int, row0: int, col0: int, row_elems: int) -> int:
        stacked = ldmatrix_address_lane(num).tolist().index(lane)
        r, c = _fragment_origins(num, trans, operand, stored_transposed)[stacked // 8]
        i = stacked % 8
        # stored row i of a matrix starts at operand entry (r + i, c); stored transposed, at (r, c + i)
        row, col = (c + i, r) if stored_transposed else (r + i, c)
        return row_major(row_elems, FP16_BYTES)(row0 + row, col0 + col)
    return address


def _address_cases(lanes: int, corners):
    def cases():
        for row_elems in (32, 64):
            for row0, col0 in corners:
                for lane in range(lanes):
                    yield ((lane, row0, col0, row_elems),
                           f"lane {lane}, block at ({row0}, {col0}), {row_elems} fp16 per row")
    return cases


def _receiver_model(trans: bool):
    layout = ldmatrix_layout(4, trans)
    lane, element = layout.inverse()

    def receiver(matrix: int, row: int, col: int) -> tuple[int, int, int]:
        e = int(element[8 * matrix + row, col])
        return int(lane[8 * matrix + row, col]), layout.register_of(e), e % 2
    return receiver


def _matrix_entries():
    return (((j, r, c), f"matrix {j}, row {r}, column {c}") for j in range(4) for r in range(8) for c in range(8))


# The book's answers, written from the chapter's rules.
def a_x4_address(lane: int, row0: int, col0: int, row_elems: int) -> int:
    # lanes 0-15 walk down the rows, lanes 16-31 again, one chunk right
    row = row0 + lane % 16
    col = col0 + 8 * (lane // 16)
    return FP16_BYTES * (row * row_elems + col)


def b_x2_address(lane: int, n0: int, k0: int, row_elems: int) -> int:
    return FP16_BYTES * ((n0 + lane % 8) * row_elems + k0 + 8 * (lane // 8))


def b_x2_trans_address(lane: int, k0: int, n0: int, row_elems: int) -> int:
    return FP16_BYTES * ((k0 + lane) * row_elems + n0)


def receiver(matrix: int, row: int, col: int) -> tuple[int, int, int]:
    return 4 * row + col // 2, matrix, col % 2


def receiver_trans(matrix: int, row: int, col: int) -> tuple[int, int, int]:
    return 4 * col + row // 2, matrix, row % 2


EXERCISES = (
    Exercise(
        key="ldmatrix.a_x4_address", chapter=CHAPTER, title="The row address of each lane in ldmatrix.x4 of A",
        task="A is stored row-major, `row_elems` fp16 per row. Write `a_x4_address(lane, row0, col0, row_elems) -> "
             "bytes`: the address (in bytes from the tile's start) lane `lane` (0 to 31) passes to `ldmatrix.x4` so "
             "that the registers come back as the m16n8k16 A fragment of the 16 x 16 block whose top-left element "
             "is (row0, col0).",
        cases=_address_cases(32, ((0, 0), (16, 16), (40, 8))), model=_row_address(4, False, "A"),
        solution=a_x4_address,
        hints=((lambda lane, row0, col0, w: 2 * ((row0 + 8 * (lane // 16) + lane % 8) * w + col0 + 8 * (lane // 8 % 2)),
                "the matrices must come in the order top-left, bottom-left, top-right, bottom-right (register j "
                "holds a2j, a2j+1): lanes 0-15 walk down rows 0-15 at the first chunk, lanes 16-31 the same rows "
                "one chunk (8 fp16) right"),
               (lambda lane, row0, col0, w: (row0 + lane % 16) * w + col0 + 8 * (lane // 16),
                "an address counts bytes: an fp16 element is 2 bytes, so the offset is 2 (row * row_elems + col)"),
               (lambda lane, row0, col0, w: 2 * ((row0 + lane % 16) * 16 + col0 + 8 * (lane // 16)),
                "a row of the stored tile is row_elems fp16 long, not the 16 of the block being loaded"))),
    Exercise(
        key="ldmatrix.b_x2_address", chapter=CHAPTER, title="The row address of each lane in ldmatrix.x2 of B "
                                                            "stored [n][k]",
        task="B is stored with k contiguous (as the kernels keep it: row n, `row_elems` fp16 of k per row). Write "
             "`b_x2_address(lane, n0, k0, row_elems) -> bytes` for lanes 0 to 15 (the only ones `.x2` reads): the "
             "address that makes `ldmatrix.x2` (no .trans) return the m16n8k16 B fragment for n = n0..n0+7 and "
             "k = k0..k0+15.",
        cases=_address_cases(16, ((0, 0), (8, 16), (56, 8), (24, 0))), model=_row_address(2, False, "B", True),
        solution=b_x2_address,
        hints=((lambda lane, n0, k0, w: 2 * ((n0 + lane) * w + k0),
                "the B block is 8 values of n by 16 of k: both matrices cover rows n0 to n0+7, and lanes 8-15 move "
                "one chunk along k (k0 + 8), not down 8 rows"),
               (lambda lane, n0, k0, w: 2 * ((n0 + lane % 8) * w + k0 + 16 * (lane // 8)),
                "a chunk is 16 bytes, 8 fp16: the second matrix starts at column k0 + 8, not k0 + 16"))),
    Exercise(
        key="ldmatrix.b_x2_trans_address", chapter=CHAPTER, title="The row address of each lane in "
                                                                  "ldmatrix.x2.trans of B stored [k][n]",
        task="B is stored with n contiguous (row k, `row_elems` fp16 of n per row). Write `b_x2_trans_address(lane, "
             "k0, n0, row_elems) -> bytes` for lanes 0 to 15: the address that makes `ldmatrix.x2.trans` return the "
             "m16n8k16 B fragment for k = k0..k0+15 and n = n0..n0+7.",
        cases=_address_cases(16, ((0, 0), (16, 8), (32, 24), (8, 0))), model=_row_address(2, True, "B"),
        solution=b_x2_trans_address,
        hints=((lambda lane, k0, n0, w: 2 * ((k0 + lane % 8) * w + n0 + 8 * (lane // 8)),
                "stored [k][n], the two 8 x 8 matrices are stacked along k (rows k0 to k0+15) at the same columns "
                "n0 to n0+7: lane i gives row k0 + i, and .trans turns each into its part of the fragment"),
               (lambda lane, k0, n0, w: (k0 + lane) * w + n0,
                "an address counts bytes: an fp16 element is 2 bytes, so the offset is 2 (row * row_elems + col)"))),
    Exercise(
        key="ldmatrix.receiver", chapter=CHAPTER, title="Who receives an element after ldmatrix.x4?",
        task="Write `receiver(matrix, row, col) -> (lane, register, half)`: after `ldmatrix.x4` (no .trans), the "
             "lane, the register (0 to 3) and the half of it (0: low 16 bits, 1: high) that hold element (row, col) "
             "of stored 8 x 8 matrix `matrix` (0 to 3).",
        cases=_matrix_entries, model=_receiver_model(False), solution=receiver,
        hints=((lambda j, r, c: (8 * j + r, j, c % 2),
                "the lane that gave a row's address (lane 8 matrix + row) is not the lane that receives it: row r of "
                "every matrix goes to lanes 4r to 4r+3, two columns each"),
               (lambda j, r, c: (4 * r + c // 2, 0, c % 2),
                "each lane gets one register per matrix: register j holds matrix j"))),
    Exercise(
        key="ldmatrix.receiver_trans", chapter=CHAPTER, title="Who receives an element after ldmatrix.x4.trans?",
        task="Write `receiver_trans(matrix, row, col) -> (lane, register, half)` as `receiver`, for "
             "`ldmatrix.x4.trans`: (row, col) is the element's place in the stored matrix.",
        cases=_matrix_entries, model=_receiver_model(True), solution=receiver_trans,
        hints=((lambda j, r, c: (4 * r + c // 2, j, c % 2),
                "that is the layout without .trans: with .trans lane l receives rows 2 (l % 4) and 2 (l % 4) + 1 "
                "of stored column l // 4, so lane = 4 col + row // 2"),
               (lambda j, r, c: (4 * c + r // 2, j, c % 2),
                "with .trans the two halves of a register are two neighbouring rows of one column: half = row % 2"))),
)
