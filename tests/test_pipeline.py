"""The cp.async ring buffer model (tcgemm.pipelines.pipeline) and its pictures (tcgemm.pipelines.draw_pipeline)."""
from dataclasses import replace

import pytest
from matplotlib.patches import Rectangle

from tcgemm.pipelines import draw_pipeline, pipeline
from tcgemm.pipelines.pipeline import Interval, Step, check_schedule, schedule

CASES = sorted({(n, k) for n in range(2, 7) for k in (1, 2, n - 1, n, 3 * n + 1) if k >= 1})


@pytest.mark.parametrize("n,k", CASES)
def test_schedule_is_correct_and_counts_its_events(n, k):
    steps = schedule(n, k)
    check_schedule(steps, n, k)
    kinds = [s.kind for s in steps]
    assert kinds.count("issue") == kinds.count("compute") == k
    assert kinds.count("wait") == kinds.count("barrier") == k
    assert kinds.count("commit") == n - 1 + k
    assert [s.group for s in steps if s.kind == "wait"] == list(range(k))   # wait kt completes group kt
    assert {s.tile: s.group for s in steps if s.kind == "issue"} == {t: t for t in range(k)}
    assert [(s.tile, s.stage) for s in steps if s.kind == "compute"] == [(t, t % n) for t in range(k)]
    prologue = [s.kind for s in steps if s.iteration == -1]
    assert (prologue.count("issue"), prologue.count("commit")) == (min(k, n - 1), n - 1)


def test_small_schedule_in_program_order():
    steps = schedule(2, 2)
    assert [(s.kind, s.iteration, s.tile) for s in steps] == [
        ("issue", -1, 0), ("commit", -1, 0),
        ("wait", 0, None), ("barrier", 0, None), ("issue", 0, 1), ("commit", 0, 1), ("compute", 0, 0),
        ("wait", 1, None), ("barrier", 1, None), ("commit", 1, None), ("compute", 1, 1)]
    assert steps[2] == Step("wait", 0, group=0, in_flight=0)


@pytest.mark.parametrize("n", range(2, 7))
def test_waiting_for_one_group_too_few_is_rejected(n):
    with pytest.raises(ValueError, match="tile 0 .* not guaranteed complete"):
        check_schedule(schedule(n, 3 * n + 1, wait_in_flight=n - 1), n)


@pytest.mark.parametrize("n,k", [c for c in CASES if c[0] >= 3])
def test_dropping_the_empty_commits_is_rejected(n, k):
    with pytest.raises(ValueError, match="not guaranteed complete"):
        check_schedule(schedule(n, k, skip_empty_commits=True), n)


def test_verdict_table_accepts_the_kernel_and_names_why_a_break_is_rejected():
    table = pipeline.verdict_table({"as written": schedule(3, 6),
                                    "wait_group N-1": schedule(3, 6, wait_in_flight=2)}, 3, 6)
    assert [c.name for c in table.columns] == ["Case", "Verdict", "Reason"]
    (ok, broken) = table.rows
    assert ok == ("as written", "accepted", "")
    assert broken[:2] == ("wait_group N-1", "REJECTED") and "not guaranteed complete" in broken[2]


def test_with_two_stages_empty_commits_do_not_matter():
    steps = schedule(2, 7, skip_empty_commits=True)
    # wait_group 0 waits for everything, so no wait depends on how many groups were committed
    assert [s.in_flight for s in steps if s.kind == "wait"] == [0] * 7
    assert check_schedule(steps, 2) is None
    with pytest.raises(ValueError, match="not guaranteed complete"):   # from 3 stages on they matter
        check_schedule(schedule(3, 7, skip_empty_commits=True), 3)


def test_the_same_break_made_by_editing_the_steps_is_rejected():
    steps = [s for s in schedule(4, 9) if not (s.kind == "commit" and s.tile is None)]
    with pytest.raises(ValueError, match="tile 7 .* not guaranteed complete"):
        check_schedule(steps, 4)


def _move_barrier_after_issue(steps, iteration):
    i = next(i for i, s in enumerate(steps) if s.kind == "barrier" and s.iteration == iteration)
    return steps[:i] + steps[i + 1:i + 3] + [steps[i]] + steps[i + 3:]


@pytest.mark.parametrize("n", range(2, 7))
def test_issue_before_the_barrier_is_rejected(n):
    steps = schedule(n, 3 * n + 1)
    check_schedule(_move_barrier_after_issue(steps, 0), n)   # stage n-1 was never used: harmless
    with pytest.raises(ValueError, match=f"tile {n} is copied into stage 0 with no barrier since tile 0"):
        check_schedule(_move_barrier_after_issue(steps, 1), n)


def test_barrier_before_the_wait_is_rejected():
    steps = schedule(3, 5)
    steps[4], steps[5] = steps[5], steps[4]   # barrier, then wait
    with pytest.raises(ValueError, match="tile 0 is computed with no barrier after the wait"):
        check_schedule(steps, 3)


def test_overwriting_a_stage_before_its_tile_is_computed_is_rejected():
    steps = [replace(s, stage=0) if s.kind == "issue" and s.tile == 2 else s for s in schedule(3, 6)]
    with pytest.raises(ValueError, match="tile 2 overwrites stage 0 before tile 0"):
        check_schedule(steps, 3)


