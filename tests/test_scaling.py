import pytest

from tcgemm.pipelines.scaling import fit_k_scaling
from tcgemm.style import TEXT_COLUMN_CHARS


def test_fit_recovers_fixed_cost_and_loop_rate():
    M = N = 4096
    fixed, rate = 30e-6, 500e12                       # 30 us outside the loop, loop at 500 TFLOP/s
    Ks = [2048, 4096, 8192, 16384]
    times = [fixed + 2 * M * N * K / rate for K in Ks]
    fit = fit_k_scaling(M, N, Ks, times)
    assert fit.fixed_us == pytest.approx(30, rel=1e-6)
    assert fit.loop_tflops == pytest.approx(500, rel=1e-6)
    assert fit.share_fixed(4096) == pytest.approx(30e-6 / times[1], rel=1e-6)


def test_fit_refuses_what_is_not_a_line_in_k():
    with pytest.raises(ValueError, match="two or more"):
        fit_k_scaling(64, 64, [4096, 4096], [1e-3, 1e-3])
    with pytest.raises(ValueError, match="does not grow"):
        fit_k_scaling(64, 64, [1024, 2048], [2e-3, 1e-3])


def test_scaling_table_and_the_loop_at_the_ceiling():
    from tcgemm.pipelines.scaling import loop_at_ceiling_text, scaling_table
    Ks = (2048, 4096, 8192, 16384)
    fit = fit_k_scaling(4096, 4096, Ks, [(20 + 0.1 * K) * 1e-6 for K in Ks])   # 20 µs + 0.1 µs per K
    table = scaling_table("Kernel 4.4", {"as written": ([(20 + 0.1 * K) * 1e-6 for K in Ks], fit)}, 500.0, Ks)
    assert table.columns[-1].name == "µs at K = 2k, 4k, 8k, 16k"
    (row,) = table.rows
    assert row[0] == "as written" and row[-1] == "225, 430, 839, 1658"
    assert row[1] == pytest.approx(2 * 4096 ** 2 / 0.1e-6 / 1e12) and row[2] == pytest.approx(100 * row[1] / 500)
    assert row[3] == pytest.approx(20) and row[4] == pytest.approx(100 * 20 / (20 + 409.6))
    # 4096³ at 500 TFLOP/s takes 274.9 µs; 20 µs more holds it to 93.2% of the ceiling
    text = loop_at_ceiling_text(20, 500.0, 4096, 4096, 4096)
    assert " ".join(text.split()).endswith("would hold 4096³ to 93.2% of the ceiling")
    assert all(len(line) <= TEXT_COLUMN_CHARS for line in text.splitlines())

