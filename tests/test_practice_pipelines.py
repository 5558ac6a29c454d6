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
    copied = exercise("pipelines.copied").solution
    report = check("pipelines.copied", lambda n, k, kt: None if kt == 0 else copied(n, k, kt))
    assert report.text.splitlines()[1] == "  N = 2, 2 K tiles, iteration 0: expected (1, 1), got None"
    assert not report.hint
    assert check("pipelines.prologue", lambda n, k: tuple((t, t) for t in range(min(n - 1, k)))).passed
    broken = check("pipelines.ring", lambda n, k, kt: [None][kt])
    assert "N = 2, 2 K tiles, iteration 1: the answer raised IndexError" in broken.text
    assert "must be a function" in check("pipelines.stage", 3).text


def test_the_chapter_has_its_exercises():
    assert [e.key for e in exercises(CHAPTER)] == KEYS and len(KEYS) >= 3


# The hardware check (tcgemm.practice.gpu.pipelines), on the CPU: a trace made from the model's own loop must
# give the model's answers, and Kernel 3.0's source must still take the tracing edits.
def _trace_of_the_model(n, k):
    """The records Kernel 3.0 makes, from the model's loop: the prologue's copies, then per iteration its
    compute (the kernel records it at its ldmatrix, before the copy) and its copy."""
    from tcgemm.practice.gpu.pipelines import COMPUTE, COPY, Record

    steps = schedule(n, k)
    records = [Record(COPY, s.tile, s.stage, -1) for s in steps if s.kind == "issue" and s.iteration == -1]
    for kt in range(k):
        records += [Record(COMPUTE, kt, s.stage, s.tile + 1)
                    for s in steps if s.kind == "compute" and s.iteration == kt]
        records += [Record(COPY, s.tile, s.stage, -1) for s in steps if s.kind == "issue" and s.iteration == kt]
    return tuple(records)


@pytest.fixture
def model_trace(monkeypatch):
    from tcgemm.practice.gpu import pipelines as on_gpu

    monkeypatch.setattr(on_gpu, "trace", _trace_of_the_model)
    monkeypatch.setattr(on_gpu, "_against", lambda: "the model's trace")


def test_every_hardware_truth_is_an_exercise_of_the_chapter():
    from tcgemm.practice.gpu.pipelines import TRUTHS

    assert set(TRUTHS) <= set(KEYS) and "pipelines.wait_count" not in TRUTHS and len(TRUTHS) >= 1


@pytest.mark.parametrize("key", ["pipelines.stage", "pipelines.prologue", "pipelines.copied", "pipelines.ring"])
def test_the_hardware_check_reads_the_model_off_the_models_trace(model_trace, key):
    from tcgemm.practice.gpu.hardware import on_the_gpu

    e = exercise(key)
    assert on_the_gpu(key).text.endswith("agree with the model's trace")
    typical, what = e.hints[0]
    wrong = on_the_gpu(key, typical)
    assert not wrong.passed and wrong.first and wrong.hint == what and wrong.against == "the model's trace"


def test_a_trace_that_found_another_tile_disagrees(monkeypatch):
    from tcgemm.practice.gpu import pipelines as on_gpu
    from tcgemm.practice.gpu.hardware import on_the_gpu

    def shifted(n, k):
        return tuple(on_gpu.Record(r.kind, r.tile, r.stage, r.tag + 1 if r.kind == on_gpu.COMPUTE else r.tag)
                     for r in _trace_of_the_model(n, k))
    monkeypatch.setattr(on_gpu, "trace", shifted)
    monkeypatch.setattr(on_gpu, "_against", lambda: "a shifted trace")
    report = on_the_gpu("pipelines.stage")
    assert report.text.splitlines()[1] == "  N = 2, K tile 0: expected None, got 0"


def test_the_hardware_check_refuses_an_exercise_it_cannot_check():
    from tcgemm.practice.gpu.hardware import on_the_gpu

    with pytest.raises(KeyError, match="'pipelines.wait_count' has no hardware check"):
        on_the_gpu("pipelines.wait_count")


def test_kernel_3_0_takes_the_tracing_edits_and_compiles():
    from tcgemm.engine.gpu.sass import sass_tools_missing
    from tcgemm.engine.gpu.nvrtc_offline import compile_source_text, cuobjdump_sass
    from tcgemm.practice.gpu.pipelines import EDITS, KERNEL, PRELUDE
    from tcgemm.practice.gpu.traced import traced_source

    source = traced_source(KERNEL, PRELUDE, EDITS)
    assert source.count("ring_record(") == 3
    with pytest.raises(ValueError, match="expects 'no such line' once"):
        traced_source(KERNEL, PRELUDE, (("no such line", ""),))
    if missing := sass_tools_missing():
        pytest.skip(missing)
    sass = cuobjdump_sass(compile_source_text(source, "k3.0 traced", "sm_80", (("N_STAGES", 6),)))
    assert "LDGSTS" in sass and "HMMA" in sass


def test_a_skeleton_that_returns_none_is_not_answered_yet():
    for key in KEYS:
        assert "not answered yet" in check(key, lambda *args: None).text, key
    assert "not answered yet" not in check("pipelines.copied", lambda n, k, kt: None if kt else (0, 0)).text