def test_issue_and_compute_order_and_completeness():
    steps = schedule(3, 6)
    computes = [i for i, s in enumerate(steps) if s.kind == "compute"]
    swapped = list(steps)
    swapped[computes[1]], swapped[computes[2]] = steps[computes[2]], steps[computes[1]]
    with pytest.raises(ValueError, match="tile 2 computed out of order, expected tile 1"):
        check_schedule(swapped, 3)
    issue = next(s for s in steps if s.kind == "issue" and s.tile == 4)
    with pytest.raises(ValueError, match="tile 4 issued out of order, expected tile 6"):
        check_schedule(steps[:-1] + [issue, steps[-1]], 3)
    with pytest.raises(ValueError, match=r"tiles \[5\] never computed"):
        check_schedule(steps[:computes[-1]], 3)
    with pytest.raises(ValueError, match=r"tiles \[6, 7\] never issued"):
        check_schedule(steps, 3, k_tiles=8)
    with pytest.raises(ValueError, match="tile 0 computed from stage 1, which holds tile 1"):
        check_schedule([*steps[:4], Step("wait", 0, in_flight=0), Step("barrier", 0), Step("compute", 0, 0, 1)], 3)
    with pytest.raises(ValueError, match="unknown step kind 'sync'"):
        check_schedule([Step("sync", 0)], 3)


@pytest.mark.parametrize("args,match", [
    ((1, 4), "n_stages must be >= 2"), ((3, 0), "k_tiles must be >= 1"),
    ((2.0, 4), "n_stages must be an int"), ((3, True), "k_tiles must be an int")])
def test_schedule_arguments_are_validated(args, match):
    with pytest.raises(ValueError, match=match):
        schedule(*args)


def test_wait_in_flight_is_validated():
    with pytest.raises(ValueError, match="wait_in_flight must be >= 0"):
        schedule(3, 4, wait_in_flight=-1)


def test_ring_state_follows_the_schedule():
    assert pipeline.ring_state(4, 10, 3) == [(4, "in flight"), (5, "in flight"), (6, "in flight"), (3, "computing")]
    assert pipeline.ring_state(4, 5, 3) == [(4, "in flight"), (None, "free"), (None, "free"), (3, "computing")]
    with pytest.raises(ValueError, match="iteration must be < k_tiles"):
        pipeline.ring_state(4, 5, 5)


def _compute_starts(intervals):
    return [iv.start for iv in intervals if iv.kind == "compute"]


@pytest.mark.parametrize("n", range(2, 7))
@pytest.mark.parametrize("slack", [1.0, 1.5])
def test_enough_stages_hide_the_copy_after_the_first_tile(n, slack):
    copy = 60.0
    compute = slack * copy / (n - 1)
    intervals = pipeline.timeline(n, 40, copy, compute)
    assert [iv for iv in intervals if iv.kind == "wait"] == [Interval("wait", 0, 0, 0.0, copy)]
    starts = _compute_starts(intervals)
    assert all(b - a == pytest.approx(compute) for a, b in zip(starts, starts[1:]))


def test_two_stages_with_a_slow_copy_run_at_the_copy_time():
    intervals = pipeline.timeline(2, 20, 3.0, 1.0)
    starts = _compute_starts(intervals)
    assert all(b - a == pytest.approx(3.0) for a, b in zip(starts, starts[1:]))
    assert pipeline.steady_state_period(2, 3.0, 1.0) == 3.0
    assert len([iv for iv in intervals if iv.kind == "wait"]) == 20


@pytest.mark.parametrize("n,copy,compute", [(2, 5.0, 1.0), (3, 7.0, 1.0), (4, 10.0, 2.0), (5, 9.0, 3.0), (6, 3.0, 0.5)])
def test_average_period_approaches_the_steady_state(n, copy, compute):
    starts = _compute_starts(pipeline.timeline(n, 400, copy, compute))
    average = (starts[-1] - starts[0]) / (len(starts) - 1)
    assert average == pytest.approx(pipeline.steady_state_period(n, copy, compute), rel=0.01)


def test_timeline_copies_land_before_their_compute_and_stages_do_not_overlap():
    intervals = pipeline.timeline(3, 12, 4.0, 1.0)
    land = {iv.tile: iv.end for iv in intervals if iv.kind == "copy"}
    assert all(land[iv.tile] <= iv.start for iv in intervals if iv.kind == "compute")
    for stage in range(3):
        row = sorted((iv.start, iv.end) for iv in intervals if iv.stage == stage and iv.kind != "wait")
        assert all(a[1] <= b[0] for a, b in zip(row, row[1:]))
    with pytest.raises(ValueError, match="copy_time must be a positive finite number"):
        pipeline.timeline(3, 4, 0, 1.0)


def _texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_timeline_figure_labels_every_copy_compute_and_wait():
    n, k = 3, 8
    fig = draw_pipeline.timeline_figure(n, k, 3.0, 1.0)
    texts = _texts(fig)
    assert sorted(t for t in texts if t.startswith("mma t")) == sorted(f"mma t{t}" for t in range(k))
    assert sum(t.startswith("load t") for t in texts) == k
    waits = [iv for iv in pipeline.timeline(n, k, 3.0, 1.0) if iv.kind == "wait"]
    assert sum(t.startswith("wait t") for t in texts) == len(waits) == 4
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["stage 0", "stage 1", "stage 2", "warps waiting"]
    hatched = [p for a in fig.axes for p in a.patches if isinstance(p, Rectangle) and p.get_hatch()]
    # A copy cut by a panel edge is drawn in both panels: its parts add up to the whole copy.
    assert sum(p.get_width() for p in hatched) == pytest.approx(k * 3.0)
    assert ax.get_title().startswith("N = 3 stages, copy 3, mma 1 per tile: period 1.5 per tile")


def test_ring_figure_names_each_slot():
    fig = draw_pipeline.ring_figure(4, 3, 5)
    texts = _texts(fig)
    assert [t for t in texts if t.startswith("stage")] == [f"stage {s}" for s in range(4)]
    assert [t for t in texts if not t.startswith("stage")] == ["t4\nin flight", "free", "free", "t3\nmma"]
