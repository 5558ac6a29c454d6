"""Every exercise of tcgemm.practice: the book's solution passes on every case, and each typical wrong
answer fails with its own hint and a first mismatch that says what was expected and what came."""
import pytest

from tcgemm.practice import check, exercise, exercises, solution

KEYS = [e.key for e in exercises()]


@pytest.mark.parametrize("key", KEYS)
def test_the_solution_passes_on_every_case(key):
    e = exercise(key)
    report = check(key, e.solution)
    assert report.passed and report.checked == len(list(e.cases())) > 0, str(report)


@pytest.mark.parametrize("key", KEYS)
def test_each_typical_mistake_gets_its_own_hint(key):
    e = exercise(key)
    assert len(e.hints) >= 2, f"{key}: fewer than two typical mistakes"
    for typical, what in e.hints:
        report = e.check(typical)
        assert not report.passed and report.hint == what, (key, str(report))
        if report.first:
            assert report.first[0].expected != report.first[0].got and "expected" in str(report)


def test_every_chapter_has_three_exercises_at_least():
    chapters = {e.chapter for e in exercises()}
    assert chapters == {"mma_fragments", "ldmatrix", "bank_conflicts", "pipelines", "sgemm", "hopper"}
    assert all(len(exercises(c)) >= 3 for c in chapters) and len(KEYS) >= 18
    with pytest.raises(KeyError, match="no exercise"):
        exercise("fragments.nothing")


@pytest.mark.parametrize("key", KEYS)
def test_the_solution_shows_its_own_source_and_passes(key):
    shown = solution(key)
    assert shown.source.startswith("def ") and shown.report.passed
    assert "```python" in shown._repr_markdown_() and "PASS" in str(shown)


def test_an_answer_not_written_yet_is_named_so():
    report = check("fragments.a_owner", lambda row, k: None)
    assert not report.passed and "not answered yet" in str(report)


def test_a_check_against_another_truth_names_it():
    key = "fragments.c_owner"
    right = exercise(key).check(exercise(key).solution, truth=lambda row, col: (0, 0), against="the GPU")
    assert not right.passed and "differ from the GPU" in str(right)
    assert "agree with the GPU" in str(exercise(key).check(lambda r, c: (0, 0), truth=lambda r, c: (0, 0),
                                                             against="the GPU"))


@pytest.mark.parametrize("key", KEYS)
def test_a_report_and_a_solution_fit_the_book_s_text_column(key):
    from tcgemm.practice.exercise import WIDTH
    from tcgemm.style import TEXT_COLUMN_CHARS
    e = exercise(key)
    assert WIDTH == TEXT_COLUMN_CHARS
    shown = [str(solution(key))] + [str(e.check(typical)) for typical, _ in e.hints]
    assert all(len(line) <= WIDTH for text in shown for line in text.splitlines()), key
    assert repr(solution(key)) == str(solution(key))
