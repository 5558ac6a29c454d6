"""The mma fragment chapter's exercises against the hardware: the mma probe's own answer agrees with the book's
solutions on every entry, and a typical mistake disagrees with it where the tables say it should. The two
checks are written once here, for every chapter's hardware truths."""
import pytest

from tcgemm.practice import exercise, exercises
from tcgemm.practice.gpu.fragments import TRUTHS
from tcgemm.practice.gpu.hardware import checked_on_the_gpu, on_the_gpu

pytestmark = pytest.mark.gpu
KEYS = list(TRUTHS)


def solution_agrees(key: str, against: str) -> None:
    """The book's solution agrees on every case with the hardware's answer, named `against` ..."""
    report = on_the_gpu(key)
    assert report.passed and report.checked == len(list(exercise(key).cases())), str(report)
    assert f"agree with {against}" in report.text


def typical_mistake_disagrees(key: str, against: str) -> None:
    """... and the exercise's first typical mistake differs from it where it differs from the model."""
    e = exercise(key)
    typical, what = e.hints[0]
    report, on_the_model = on_the_gpu(key, typical), e.check(typical)
    assert not report.passed and report.hint == what, str(report)
    assert report.wrong == on_the_model.wrong and report.first == on_the_model.first, str(report)
    assert f"differ from {against}" in report.text


def test_every_exercise_of_the_chapter_is_checked_on_the_gpu():
    assert checked_on_the_gpu("mma_fragments") == KEYS == [e.key for e in exercises("mma_fragments")]


@pytest.mark.parametrize("key", KEYS)
def test_the_solution_agrees_with_the_hardware(key):
    solution_agrees(key, "probe_mma on the ")


@pytest.mark.parametrize("key", KEYS)
def test_a_typical_mistake_disagrees_with_the_hardware(key):
    typical_mistake_disagrees(key, "probe_mma on the ")


def test_an_unknown_exercise_is_refused():
    with pytest.raises(KeyError, match="no exercise 'fragments.d_owner'"):
        on_the_gpu("fragments.d_owner")
