"""The bank explorer's puzzles: each has a solution (and the layouts it names as other solutions solve it
too), the start and the typical wrong answers fail with their own reason, and the page's judge
(tcgemm/widgets/bank_puzzles.js, run by Node) says word for word what tcgemm.smem.bank_puzzles says, on
those answers and on thousands of random ones."""
import random

import pytest

from tcgemm.smem import bank_cases, bank_puzzles
from tcgemm.smem.bank_puzzles import PUZZLES, puzzle_solved, solution_settings, start_settings
from test_bank_explorer_js import node, random_settings, run_node  # noqa: F401 (node is a fixture)

RANDOM_PER_PUZZLE = 250
CUTE_128 = "Swizzle<3,3,3> o ((2,4,2),64):((256,64,512),1)"

# Other answers that solve each puzzle.
OTHER_SOLUTIONS = {
    "one-word": [],
    "pad-a": [{"layout": "xor"}, {"layout": "swizzle", "B": 2, "M": 3, "S": 3}],
    "trans-128": [{"layout": "xor"}, {"layout": "swizzle", "B": 3, "M": 4, "S": 3, "unit": "byte"}],
    "store-and-load-64": [{"layout": "swizzle", "B": 2, "M": 3, "S": 3}, {"layout": "cute"}],
    "fragment-quarters": [{"layout": "swizzle", "B": 2, "M": 5, "S": 2, "unit": "byte"}],
    "store-and-load-128": [{"layout": "cute", "cute": CUTE_128}],
}
# Typical wrong answers, each with the start of what the verdict must say (every problem, in order).
WRONG = {
    "one-word": [
        ({"layout": "padded", "pad_bytes": 8}, [
            "the tile reaches byte 4343; with at most 4 bytes of padding per row it must fit in bytes 0-4223",
            "the column load: 2 wavefronts where 1 would do; phase 0: banks 0, 2, 4,"]),
        ({"layout": "padded", "pad_bytes": 0}, ["the column load: 32 wavefronts where 1 would do; "
                                                 "phase 0: bank 0 holds 32 words"]),
    ],
    "pad-a": [
        ({"layout": "padded", "pad_bytes": 8}, ["ldmatrix.x4 of A: lane 1: address 72 is not aligned to width 16"]),
        ({"layout": "padded", "pad_bytes": 32}, [
            "the tile reaches byte 1503; with at most 16 bytes of padding per row it must fit in bytes 0-1279",
            "ldmatrix.x4 of A: 8 wavefronts where 4 would do; phase 0: banks 0-3, 8-11, 16-19 and 24-27 hold "
            "2 words each (and 3 more conflicting phases)"]),
        # Elements permuted inside a 16-byte row of the matrix: ldmatrix would load them out of order.
        ({"layout": "swizzle", "B": 1, "M": 0, "S": 1}, [
            "ldmatrix.x4 of A: lane 0 reads bytes 0-15 as elements (0, 0)-(0, 7), but element (0, 2) is at byte 6, "
            "not 4"]),
    ],
    "trans-128": [
        ({"layout": "padded", "pad_bytes": 16}, ["the tile reaches byte 2287; with no padding it must fit in bytes 0-2047"]),
        ({"layout": "swizzle", "B": 2, "M": 3, "S": 3}, [
            "ldmatrix.x4.trans of B: 8 wavefronts where 4 would do; phase 0: banks 0-15 hold 2 words each"]),
        ({"layout": "custom", "expr": "(row % 8) * row_bytes + col * elem_bytes"}, [
            "elements (0, 0) and (8, 0) share byte 0: each element needs bytes of its own",
            "ldmatrix.x4.trans of B: 32 wavefronts where 4 would do"]),
    ],
    "store-and-load-64": [
        ({"layout": "padded", "pad_bytes": 16}, [
            "the 16-byte stores: 8 wavefronts where 4 would do; phase 0: banks 0-3 hold 2 words each"]),
        ({"elem_bytes": 4}, ["the tile is fp16: set the element to 2 B (fp16)"]),
    ],
    "fragment-quarters": [
        ({"layout": "padded", "pad_bytes": 16}, [
            "the fragment stores: 4 wavefronts where 2 would do; phase 0: banks 4-15 hold 2 words each "
            "(and 1 more conflicting phase)"]),
        ({"layout": "xor"}, ["the fragment stores: 4 wavefronts where 2 would do; phase 0: banks 0-15 hold"]),
        ({"layout": "swizzle", "B": 2, "M": 3, "S": 3}, ["the fragment stores: 4 wavefronts where 2 would do"]),
    ],
    "store-and-load-128": [
        ({"layout": "swizzle", "B": 3, "M": 3, "S": 3}, [
            "the 16-byte stores: 8 wavefronts where 4 would do; phase 0: banks 0-15 hold 2 words each"]),
        ({"layout": "custom"}, ["ldmatrix.x4 of A: 8 wavefronts", "the 16-byte stores: 8 wavefronts"]),
        ({"row_elems": 32}, ["a row of the tile holds 64 fp16 elements; this layout's rows hold 32"]),
        ({"layout": "cute", "cute": "Swizzle<3,3,3> o ((2,4),64):((256,64),1)"}, [
            "the layout is refused: element (8, 0) is outside the layout's shape ((2,4),64)"]),
    ],
}


