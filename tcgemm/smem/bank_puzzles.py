"""The bank explorer's puzzles: an access (or several) and a tile fixed, a layout to find. Pure module.

Each puzzle names the accesses it checks, the tile (element type, elements per row, rows) and the
padding allowed per row; the reader answers with the explorer's own layout settings (padding, XOR,
swizzle, custom expression, CuTe layout). ``puzzle_solved`` judges an answer with the bank model; the
explorer judges it in the page with the same words (tcgemm/widgets/bank_puzzles.js, checked against this
module by tests/test_bank_puzzles.py). An answer solves the puzzle when:

  the element type and the row length are the puzzle's;
  every element of the tile has bytes of its own, and the tile fits in ``rows * (row bytes + padding)``;
  each checked access reads or writes, in each lane, the elements it names in order (no request split
  across a permuted row), and needs no more wavefronts than its ideal, one per phase.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcgemm.smem import bank_cases, banks


def _puzzle(title: str, goal: str, accesses: dict, tile: dict, max_pad_bytes: int, hint: str,
            solution: dict, solution_text: str) -> dict:
    return {"title": title, "goal": goal, "accesses": accesses, "tile": tile, "max_pad_bytes": max_pad_bytes,
            "hint": hint, "solution": solution, "solution_text": solution_text}


# In order of difficulty. ``accesses``: explorer access -> the name the verdict gives it, in the order of
# their names (a puzzle opens on the first): the notebook that records the explorer stores its catalog
# with sorted keys, and the page takes the first key it finds there;
# ``solution``: the explorer settings of one answer (tests/test_bank_puzzles.py proves it in both models).
PUZZLES = {
    "one-word": _puzzle(
        "One word of padding",
        "Lane i loads the first fp32 of row i of a 32x32 fp32 tile (a column, as a transpose reads it). "
        "Make the load conflict-free with at most 4 bytes of padding per row.",
        {"strided-4": "the column load"}, {"elem_bytes": 4, "row_elems": 32, "rows": 32}, 4,
        "Rows of 128 bytes all start in bank 0, so all 32 lanes ask bank 0. "
        "What padding starts each row one bank after the row before?",
        {"layout": "padded", "pad_bytes": 4},
        "Rows padded by 4 bytes: row i starts at word 33i, in bank i % 32."),
    "pad-a": _puzzle(
        "Pad the A tile",
        "ldmatrix.x4 reads a 16x16 fp16 block of A from a tile of 32 fp16 (64 bytes) per row. "
        "Make it conflict-free with at most 16 bytes of padding per row.",
        {"ldmatrix-x4-A": "ldmatrix.x4 of A"}, {"elem_bytes": 2, "row_elems": 32, "rows": 16}, 16,
        "A phase reads 16 bytes (4 banks) from each of 8 rows: the 8 rows need 8 different groups of 4 banks. "
        "ldmatrix needs each row address 16-byte aligned, so padding comes in steps of 16 bytes.",
        {"layout": "padded", "pad_bytes": 16},
        "Rows padded by 16 bytes: a row is 80 bytes (20 banks), and rows 0-7 start in banks "
        "0, 20, 8, 28, 16, 4, 24 and 12."),
    "trans-128": _puzzle(
        "No room to pad",
        "ldmatrix.x4.trans reads a 16x16 fp16 block of B stored [k][n], 64 fp16 (128 bytes) per row. "
        "Make it conflict-free with no padding: the 16 rows fill exactly 2048 bytes.",
        {"ldmatrix-x4-trans-B": "ldmatrix.x4.trans of B"}, {"elem_bytes": 2, "row_elems": 64, "rows": 16}, 0,
        "Every 128-byte row starts in bank 0. Keep each row in its own 128 bytes but permute its eight "
        "16-byte chunks: XOR the chunk index (3 bits) with the row's low 3 bits. On element offsets a chunk "
        "is 8 fp16 (2^3) and a row 64 (2^6).",
        {"layout": "swizzle", "B": 3, "M": 3, "S": 3, "unit": "element"},
        "Swizzle<3,3,3> on element offsets (or the XOR layout): chunk c of row r is stored at chunk c ^ (r % 8)."),
    "store-and-load-64": _puzzle(
        "Stores and loads",
        "Kernel 2.0's tile, 32 fp16 (64 bytes) per row: the 16-byte stores that fill it (lane t to row t/4, "
        "chunk t%4) and the ldmatrix.x4 that reads A from it must both be conflict-free, with at most "
        "16 bytes of padding per row.",
        {"ldmatrix-x4-A": "ldmatrix.x4 of A", "store-16": "the 16-byte stores"},
        {"elem_bytes": 2, "row_elems": 32, "rows": 16}, 16,
        "16 bytes of padding mend the ldmatrix, but see what they do to the stores: a store phase writes two "
        "whole rows, which then no longer fill one 128-byte line. Permute the chunks instead: rows 2j and 2j+1 "
        "share a line, so XOR a row's chunk index (2 bits) with bits of row / 2.",
        {"layout": "xor"},
        "The XOR layout (Kernel 2.0's): chunk c of row r at chunk c ^ ((r / 2) % 4), which is Swizzle<2,3,3> "
        "on element offsets, with no padding."),
    "fragment-quarters": _puzzle(
        "C fragments in fp32",
        "mma's C fragment is stored as fp32 pairs (8 bytes: lane t at row t/4, columns 2(t%4) and 2(t%4)+1) "
        "into a tile of 32 fp32 (128 bytes) per row. Reach the fewest wavefronts there can be, 2 (one per "
        "phase), with at most 16 bytes of padding per row.",
        {"fragment-8": "the fragment stores"}, {"elem_bytes": 4, "row_elems": 32, "rows": 8}, 16,
        "A phase stores 32 bytes into each of 4 rows, so the 4 rows need 4 different 32-byte quarters of the "
        "banks; 16 bytes of padding shift a row by half a quarter only. Swizzle instead: XOR the row's quarter "
        "(2 bits) with the row's low 2 bits. On fp32 element offsets a quarter is 8 elements (2^3) and a row "
        "32 (2^5).",
        {"layout": "swizzle", "B": 2, "M": 3, "S": 2, "unit": "element"},
        "Swizzle<2,3,2> on element offsets: quarter q of row r is stored at quarter q ^ (r % 4)."),
    "store-and-load-128": _puzzle(
        "Stores and loads, 128-byte rows",
        "The same 16-byte stores (lane t to row t/4, chunk t%4) and ldmatrix.x4 of A, now on a tile of "
        "64 fp16 (128 bytes) per row: both conflict-free, with no padding.",
        {"ldmatrix-x4-A": "ldmatrix.x4 of A", "store-16": "the 16-byte stores"},
        {"elem_bytes": 2, "row_elems": 64, "rows": 16}, 0,
        "Store chunk c of row r at chunk c ^ g(r). A store phase writes chunks 0-3 of rows 2j and 2j+1, so "
        "g(2j) and g(2j+1) must differ in bit 2; an ldmatrix phase reads one chunk of rows 0-7 (or 8-15), so "
        "g must take 8 different values there. Swizzle<3,3,3> (g(r) = r % 8) fails the stores: write g as a "
        "custom expression, or reorder the rows in a CuTe layout.",
        {"layout": "custom", "expr": "row * row_bytes + ((col * elem_bytes) ^ ((((row & 1) << 2) | ((row >> 1) & 3)) << 4))"},
        "Chunk c of row r at chunk c ^ g(r) with g(r) = 4 (r % 2) + (r / 2) % 4, or in CuTe "
        "Swizzle<3,3,3> o ((2,4,2),64):((256,64,512),1): rows stored in the order 0, 2, 4, 6, 1, 3, 5, 7, "
        "then Swizzle<3,3,3>."),
}


@dataclass(frozen=True)
class Verdict:
    """An answer to a puzzle: solved, or what is still wrong (in the words the explorer shows)."""
    solved: bool
    problems: tuple[str, ...]

    def __bool__(self) -> bool:
        return self.solved


def _known(name: str) -> dict:
    if name not in PUZZLES:
        raise ValueError(f"unknown puzzle {name!r}; choose one of {list(PUZZLES)}")
    return PUZZLES[name]


def start_settings(name: str) -> dict:
    """The explorer settings a puzzle opens with: its first access on its tile, row-major."""
    puzzle = _known(name)
    tile = puzzle["tile"]
    return bank_cases.settings(access=next(iter(puzzle["accesses"])), layout="row-major",
                               elem_bytes=tile["elem_bytes"], row_elems=tile["row_elems"])


def solution_settings(name: str) -> dict:
    return {**start_settings(name), **_known(name)["solution"]}


# ---- what is wrong, in words (bank_puzzles.js says the same) -----------------------------------

def bank_list(numbers: list[int]) -> str:
    """Banks [0, 1, 2, 3, 8, 12, 13] as "banks 0-3, 8 and 12-13"."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    parts = [str(a) if a == b else f"{a}-{b}" for a, b in runs]
    words = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    return f"{'bank' if len(numbers) == 1 else 'banks'} {words}"


