"""The ldmatrix chapter's exercises (tcgemm.practice.ldmatrix): the book's solutions pass, typical wrong answers
fail with their own hint and the first wrong lane or element named, and the address model agrees with the
bank chapter's ldmatrix accesses; the GPU check (tcgemm.practice.gpu.ldmatrix) derives its answers from the
probes' views, here fed the tables' own."""
import numpy as np
import pytest

from tcgemm import layouts
from tcgemm.fragment_layouts import ldmatrix_layout, mma_layout
from tcgemm.practice import check, exercise, exercises
from tcgemm.practice.gpu.ldmatrix import ADDRESSES, RECEIVERS, TRUTHS, address_truth, receiver_truth, row_starts
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
    assert report.text.splitlines()[1] == "  lane 1, block at (0, 0), 32 fp16 per row: expected 64, got 0"
    assert report.wrong == 190 and not report.hint
    wrong = check("ldmatrix.receiver", lambda matrix, row, col: (4 * row + col // 2, matrix, 0))
    assert str(wrong.first[0]) == "matrix 0, row 0, column 1: expected (0, 0, 1), got (0, 0, 0)"
    broken = check("ldmatrix.receiver_trans", lambda matrix, row, col: 1 // (col - 2))
    assert "matrix 0, row 0, column 2: the answer raised ZeroDivisionError" in broken.text
    assert "must be a function" in check("ldmatrix.b_x2_address", "lane * 16").text


def test_x2_reads_only_lanes_0_to_15():
    def only_used_lanes(lane, k0, n0, row_elems):
        assert lane < 16, "lanes 16-31 give no address to .x2"
        return 2 * ((k0 + lane) * row_elems + n0)
    assert check("ldmatrix.b_x2_trans_address", only_used_lanes).passed


def test_the_chapter_has_its_exercises():
    assert [e.key for e in exercises(CHAPTER)] == KEYS and len(KEYS) >= 3


def test_the_hardware_checks_are_the_chapters_exercises():
    assert list(TRUTHS) == KEYS


def test_the_probes_views_give_the_addresses_and_receivers():
    """tcgemm.practice.gpu.ldmatrix derives each lane's row start from where ldmatrix puts the row and what
    the mma wants there: fed the tables (a GPU that agrees), the solutions pass; a typical mistake does not."""
    for key, (num, trans, operand, stored_transposed) in ADDRESSES.items():
        loaded, fragment = ldmatrix_layout(num, trans), mma_layout("m16n8k16", operand, "f16", "f32")
        truth = address_truth(row_starts(loaded.row, loaded.col, fragment.row, fragment.col, stored_transposed))
        e = exercise(key)
        assert e.check(e.solution, truth=truth, against="the GPU").passed, key
        assert not e.check(e.hints[0][0], truth=truth, against="the GPU").passed, key
    for key, trans in RECEIVERS.items():
        loaded = ldmatrix_layout(4, trans)
        e = exercise(key)
        assert e.check(e.solution, truth=receiver_truth(loaded.row, loaded.col), against="the GPU").passed, key
        assert not e.check(e.hints[0][0], truth=receiver_truth(loaded.row, loaded.col)).passed, key


def test_a_row_no_single_start_serves_has_no_address():
    """.x2 (no .trans) of B stored [k][n] is not the fragment (the chapter's placement table): no lane's row
    can start anywhere that puts all 8 values where the mma wants them."""
    loaded, b = ldmatrix_layout(2), mma_layout("m16n8k16", "B", "f16", "f32")
    starts = row_starts(loaded.row, loaded.col, b.row, b.col, stored_transposed=False)
    assert sorted(starts) == list(range(16)) and set(starts.values()) == {None}
    assert address_truth(starts)(0, 0, 0, 32) is None
    a = mma_layout("m16n8k16", "A", "f16", "f32")
    with pytest.raises(ValueError, match="fragment has"):
        row_starts(loaded.row, loaded.col, a.row, a.col, stored_transposed=False)
