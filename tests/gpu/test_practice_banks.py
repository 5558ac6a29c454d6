"""The bank chapter's exercises against the GPU's own timings (tcgemm.practice.gpu.banks): the book's solutions
agree with the hardware on every case, a typical mistake does not and is named, and an exercise without a
hardware check is refused."""
import pytest

from tcgemm.practice import exercise
from tcgemm.practice.banks import CHAPTER

pytestmark = pytest.mark.gpu

KEYS = ["banks.padded_bank", "banks.xor_bank", "banks.ldmatrix_wavefronts"]


def test_the_chapter_checks_three_exercises_on_the_gpu():
    from tcgemm.practice.gpu.hardware import checked_on_the_gpu
    assert checked_on_the_gpu(CHAPTER) == KEYS


def test_every_word_has_one_bank_and_it_is_its_index_modulo_32():
    """The timings give every word of the first 4 KiB exactly one bank of the 32 (the calibration inside passed)."""
    from tcgemm.practice.gpu.banks import BANK_WORDS, word_banks
    banks = word_banks()
    assert banks == tuple(word % 32 for word in range(BANK_WORDS)), [
        (word, bank) for word, bank in enumerate(banks) if bank != word % 32][:5]


@pytest.mark.parametrize("key", KEYS)
def test_the_solution_agrees_with_the_hardware(key):
    from tcgemm.engine.gpu.device import device_info
    from tcgemm.practice.gpu.hardware import on_the_gpu
    report = on_the_gpu(key)
    assert report.passed, str(report)
    assert report.against.startswith(f"the {device_info().name}'s timings") and report.against in report.text


@pytest.mark.parametrize("key", KEYS)
def test_a_typical_mistake_disagrees_with_the_hardware(key):
    from tcgemm.practice.gpu.hardware import on_the_gpu
    typical, what = exercise(key).hints[0]
    report = on_the_gpu(key, typical)
    assert not report.passed and report.first and report.hint == what, str(report)
    assert f"differ from {report.against}; the first:" in report.text


def test_an_exercise_without_a_hardware_check_is_refused():
    from tcgemm.practice.gpu.hardware import on_the_gpu
    with pytest.raises(KeyError, match="has no hardware check"):
        on_the_gpu("banks.conflict_free_layout")
    with pytest.raises(KeyError, match="no exercise 'banks.no_such_exercise'"):
        on_the_gpu("banks.no_such_exercise")
