"""The ldmatrix chapter's exercises (tcgemm.practice.ldmatrix): the book's solutions pass, typical wrong answers
fail with their own hint and the first wrong lane or element named, and the address model agrees with the
bank chapter's ldmatrix accesses."""
import numpy as np
from tcgemm import layouts
from tcgemm.practice import check, exercise, exercises
from tcgemm.practice.ldmatrix import CHAPTER, EXERCISES
from tcgemm.smem import banks

KEYS = [e.key for e in EXERCISES]


def test_the_address_model_is_the_kernels_ldmatrix():
    """Kernel 2.0's ldmatrix.x4 of A and .x2 of B (tcgemm.smem.banks.ldmatrix_tile) pass the same addresses."""
    for key, num, lanes in (("ldmatrix.a_x4_address", 4, 32), ("ldmatrix.b_x2_address", 2, 16)):
        model = exercise(key).model
        for row_elems, row0, col0 in ((32, 0, 0), (64, 24, 40)):
            access = banks.ldmatrix_tile(layouts.row_major(row_elems, 2), row0, col0, num=num)
            ours = [model(lane, row0, col0, row_elems) for lane in range(lanes)]
            assert np.array_equal(access.addresses[:lanes], ours), key


def test_a_report_names_the_first_wrong_lane_and_an_error():
    report = check("ldmatrix.a_x4_address", lambda lane, row0, col0, row_elems: 0)
    assert str(report).splitlines()[1] == "  lane 1, block at (0, 0), 32 fp16 per row: expected 64, got 0"
    assert report.wrong == 190 and not report.hint
    wrong = check("ldmatrix.receiver", lambda matrix, row, col: (4 * row + col // 2, matrix, 0))
    assert str(wrong.first[0]) == "matrix 0, row 0, column 1: expected (0, 0, 1), got (0, 0, 0)"
    broken = check("ldmatrix.receiver_trans", lambda matrix, row, col: 1 // (col - 2))
    assert "matrix 0, row 0, column 2: the answer raised ZeroDivisionError" in str(broken)
    assert "must be a function" in str(check("ldmatrix.b_x2_address", "lane * 16"))


def test_x2_reads_only_lanes_0_to_15():
    def only_used_lanes(lane, k0, n0, row_elems):
        assert lane < 16, "lanes 16-31 give no address to .x2"
        return 2 * ((k0 + lane) * row_elems + n0)
    assert check("ldmatrix.b_x2_trans_address", only_used_lanes).passed


def test_the_chapter_has_its_exercises():
    assert [e.key for e in exercises(CHAPTER)] == KEYS and len(KEYS) >= 3