def crowded_banks(words_per_bank) -> str:
    """The banks of a phase that hold more than one word, the most crowded first:
    "banks 0-3 hold 4 words each, bank 8 holds 2 words"."""
    counts = sorted({int(n) for n in words_per_bank if n > 1}, reverse=True)
    parts = []
    for n in counts:
        held = [b for b, words in enumerate(words_per_bank) if words == n]
        verb = "holds" if len(held) == 1 else "hold"
        parts.append(f"{bank_list(held)} {verb} {n} words{'' if len(held) == 1 else ' each'}")
    return ", ".join(parts)


def _allowance(pad: int) -> str:
    return "with no padding" if pad == 0 else f"with at most {pad} bytes of padding per row"


def _tile_problems(puzzle: dict, addresses: np.ndarray) -> list[str]:
    """Elements that share bytes, or a tile larger than its rows and padding allow."""
    tile, eb = puzzle["tile"], puzzle["tile"]["elem_bytes"]
    owner: dict[int, tuple[int, int]] = {}
    for (r, c), address in np.ndenumerate(addresses):
        for b in range(int(address), int(address) + eb):
            if b in owner:
                return [f"elements {owner[b]} and ({r}, {c}) share byte {b}: each element needs bytes of its own"]
            owner[b] = (r, c)
    limit = tile["rows"] * (tile["row_elems"] * eb + puzzle["max_pad_bytes"])
    end = int(addresses.max()) + eb
    if end > limit:
        return [f"the tile reaches byte {end - 1}; {_allowance(puzzle['max_pad_bytes'])} "
                f"it must fit in bytes 0-{limit - 1}"]
    return []


