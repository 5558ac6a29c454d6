import math

import pytest

from tcgemm.engine.timing import DEFAULT_PLAN, MAX_WARMUP_BATCH, TimingPlan, faster_pass, sweep_agreement


def test_reps_cover_the_target_time_within_floor_and_cap():
    plan = TimingPlan(target_s=0.05, wanted_reps=1, min_reps=20, max_reps=5000)
    assert plan.reps_for(1e-3) == 50                  # 50 runs of 1 ms: 50 ms
    assert 0.05 <= plan.reps_for(16e-6) * 16e-6 < 0.05 + 16e-6    # a 512^3 GEMM: 3125 runs
    assert plan.reps_for(8e-3) == 20                  # long kernels: the floor
    assert plan.reps_for(1e-6) == 5000                # very short ones: the cap
    assert plan.reps_for(0.05 / 49.5) == 50           # rounded up, never below the target


def test_long_kernels_get_the_wanted_runs_up_to_the_window():
    plan = TimingPlan(target_s=0.05, wanted_reps=500, window_s=1.0, min_reps=20, max_reps=5000)
    assert plan.reps_for(214e-6) == 500               # a 4096^3 GEMM: 500 runs, 0.1 s, not 234
    assert plan.reps_for(1.7e-3) == 500               # an 8192^3 GEMM: 500 runs, 0.85 s, not 30
    assert plan.reps_for(8e-3) == 125                 # 500 would take 4 s: the runs of 1 s
    assert plan.reps_for(0.2) == 20                   # still never below the floor
    assert plan.reps_for(20e-6) == 2500               # short kernels: the target time decides
    assert DEFAULT_PLAN.reps_for(1.7e-3) == 500 and DEFAULT_PLAN.reps_for(8e-3) == 125


@pytest.mark.parametrize("bad", [0.0, -1e-3, math.nan, math.inf])
def test_reps_need_a_positive_estimate(bad):
    with pytest.raises(ValueError, match="positive time"):
        DEFAULT_PLAN.reps_for(bad)


def test_fixed_counts_skip_the_estimate():
    plan = DEFAULT_PLAN.with_counts(reps=7, warmup=2)
    assert plan.fixed_reps and plan.reps_for(1e-6) == plan.reps_for(1.0) == 7
    assert plan.min_warmup == 2 and plan.warmup_s == DEFAULT_PLAN.warmup_s      # still warmed up by time
    assert not DEFAULT_PLAN.fixed_reps and DEFAULT_PLAN.with_counts() == DEFAULT_PLAN


def warm_up(plan: TimingPlan, seconds_per_run: float) -> list[int]:
    """The batches plan.warmup_batch asks for, for a kernel of a fixed time per run."""
    batches, done = [], 0
    while batch := plan.warmup_batch(done, done * seconds_per_run):
        batches.append(batch)
        done += batch
    return batches


def test_warm_up_lasts_the_time_for_short_kernels_and_the_count_for_long_ones():
    plan = TimingPlan(warmup_s=0.2, min_warmup=3)
    short = warm_up(plan, 20e-6)
    assert short[0] == 3 and sum(short) * 20e-6 >= 0.2 and (sum(short) - 1) * 20e-6 < 0.2   # 10 000 runs, no more
    assert warm_up(plan, 0.5) == [3]                  # three 0.5 s runs are 1.5 s of warm-up already
    long = warm_up(plan, 0.05)
    assert sum(long) == 4                              # 0.2 s in runs of 50 ms


def test_warm_up_batches_are_capped_so_the_clock_is_read_often():
    plan = TimingPlan(warmup_s=10.0, min_warmup=1)
    assert plan.warmup_batch(1, 1e-6) == MAX_WARMUP_BATCH
    assert plan.warmup_batch(0, 0.0) == 1 and plan.warmup_batch(5, 0.0) == 1


@pytest.mark.parametrize("field, value", [("warmup_s", -1.0), ("target_s", math.nan), ("min_reps", 0),
                                          ("window_s", -0.5), ("wanted_reps", 0),
                                          ("estimate_runs", 0), ("max_reps", 10)])
