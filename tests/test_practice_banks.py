"""The bank chapter's exercises (tcgemm.practice.banks): the book's solutions pass, typical wrong answers fail
with their own hint, and the layout exercise, scored by the bank model, names the first phase with a conflict
or the first two elements that collide."""
from tcgemm.practice import check, exercise, exercises
from tcgemm.practice.banks import CHAPTER, EXERCISES, PhaseScore

KEYS = [e.key for e in EXERCISES]
LAYOUT = "banks.conflict_free_layout"


def test_the_models_give_the_chapters_numbers():
    wavefronts = exercise("banks.ldmatrix_wavefronts").model
    assert wavefronts(32, 0) == 16 and wavefronts(32, 16) == 4      # row-major 4-way, padded by 16 B clean
    model = exercise(LAYOUT).model
    cases = list(exercise(LAYOUT).cases())
    assert len(cases) == 129
    assert all(model(*args) == PhaseScore(1) for args, _ in cases[1:])


def test_any_conflict_free_permutation_passes():
    assert check(LAYOUT, lambda r, c: 128 * r + 16 * ((c // 8) ^ (7 - r % 8)) + 2 * (c % 8)).passed
    assert check(LAYOUT, lambda r, c: (r * 128 + 2 * c) ^ ((r % 8) << 4)).passed       # Swizzle<3,4,3> on bytes


def test_the_layout_report_names_the_first_conflict_or_collision():
    chunk_major = check(LAYOUT, lambda r, c: 16 * (64 * (c // 8) + r) + 2 * (c % 8))
    assert str(chunk_major).splitlines()[1] == ("  16-byte stores of rows 0-3, phase 0 (row 0): expected 1 wavefront, "
                                                 "got 8 wavefronts (bank groups 0 0 0 0 0 0 0 0)")
    assert chunk_major.wrong == 64 and not chunk_major.hint
    folded = check(LAYOUT, lambda r, c: 2 * c + 128 * (r % 32))
    assert str(folded.first[0]) == ("the layout of the 64 x 64 tile: expected every 16-byte chunk whole, aligned, "
                                    "in its own slot of the 8 KiB, got elements (0, 0) and (32, 0) both at byte 0")


def test_a_layout_that_is_not_a_byte_offset_is_refused_with_its_element():
    assert "offset(0, 1) is -2, not a byte offset" in str(check(LAYOUT, lambda r, c: 128 * r - 2 * c))
    assert "offset(0, 1) is 1.5" in str(check(LAYOUT, lambda r, c: 1.5 * c))
    raised = check(LAYOUT, lambda r, c: 128 * r + 2 * c + 0 // (r - 5))
    assert "offset(5, 0) raised ZeroDivisionError" in str(raised) and raised.error
    assert "must be a function" in str(check(LAYOUT, 0))


def test_a_report_names_the_first_wrong_element():
    report = check("banks.xor_bank", lambda row, col: (row * 64 + col * 2) // 4 % 32)
    assert str(report.first[0]) == "element (2, 0): expected 4, got 0"


def test_the_chapter_has_its_exercises():
    assert [e.key for e in exercises(CHAPTER)] == KEYS and len(KEYS) >= 3
