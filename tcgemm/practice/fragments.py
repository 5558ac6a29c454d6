"""Exercises of the mma.sync fragment chapter (book/mma_fragments.ipynb): who holds an entry of A, B and C
in m16n8k16, checked against tcgemm.fragment_layouts (the PTX ISA's tables). Pure module."""
from __future__ import annotations

from tcgemm.fragment_layouts import mma_layout
from tcgemm.practice.exercise import Exercise

CHAPTER = "mma_fragments"


def _owner(operand: str):
    lane, element = mma_layout("m16n8k16", operand, "f16", "f32").inverse()
    return lambda row, col: (int(lane[row, col]), int(element[row, col]))


def _entries(operand: str):
    rows, cols = mma_layout("m16n8k16", operand, "f16", "f32").shape
    return lambda: (((r, c), f"{operand}[{r}][{c}]") for r in range(rows) for c in range(cols))


# The book's answers, written from the chapter's rule: groupID = lane // 4, threadID_in_group = lane % 4.
def a_owner(row: int, k: int) -> tuple[int, int]:
    lane = 4 * (row % 8) + (k % 8) // 2
    element = 2 * (row // 8) + 4 * (k // 8) + k % 2
    return lane, element


def b_owner(k: int, col: int) -> tuple[int, int]:
    lane = 4 * col + (k % 8) // 2
    element = 2 * (k // 8) + k % 2
    return lane, element


def c_owner(row: int, col: int) -> tuple[int, int]:
    lane = 4 * (row % 8) + col // 2
    element = 2 * (row // 8) + col % 2
    return lane, element


EXERCISES = (
    Exercise(
        key="fragments.a_owner", chapter=CHAPTER, title="Who holds A[row][k] in mma.m16n8k16 (fp16)?",
        task="Write `a_owner(row, k) -> (lane, element)`: the lane of the warp and the index of the fp16 element "
             "(0 to 7, two per 32-bit register: a0 a1 in the first register) that hold entry (row, k) of the "
             "16 x 16 A fragment.",
        cases=_entries("A"), model=_owner("A"), solution=a_owner,
        hints=((lambda row, k: (4 * (row % 8) + (k % 8) // 2, 2 * (row // 8) + k % 2 + 2 * (k // 8)),
                "the registers run down the rows first (a0,a1: rows 0-7; a2,a3: rows 8-15) and only then along "
                "k: element = 2 (row // 8) + 4 (k // 8) + k % 2"),
               (lambda row, k: (4 * ((k % 8) // 2) + row % 8, 2 * (row // 8) + 4 * (k // 8) + k % 2),
                "groupID and threadID_in_group are swapped: lane = 4 groupID + threadID_in_group, with groupID "
                "the row within 8 and threadID_in_group the pair of k within 8"))),
    Exercise(
        key="fragments.b_owner", chapter=CHAPTER, title="Who holds B[k][col] in mma.m16n8k16 (fp16)?",
        task="Write `b_owner(k, col) -> (lane, element)` for the 16 x 8 B fragment (elements 0 to 3: b0 b1, b2 b3).",
        cases=_entries("B"), model=_owner("B"), solution=b_owner,
        hints=((lambda k, col: (4 * (k % 8) // 2 + col, 2 * (k // 8) + k % 2),
                "B's column is the groupID (lane // 4), and the pair of k within 8 is threadID_in_group: "
                "lane = 4 col + (k % 8) // 2"),
               (lambda k, col: (4 * col + k // 2, 2 * (k // 8) + k % 2),
                "k from 8 on stays in the same 4 lanes, in the second register (b2 b3): lane = 4 col + (k % 8) // 2"))),
    Exercise(
        key="fragments.c_owner", chapter=CHAPTER, title="Who holds C[row][col] of mma.m16n8k16 (fp32 accumulator)?",
        task="Write `c_owner(row, col) -> (lane, element)` for the 16 x 8 accumulator (elements c0 to c3, one "
             "fp32 per register).",
        cases=_entries("C"), model=_owner("C"), solution=c_owner,
        hints=((lambda row, col: (4 * (row % 8) + col // 2, 2 * (1 - row // 8) + col % 2),
                "c0 c1 hold row groupID and c2 c3 row groupID + 8, not the other way round"),
               (lambda row, col: (4 * (row % 8) + col % 4, 2 * (row // 8) + col // 4),
                "a lane holds two adjacent columns: 2 threadID_in_group and 2 threadID_in_group + 1"))),
)
