"""The pipelines exercises against the GPU: Kernel 3.0, traced (tcgemm.practice.gpu.pipelines), agrees with the
book's solutions on every case, and a typical wrong answer is told where it differs from the kernel."""
import pytest

from tcgemm.practice import exercise
from tcgemm.practice.gpu.hardware import checked_on_the_gpu, on_the_gpu

pytestmark = pytest.mark.gpu
KEYS = ["pipelines.stage", "pipelines.prologue", "pipelines.copied", "pipelines.ring"]


def test_the_chapter_checks_these_on_the_gpu():
    assert checked_on_the_gpu("pipelines") == KEYS


@pytest.mark.parametrize("key", KEYS)
def test_the_solution_agrees_with_kernel_3_0(key):
    report = on_the_gpu(key)
    assert report.passed, str(report)
    assert report.against.startswith("Kernel 3.0 traced on the ")


@pytest.mark.parametrize("key", KEYS)
def test_a_typical_mistake_differs_from_kernel_3_0(key):
    typical, what = exercise(key).hints[0]
    report = on_the_gpu(key, typical)
    assert not report.passed and report.first and report.hint == what
    assert report.text.splitlines()[1].startswith("  N = 2, ")


def test_the_trace_of_a_short_ring():
    from tcgemm.practice.gpu.pipelines import COMPUTE, COPY, Record, trace

    assert trace(3, 2) == (Record(COPY, 0, 0, -1), Record(COPY, 1, 1, -1),
                           Record(COMPUTE, 0, 0, 1), Record(COMPUTE, 1, 1, 2))


def test_it_refuses_an_exercise_it_cannot_check():
    with pytest.raises(KeyError, match="no hardware check"):
        on_the_gpu("pipelines.wait_count")
