"""tcgemm.pipelines.readings: the values the pipelines chapter's readings take out of its results."""
import pytest

from tcgemm.pipelines.readings import sample_shares, share, span_numbers
from tcgemm.engine.report import stall_table
from tcgemm.engine.timing import spread_table


def test_sample_shares_are_percentages_of_all_samples():
    samples = {"HMMA": {"math": 30, "wait": 10}, "STG": {"lg": 10}, "IMAD": {}}
    shares = sample_shares(samples)
    assert shares["HMMA"] == {"all": 80.0, "math": 60.0, "wait": 20.0}
    assert shares["STG"] == {"all": 20.0, "lg": 20.0}
    assert share(shares, "HMMA", "wait") == 20.0
    assert share(shares, "LDSM") == 0.0 and share(shares, "STG", "math") == 0.0
    assert sample_shares({}) == {} and sample_shares({"HMMA": {}}) == {}


def test_sample_shares_agree_with_the_stall_table():
    samples = {"HMMA": {"math": 224, "wait": 169, "selected": 59}, "LDSM": {"barrier": 80, "wait": 45}}
    row = stall_table(samples).records()[0]
    assert row["Opcode"] == "HMMA"
    assert row["% of samples"] == pytest.approx(sample_shares(samples)["HMMA"]["all"])


def test_span_numbers_reads_what_spread_table_writes():
    table = spread_table([("cuBLAS", "old", [28, 32], [1602e-6, 1776e-6]), ("cuBLAS", "new", [500, 500], [7.52e-6, 7.55e-6])],
                         "plan", "test")
    first, second = table.records()
    assert span_numbers(first["runs"]) == [28.0, 32.0]
    assert span_numbers(first["medians, µs"]) == [1602.0, 1776.0]
    assert span_numbers(second["runs"]) == [500.0]
    assert span_numbers(second["medians, µs"]) == [7.52, 7.55]
    with pytest.raises(ValueError, match="no number"):
        span_numbers("n/a")
