"""The Maxas SGEMM chapter's exercises (tcgemm.practice.sgemm): the book's solutions pass, typical wrong
answers fail with their own hint and the first wrong case named, and a numbering is scored as a whole loop."""
from tcgemm.practice import check, exercise, exercises
from tcgemm.practice.sgemm import CHAPTER, EXERCISES

KEYS = [e.key for e in EXERCISES]


def test_the_model_numbering_has_no_conflict_in_the_loop():
    e = exercise("sgemm.c_register")
    assert all(e.model(*args).extra_cycles == 0 for args, _ in e.cases())


def test_a_numbering_report_names_the_first_conflicting_ffma_and_its_registers():
    report = check("sgemm.c_register", lambda i, j: 8 * i + (j + 1) % 8)
    assert report.wrong == 4 and report.checked == 64
    assert str(report).splitlines()[1] == (
        "  FFMA 0 of the loop, c[0][7]: expected FFMA R21, R64, R79, R21 (banks of a, b, c: 0 3 1): 0 extra "
        "cycles, got FFMA R0, R64, R79, R0 (banks of a, b, c: 0 3 0): 1 extra cycle")
    cached = str(check("sgemm.c_register", lambda i, j: 8 * i + j)).splitlines()[2]
    assert cached.endswith("(banks of a, b, c: 0 2 2, a from the reuse cache): 1 extra cycle")


def test_a_numbering_that_is_not_one_is_an_error():
    twice = check("sgemm.c_register", lambda i, j: 8 * i + j % 4)
    assert not twice.passed and "registers used twice" in str(twice)
    on_a = check("sgemm.c_register", lambda i, j: 64 + i if j == 0 else 100 + 8 * i + j)
    assert "registers used twice: [64, 65" in str(on_a) and "a_0..a_7 are R64..R71" in str(on_a)
    too_high = check("sgemm.c_register", lambda i, j: 200 + 8 * i + j)
    assert "register numbers 0..254" in str(too_high)
    raised = check("sgemm.c_register", lambda i, j: 1 // (i - 3))
    assert "c[3][0]: the answer raised ZeroDivisionError" in str(raised)
    assert "must be a function" in str(check("sgemm.c_register", [0] * 64))


def test_a_report_names_the_first_wrong_thread():
    report = check("sgemm.thread_origin", lambda tid, tile: (0, 0))
    assert str(report).splitlines()[1] == "  64x64 tile, thread 1: expected (0, 4), got (0, 0)"
    assert not report.hint
    broken = check("sgemm.global_load", lambda tid, j, tile: ("A", 0, [0, 1][tid]))
    assert "64x64 tile, thread 2, copy 0: the answer raised IndexError" in str(broken)


def test_the_chapter_has_its_exercises():
    assert [e.key for e in exercises(CHAPTER)] == KEYS and len(KEYS) >= 3
