import pytest

from tcgemm.pipelines.scaling import fit_k_scaling


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
