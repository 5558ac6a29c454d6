"""The cp.async pipeline chapter's exercises (tcgemm.practice.pipelines): the book's solutions pass, typical
wrong answers fail with their own hint and the first wrong case named, and the model's wait count is the one
the pipeline's own checker accepts."""
from dataclasses import replace

import pytest

from tcgemm.pipelines.pipeline import check_schedule, schedule
from tcgemm.practice import check, exercise, exercises
from tcgemm.practice.pipelines import CHAPTER, EXERCISES

KEYS = [e.key for e in EXERCISES]


def _with_waits(n, k, counts, empty_groups):
    """schedule(n, k), its wait before computing tile kt keeping counts[kt] groups in flight."""
    steps, commits, done = [], 0, -1
    for step in schedule(n, k, skip_empty_commits=not empty_groups):
        if step.kind == "commit":
            commits += 1
        if step.kind == "wait":
            count = counts[step.iteration]
            done = max(done, commits - 1 - count)
            step = replace(step, group=done, in_flight=count)
        steps.append(step)
    return steps


@pytest.mark.parametrize("empty_groups", [True, False])
def test_the_model_wait_count_is_the_largest_the_checker_accepts(empty_groups):
    e = exercise("pipelines.wait_count")
    for n in range(2, 7):
        for k in range(1, 10):
            counts = [e.model(n, k, kt, empty_groups) for kt in range(k)]
            check_schedule(_with_waits(n, k, counts, empty_groups), n, k)
            for kt in range(k):
                one_more = counts[:kt] + [counts[kt] + 1] + counts[kt + 1:]
                with pytest.raises(ValueError, match=f"tile {kt} .* not guaranteed complete"):
                    check_schedule(_with_waits(n, k, one_more, empty_groups), n, k)


def test_a_report_names_the_first_wrong_case_and_an_error():
    report = check("pipelines.copied", lambda n, k, kt: None)
    assert str(report).splitlines()[1] == "  N = 2, 2 K tiles, iteration 0: expected (1, 1), got None"
    assert not report.hint
    assert check("pipelines.prologue", lambda n, k: tuple((t, t) for t in range(min(n - 1, k)))).passed
    broken = check("pipelines.ring", lambda n, k, kt: [None][kt])
    assert "N = 2, 2 K tiles, iteration 1: the answer raised IndexError" in str(broken)
    assert "must be a function" in str(check("pipelines.stage", 3))


def test_the_chapter_has_its_exercises():
    assert [e.key for e in exercises(CHAPTER)] == KEYS and len(KEYS) >= 3