def _split_request(s: dict, access, layout) -> str | None:
    """The first lane whose bytes are not the elements it names, in order, or None."""
    eb = s["elem_bytes"]
    for lane, cells in bank_cases.lane_elements(s).items():
        start = int(access.addresses[lane])
        for i, (r, c) in enumerate(cells):
            at = int(layout(r, c))  # the whole tile had an address: no refusal here
            if at != start + i * eb:
                return (f"lane {lane} reads bytes {start}-{start + access.width - 1} as elements "
                        f"{cells[0]}-{cells[-1]}, but element ({r}, {c}) is at byte {at}, not {start + i * eb}")
    return None


def _access_problem(label: str, s: dict, layout) -> str | None:
    try:
        access = bank_cases.build_access(s)
    except ValueError as error:
        return f"{label}: {error}"
    split = _split_request(s, access, layout)
    if split:
        return f"{label}: {split}"
    report = banks.analyze(access)
    if not report.conflicts:
        return None
    crowded = [p for p, phase in enumerate(report.phases) if phase.wavefronts > 1]
    more = len(crowded) - 1
    tail = f" (and {more} more conflicting phase{'s' if more > 1 else ''})" if more else ""
    return (f"{label}: {report.wavefronts} wavefronts where {report.ideal} would do; "
            f"phase {crowded[0]}: {crowded_banks(report.phases[crowded[0]].words_per_bank)}{tail}")


def puzzle_solved(name: str, settings: dict) -> Verdict:
    """Whether the explorer settings ``settings`` solve puzzle ``name``, and if not, what is wrong."""
    puzzle = _known(name)
    s = bank_cases.settings(**settings)
    tile = puzzle["tile"]
    elem = bank_cases.ELEMENT_NAMES[tile["elem_bytes"]]
    if s["elem_bytes"] != tile["elem_bytes"]:
        return Verdict(False, (f"the tile is {elem}: set the element to {tile['elem_bytes']} B ({elem})",))
    try:
        layout = bank_cases.build_layout(s)
    except ValueError as error:  # the layout as a whole, or (below) at an element of the tile
        return Verdict(False, (f"the layout is refused: {error}",))
    if layout.row_elems != tile["row_elems"]:
        return Verdict(False, (f"a row of the tile holds {tile['row_elems']} {elem} elements; "
                               f"this layout's rows hold {layout.row_elems}",))
    rows, cols = np.meshgrid(np.arange(tile["rows"]), np.arange(tile["row_elems"]), indexing="ij")
    try:
        addresses = layout(rows, cols)
    except ValueError as error:
        return Verdict(False, (f"the layout is refused: {error}",))
    problems = _tile_problems(puzzle, addresses)
    for access, label in puzzle["accesses"].items():
        problem = _access_problem(label, {**s, "access": access}, layout)
        if problem:
            problems.append(problem)
    return Verdict(not problems, tuple(problems))
