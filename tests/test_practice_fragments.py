"""The mma.sync fragment chapter's exercises (tcgemm.practice.fragments): the book's solutions pass, and
typical wrong answers fail with their own hint and the first wrong entry named; the GPU check
(tcgemm.practice.gpu.fragments) reads the owners off a probe's view, here fed the tables' own."""
import numpy as np
import pytest

from tcgemm.fragment_layouts import mma_layout
from tcgemm.practice import check, exercise, exercises
from tcgemm.practice.gpu.fragments import OPERAND, TRUTHS, holders, mma_observed


def test_a_report_names_the_first_wrong_entry_and_an_error():
    report = check("fragments.a_owner", lambda row, k: (0, 0))
    assert report.text.splitlines()[1] == "  A[0][1]: expected (0, 1), got (0, 0)"
    assert report.wrong == 255 and not report.hint
    broken = check("fragments.c_owner", lambda row, col: 1 // (row - 3))
    assert not broken.passed and "C[3][0]: the answer raised ZeroDivisionError" in broken.text
    assert "must be a function" in check("fragments.b_owner", 42).text


def test_the_hardware_checks_are_the_chapters_exercises():
    assert list(TRUTHS) == [e.key for e in exercises("mma_fragments")]


def test_the_probes_view_turned_round_answers_each_exercise():
    """tcgemm.practice.gpu.fragments reads the owners off what the mma probe saw at each (lane, element): fed the
    tables' own layouts (a GPU that agrees), the solutions pass; a lane pair swapped fails where it moved."""
    for key, operand in OPERAND.items():
        layout = mma_layout("m16n8k16", operand, "f16", "f32")
        e = exercise(key)
        assert e.check(e.solution, truth=holders(layout.row, layout.col), against="the GPU").passed
        rows, cols = layout.row.copy(), layout.col.copy()
        rows[[0, 5]], cols[[0, 5]] = rows[[5, 0]], cols[[5, 0]]
        swapped = e.check(e.solution, truth=holders(rows, cols), against="the GPU")
        assert swapped.wrong == 2 * layout.elements_per_lane, swapped.text
        assert swapped.first[0].expected[0] == 5 and "differ from the GPU" in swapped.text
    unseen = np.full((32, 8), -1)
    assert holders(unseen, unseen)(0, 0) is None


def test_an_unknown_operand_is_refused_before_the_gpu_is_asked():
    with pytest.raises(ValueError, match="one of A, B, C, D"):
        mma_observed("AB")