def test_plans_refuse_impossible_settings(field, value):
    with pytest.raises(ValueError, match=field):
        TimingPlan(**{field: value})


def sweep(kernel, cublas, labels=("512x512x512", "1x4096x4096")):
    return [{"family": "f", "label": label, "kernel_tflops": k, "cublas_tflops": c}
            for label, k, c in zip(labels, kernel, cublas)]


def test_sweep_agreement_per_shape_and_the_largest_deviation():
    agreement = sweep_agreement(sweep([100.0, 50.0], [200.0, 80.0]), sweep([103.0, 50.0], [196.0, 80.0]), "Kernel 4.5")
    assert [s.kernel_ratio for s in agreement.shapes] == pytest.approx([1.03, 1.0])
    assert [s.cublas_ratio for s in agreement.shapes] == pytest.approx([0.98, 1.0])
    assert agreement.max_deviation == pytest.approx(0.03) and agreement.within(0.05) and not agreement.within(0.02)
    table = agreement.table
    assert table.column("Kernel 4.5: run 2 / run 1") == pytest.approx([1.03, 1.0])
    assert table.column("M×N×K") == ["512×512×512", "1×4096×4096"]
    assert table.notes == ("TFLOP/s of the second sweep over the first, per shape; largest deviation 3.0% "
                           "(Kernel 4.5 at 512×512×512)",)


def test_sweep_agreement_skips_shapes_the_kernel_skipped():
    nan = math.nan
    agreement = sweep_agreement(sweep([nan, 50.0], [200.0, 80.0]), sweep([nan, 50.0], [100.0, 80.0]))
    assert math.isnan(agreement.shapes[0].kernel_ratio) and agreement.max_deviation == pytest.approx(0.5)
    assert "cuBLAS at 512×512×512" in agreement.table.notes[0]
    assert str(agreement.table).splitlines()[2].split()[2] == "n/a"


def test_sweep_agreement_needs_the_same_shapes():
    with pytest.raises(ValueError, match="different shapes"):
        sweep_agreement(sweep([1.0], [1.0]), sweep([1.0], [1.0], labels=("1024x1024x1024",)))
    with pytest.raises(ValueError, match="no shapes"):
        sweep_agreement([], [])


def test_a_shape_keeps_each_sides_faster_pass_and_fails_if_either_pass_failed():
    first, second = sweep([100.0, 50.0], [200.0, 80.0]), sweep([90.0, 55.0], [210.0, 70.0])
    for row in first + second:
        row["passed"] = True
    second[1]["passed"] = False
    kept = [faster_pass(a, b) for a, b in zip(first, second)]
    assert [(r["kernel_tflops"], r["cublas_tflops"], r["passed"]) for r in kept] == \
        [(100.0, 210.0, True), (55.0, 80.0, False)]


def test_passes_of_different_shapes_are_refused():
    with pytest.raises(ValueError, match="different shapes"):
        faster_pass(sweep([1.0], [1.0])[0], sweep([1.0], [1.0], labels=("1024x1024x1024",))[0])


def test_plan_labels_say_what_is_timed():
    from tcgemm.engine.timing import TARGET_ONLY_PLAN, plan_label
    assert plan_label(DEFAULT_PLAN) == "≥ 50 ms, ≥ 500 runs or 1 s, ≥ 20 runs"
    assert plan_label(TARGET_ONLY_PLAN) == "≥ 50 ms, ≥ 20 runs"


def test_windows_table_gives_each_plans_spread():
    from tcgemm.engine.timing import TARGET_ONLY_PLAN, windows_table
    table = windows_table([("cuBLAS", TARGET_ONLY_PLAN, [30, 33, 31], [1.5e-3, 1.8e-3, 1.6e-3]),
                           ("cuBLAS", DEFAULT_PLAN, [500] * 3, [1.70e-3, 1.71e-3, 1.70e-3])], "8192³")
    text = str(table)
    assert "30–33" in text and "1,500–1,800" in text and "20.0%" in text and "0.6%" in text
    assert " 500 " in text and "3 timings in a row" in text