def answer(name: str, overrides: dict) -> dict:
    return {**start_settings(name), **overrides}


def as_json(verdict: bank_puzzles.Verdict) -> dict:
    return {"solved": verdict.solved, "problems": list(verdict.problems)}


def test_there_are_puzzles_each_with_a_goal_a_hint_and_a_solution():
    assert len(PUZZLES) >= 4 and set(WRONG) == set(OTHER_SOLUTIONS) == set(PUZZLES)
    for name, puzzle in PUZZLES.items():
        assert all(puzzle[k].strip() for k in ("title", "goal", "hint", "solution_text")), name
        assert set(puzzle["accesses"]) <= set(bank_cases.ACCESSES), name
        # The tile holds every access, and the solution sets every setting its layout reads.
        for access in puzzle["accesses"]:
            assert bank_cases.tile_rows(answer(name, {"access": access})) <= puzzle["tile"]["rows"], (name, access)
        reads = set(bank_cases.LAYOUT_SETTINGS[puzzle["solution"]["layout"]]) - {"row_elems"}
        assert reads <= set(puzzle["solution"]), (name, reads)


@pytest.mark.parametrize("name", PUZZLES)
def test_the_solution_solves_the_puzzle_and_the_start_does_not(name):
    assert puzzle_solved(name, solution_settings(name)) == bank_puzzles.Verdict(True, ())
    assert puzzle_solved(name, solution_settings(name))
    for other in OTHER_SOLUTIONS[name]:
        assert puzzle_solved(name, answer(name, other)).solved, other
    start = puzzle_solved(name, start_settings(name))
    assert not start and start.problems, start
    assert all("wavefronts where" in problem for problem in start.problems), start


@pytest.mark.parametrize("name", PUZZLES)
def test_typical_wrong_answers_fail_with_their_reason(name):
    assert len(WRONG[name]) >= 2
    for overrides, expected in WRONG[name]:
        verdict = puzzle_solved(name, answer(name, overrides))
        assert not verdict.solved and len(verdict.problems) == len(expected), (overrides, verdict)
        for problem, start in zip(verdict.problems, expected):
            assert problem.startswith(start), (overrides, problem)


def test_the_words_list_banks_as_runs():
    assert bank_puzzles.bank_list([5]) == "bank 5"
    assert bank_puzzles.bank_list([4, 12]) == "banks 4 and 12"
    assert bank_puzzles.bank_list([0, 1, 2, 3, 8, 12, 13]) == "banks 0-3, 8 and 12-13"
    words = [0] * 32
    words[0:4], words[8] = [4] * 4, 2
    assert bank_puzzles.crowded_banks(words) == "banks 0-3 hold 4 words each, bank 8 holds 2 words"


def test_an_unknown_puzzle_is_refused():
    with pytest.raises(ValueError, match="unknown puzzle 'pad-b'"):
        puzzle_solved("pad-b", bank_cases.settings())


# ---- the page's judge ---------------------------------------------------------------------------

def known_answers() -> list[tuple[str, dict]]:
    out = []
    for name in PUZZLES:
        out += [(name, start_settings(name)), (name, solution_settings(name))]
        out += [(name, answer(name, other)) for other in OTHER_SOLUTIONS[name]]
        out += [(name, answer(name, overrides)) for overrides, _ in WRONG[name]]
    return out


def judge_in_js(node, answers: list[tuple[str, dict]]) -> list[dict]:
    return run_node(node, puzzles=[{"name": name, "settings": s} for name, s in answers])["puzzles"]


def test_js_and_python_judge_every_known_answer_alike(node):
    answers = known_answers()
    for (name, s), theirs in zip(answers, judge_in_js(node, answers), strict=True):
        assert theirs == as_json(puzzle_solved(name, s)), (name, s)


def test_js_and_python_judge_random_answers_alike(node):
    """Random explorer settings, half of them on the puzzle's tile, as answers to every puzzle."""
    rng = random.Random(33)
    answers = []
    for name, puzzle in PUZZLES.items():
        for i in range(RANDOM_PER_PUZZLE):
            s = random_settings(rng)
            if i % 2:
                s.update(elem_bytes=puzzle["tile"]["elem_bytes"], row_elems=puzzle["tile"]["row_elems"])
            answers.append((name, s))
    verdicts = [as_json(puzzle_solved(name, s)) for name, s in answers]
    for (name, s), ours, theirs in zip(answers, verdicts, judge_in_js(node, answers), strict=True):
        assert theirs == ours, (name, s)
    # The random answers reach every kind of verdict, not only the first refusals.
    said = " ".join(p for v in verdicts for p in v["problems"])
    for words in ("the tile is", "the layout is refused", "a row of the tile holds", "share byte",
                  "the tile reaches byte", "wavefronts where", "is not aligned"):
        assert words in said, words
