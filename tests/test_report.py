import pytest

from tcgemm.report import BenchResult, format_table, summarize, table_rows


def result(name, seconds, passed=True):
    return BenchResult(name, 4096, 4096, 4096, summarize([seconds] * 3), passed)


def test_summarize_median_and_quartiles():
    t = summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (t.median, t.q1, t.q3, t.minimum, t.maximum, t.runs) == (3.0, 2.0, 4.0, 1.0, 5.0, 5)
    assert t.spread == pytest.approx(2.0 / 3.0)


@pytest.mark.parametrize("bad", [[], [1.0, 0.0], [float("nan")]])
def test_summarize_refuses_bad_times(bad):
    with pytest.raises(ValueError):
        summarize(bad)


def test_rows_reproduce_the_seed_table():
    # The seed's RTX 4090 numbers: cuBLAS 895 us, Kernel 1.0 4680 us, peak 165.2 TFLOP/s.
    rows = table_rows([result("cuBLAS", 895e-6), result("Kernel 1.0", 4680e-6)], "cuBLAS", 165.2)
    assert rows[0]["tflops"] == pytest.approx(153.6, abs=0.05)
    assert rows[0]["pct_peak"] == pytest.approx(93.0, abs=0.05)
    assert rows[1]["tflops"] == pytest.approx(29.4, abs=0.05)
    assert rows[1]["pct_baseline"] == pytest.approx(19.1, abs=0.05)
    assert rows[1]["pct_peak"] == pytest.approx(17.8, abs=0.05)


def test_table_text_and_unknown_peak():
    text = format_table([result("cuBLAS", 1e-3), result("k", 2e-3, passed=False)], "cuBLAS", None)
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["Kernel", "Time"]
    assert "50.0%" in lines[3] and "n/a" in lines[3] and "FAIL" in lines[3]
    assert "2000" in lines[3]


def test_ceiling_column_only_when_a_ceiling_is_given():
    results = [result("cuBLAS", 1e-3), result("k", 2e-3)]
    plain = format_table(results, "cuBLAS", 100.0)
    assert "% mma.sync" not in plain
    lines = format_table(results, "cuBLAS", 100.0, ceiling_tflops=274.9).splitlines()
    assert "% mma.sync" in lines[0]
    rows = table_rows(results, "cuBLAS", 100.0, 274.9)
    assert rows[0]["pct_ceiling"] == pytest.approx(100 * rows[0]["tflops"] / 274.9)
    assert f"{rows[1]['pct_ceiling']:.1f}%" in lines[3]


def test_format_stall_samples_orders_opcodes_and_reasons_by_share():
    from tcgemm.report import format_stall_samples
    text = format_stall_samples({"STG": {"lg": 30, "wait": 10}, "HMMA": {"math": 40, "wait": 15, "selected": 5},
                                 "LDSM": {"barrier": 0}}, top=2)
    lines = text.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("HMMA") and "60.0% of samples" in lines[0] and "(math 40.0%, wait 15.0%, selected 5.0%)" in lines[0]
    assert lines[1].startswith("STG") and "40.0% of samples" in lines[1] and "(lg 30.0%, wait 10.0%)" in lines[1]
    assert format_stall_samples({}) == "no samples"
