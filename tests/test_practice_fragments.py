"""The mma.sync fragment chapter's exercises (tcgemm.practice.fragments): the book's solutions pass, and
typical wrong answers fail with their own hint and the first wrong entry named."""
from tcgemm.practice import check


def test_a_report_names_the_first_wrong_entry_and_an_error():
    report = check("fragments.a_owner", lambda row, k: (0, 0))
    assert str(report).splitlines()[1] == "  A[0][1]: expected (0, 1), got (0, 0)"
    assert report.wrong == 255 and not report.hint
    broken = check("fragments.c_owner", lambda row, col: 1 // (row - 3))
    assert not broken.passed and "C[3][0]: the answer raised ZeroDivisionError" in str(broken)
    assert "must be a function" in str(check("fragments.b_owner", 42))
