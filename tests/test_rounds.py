import pytest

from tcgemm.engine.rounds import RoundsResult, round_order, rounds_table, summarize_rounds


def test_each_round_rotates_the_order_so_no_runner_always_follows_the_same_one():
    names = ["cuBLAS", "5.6", "5.7"]
    orders = [round_order(names, r) for r in range(3)]
    assert orders == [["cuBLAS", "5.6", "5.7"], ["5.6", "5.7", "cuBLAS"], ["5.7", "cuBLAS", "5.6"]]
    followers = {tuple(o[i:i + 2]) for o in orders for i in range(2)}
    assert len(followers) > 2
    assert round_order([], 4) == []


def test_the_verdict_is_ahead_or_behind_only_when_every_round_agrees():
    times = {"cuBLAS": [100e-6, 102e-6, 101e-6], "fast": [95e-6, 97e-6, 96e-6],
             "mixed": [99e-6, 103e-6, 100e-6], "slow": [110e-6, 108e-6, 111e-6]}
    results = {r.name: r for r in summarize_rounds(times, "cuBLAS")}
    assert set(results) == {"fast", "mixed", "slow"}
    assert results["fast"].verdict == "ahead" and results["slow"].verdict == "behind"
    assert results["mixed"].verdict == "level"
    assert results["fast"].ratios[0] == pytest.approx(100 / 95)
    assert results["fast"].median == pytest.approx(101 / 96)
    assert results["mixed"].low < 1 < results["mixed"].high


def test_a_round_where_they_tie_is_level():
    r = RoundsResult("tie", (1.0, 1.0), (1.0, 1.02))
    assert r.verdict == "level"


@pytest.mark.parametrize("times, message", [
    ({"k": [1.0, 1.0]}, "baseline"),
    ({"cuBLAS": [1.0, 1.0], "k": [1.0]}, "every round"),
    ({"cuBLAS": [1.0], "k": [1.0]}, "at least 2"),
    ({"cuBLAS": [1.0, 1.0], "k": [1.0, 0.0]}, "positive"),
])
def test_bad_rounds_are_refused_with_the_reason(times, message):
    with pytest.raises(ValueError, match=message):
        summarize_rounds(times, "cuBLAS")


def test_the_table_shows_median_spread_and_verdict():
    results = summarize_rounds({"cuBLAS": [100e-6, 100e-6], "k": [90e-6, 95e-6]}, "cuBLAS")
    table = rounds_table(results, "cuBLAS", "4096³", 2)
    row = table.records()[0]
    assert row["Kernel"] == "k" and row["verdict"] == "ahead"
    assert row["spread over the rounds"] == "105.3 to 111.1%"
    assert "2 interleaved rounds" in str(table)
