"""The sgemm exercises against the GPU: Kernels S1 and S2, traced (tcgemm.practice.gpu.sgemm), agree with the
book's solutions on every case, and a typical wrong answer is told where it differs from the kernels."""
import pytest

from tcgemm.practice import exercise
from tcgemm.practice.gpu.hardware import checked_on_the_gpu, on_the_gpu

pytestmark = pytest.mark.gpu
KEYS = ["sgemm.thread_origin", "sgemm.lds_address", "sgemm.global_load"]


def test_the_chapter_checks_these_on_the_gpu():
    assert checked_on_the_gpu("sgemm") == KEYS


@pytest.mark.parametrize("key", KEYS)
def test_the_solution_agrees_with_kernels_s1_and_s2(key):
    report = on_the_gpu(key)
    assert report.passed, str(report)
    assert report.against.startswith("Kernels S1 and S2 traced on the ")


@pytest.mark.parametrize("key", KEYS)
def test_a_typical_mistake_differs_from_the_kernels(key):
    typical, what = exercise(key).hints[0]
    report = on_the_gpu(key, typical)
    assert not report.passed and report.first and report.hint == what
    assert report.text.splitlines()[1].startswith("  64x64 tile, thread ")


def test_every_element_of_c_has_its_owner_and_every_load_was_recorded():
    from tcgemm.practice.gpu.sgemm import UNSET, trace
    from tcgemm.sgemm.sgemm_layout import loads_per_thread

    for tile in (64, 128):
        run = trace(tile)
        threads = tile * tile // 64
        assert sorted(set(run.owner.ravel().tolist())) == list(range(threads))
        assert (run.slots[:, :32 + loads_per_thread(tile)] != UNSET).all()


def test_it_refuses_an_exercise_it_cannot_check():
    with pytest.raises(KeyError, match="no hardware check"):
        on_the_gpu("sgemm.c_register")
