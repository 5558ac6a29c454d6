"""The mma.sync ceiling's operands, registers and expected result (the GPU run is tests/gpu)."""
import numpy as np
import pytest

from tcgemm import ceiling


def test_operands_are_nonzero_eighths_within_half():
    a, b = ceiling.operands(seed=1)
    assert a.shape == (ceiling.CHAINS, 16, 16) and b.shape == (16, 8)
    for x in (a, b):
        values = x.astype(np.float64) * 8
        assert np.all(values == np.round(values)) and np.all(values != 0) and np.all(np.abs(values) <= 4)


def test_registers_hold_each_lanes_fragment():
    a, b = ceiling.operands(seed=2)
    a_regs, b_regs = ceiling.registers(a, b)
    assert a_regs.shape == (ceiling.CHAINS, 32, 4) and b_regs.shape == (32, 2) and a_regs.dtype == np.uint32
    halves = a_regs[3].view(np.float16)                       # chain 3, (32, 8) fp16
    assert np.array_equal(ceiling.A_LAYOUT.scatter(halves), a[3])
    assert np.array_equal(ceiling.B_LAYOUT.scatter(b_regs.view(np.float16)), b)


def test_expected_is_exact_in_fp32_at_the_largest_iters():
    """Accumulating in fp32 chain by chain, as the Tensor Cores do, gives exactly the float64 answer."""
    a, b = ceiling.operands(seed=3)
    a[:] = np.float16(0.5)
    b[:] = np.float16(0.5)      # the largest magnitudes the operands can take
    iters = ceiling.MAX_ITERS
    chains = [np.float32(iters) * (a[c].astype(np.float32) @ b.astype(np.float32)) for c in range(ceiling.CHAINS)]
    total = np.zeros((16, 8), dtype=np.float32)
    for c in chains:
        total += c
    assert np.array_equal(total.astype(np.float64), ceiling.expected(a, b, iters))


def test_warp_results_scatter_each_warp():
    d = np.arange(2 * 32 * 4, dtype=np.float32).reshape(2, 32, 4)
    m = ceiling.warp_results(d)
    assert m.shape == (2, 16, 8)
    assert m[1, 0, 0] == d[1, 0, 0] and m[0, 8, 1] == d[0, 0, 3]   # c3 of lane 0 is (row 8, col 1)


def test_flops_and_iters_limits():
    assert ceiling.flops(warps=2, iters=3) == 2 * 3 * ceiling.CHAINS * 4096
    with pytest.raises(ValueError, match="iters"):
        ceiling.expected(*ceiling.operands(seed=0), iters=ceiling.MAX_ITERS + 1)


def test_ceiling_reports_fit_the_text_column():
    """Both ceilings (measured in tests/gpu) print their rate, then how it was measured, each line
    within the book's text column."""
    from tcgemm.gpu.ceiling import Ceiling
    from tcgemm.gpu.ffma_ceiling import FfmaCeiling
    from tcgemm.report import Timing
    from tcgemm.style import TEXT_COLUMN_CHARS
    timing = Timing(1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 10)
    reports = [str(Ceiling(631.74, timing, 16, 2048, True)), str(FfmaCeiling(65.61, timing, 8, 1024, False))]
    assert [r.splitlines()[0] for r in reports] == ["mma.sync m16n8k16 ceiling: 631.7 TFLOP/s",
                                                    "FFMA ceiling: 65.6 TFLOP/s"]
    assert "result exact" in reports[0] and "result WRONG" in reports[1]
    assert all(len(line) <= TEXT_COLUMN_CHARS for r in reports for line in r.splitlines()), reports


def test_runs_table_and_per_clock_text():
    from types import SimpleNamespace
    from tcgemm.style import TEXT_COLUMN_CHARS
    runs = [SimpleNamespace(warps_per_sm=4, tflops=300.0, exact=True),
            SimpleNamespace(warps_per_sm=8, tflops=600.0, exact=False)]
    assert ceiling.runs_table(runs).rows == ((4, 300.0, "exact"), (8, 600.0, "WRONG"))
    # the H100's 639.0 TFLOP/s on 132 SMs at 1980 MHz: 0.60 m16n8k16 per clock per SM
    text = ceiling.per_clock_text(639.0, 132, 1980)
    assert text.startswith("= 0.60 m16n8k16 per clock per SM at the 1980 MHz boost clock")
    assert text.endswith("under load)") and all(len(line) <= TEXT_COLUMN_CHARS for line in text.splitlines())

