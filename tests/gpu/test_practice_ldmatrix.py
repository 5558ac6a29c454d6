"""The ldmatrix chapter's exercises against the hardware: the receivers the ldmatrix probe sees, and the row
addresses that the ldmatrix and mma probes together require, agree with the book's solutions on every case;
a typical mistake disagrees where the tables say it should."""
import pytest

from tcgemm.practice import exercises
from tcgemm.practice.gpu.hardware import checked_on_the_gpu, on_the_gpu
from tcgemm.practice.gpu.ldmatrix import ADDRESSES, TRUTHS
from tests.gpu.test_practice_fragments import solution_agrees, typical_mistake_disagrees

pytestmark = pytest.mark.gpu
KEYS = list(TRUTHS)


def against(key: str) -> str:
    return "probe_ldmatrix and probe_mma on the " if key in ADDRESSES else "probe_ldmatrix on the "


def test_every_exercise_of_the_chapter_is_checked_on_the_gpu():
    assert checked_on_the_gpu("ldmatrix") == KEYS == [e.key for e in exercises("ldmatrix")]


@pytest.mark.parametrize("key", KEYS)
def test_the_solution_agrees_with_the_hardware(key):
    solution_agrees(key, against(key))


@pytest.mark.parametrize("key", KEYS)
def test_a_typical_mistake_disagrees_with_the_hardware(key):
    typical_mistake_disagrees(key, against(key))


def test_an_unknown_exercise_is_refused():
    with pytest.raises(KeyError, match="no exercise 'ldmatrix.a_x1_address'"):
        on_the_gpu("ldmatrix.a_x1_address")
