"""The mma.sync ceiling's operands, registers and expected result for every variant (the GPU run is
tests/gpu)."""
import numpy as np
import pytest

from tcgemm.engine import ceiling
from tcgemm.engine.catalog import PROBES
from tcgemm.fragment_layouts import MMA_VARIANTS, mma_layouts
from tcgemm.registers import from_registers


def test_every_variant_has_its_ceiling_kernel():
    assert [ceiling.entry(v) for v in MMA_VARIANTS] == list(PROBES["mma_ceiling"].entries)


@pytest.mark.parametrize("variant", list(MMA_VARIANTS))
def test_operands_are_nonzero_eighths_within_half(variant):
    a, b = ceiling.operands(variant, seed=1)
    layouts = mma_layouts(variant)
    assert a.shape == (ceiling.CHAINS, *layouts["A"].shape) and b.shape == layouts["B"].shape
    scale = 1 if variant == "m16n8k32.s32" else 8
    for x in (a, b):
        values = x * scale
        assert np.all(values == np.round(values)) and np.all(values != 0) and np.all(np.abs(values) <= 4)


@pytest.mark.parametrize("variant", list(MMA_VARIANTS))
def test_registers_hold_each_lanes_fragment_of_b_and_minus_b(variant):
    a, b = ceiling.operands(variant, seed=2)
    a_regs, b_regs, b_neg = ceiling.registers(variant, a, b)
    layouts, ab = mma_layouts(variant), MMA_VARIANTS[variant][1]
    assert a_regs.shape == (ceiling.CHAINS, 32, layouts["A"].registers_per_lane) and a_regs.dtype == np.uint32
    assert np.array_equal(layouts["A"].scatter(from_registers(a_regs[3], ab)), a[3])
    assert np.array_equal(layouts["B"].scatter(from_registers(b_regs, ab)), b)
    assert np.array_equal(layouts["B"].scatter(from_registers(b_neg, ab)), -b)


@pytest.mark.parametrize("variant", list(MMA_VARIANTS))
def test_every_partial_result_is_exact_in_the_accumulator(variant):
    """A chain holds 0 or A_c B: exact in the accumulator type (fp16: 11 significant bits), and so is
    the fp32 sum of the chains the kernel writes, at the largest operands."""
    a, b = ceiling.operands(variant, seed=3)
    largest = 4 if variant == "m16n8k32.s32" else 0.5
    a, b = np.full_like(a, largest), np.full_like(b, largest)
    acc = {"f32": np.float32, "f16": np.float16, "s32": np.int32}[MMA_VARIANTS[variant][2]]
    chains = [a[c] @ b for c in range(ceiling.CHAINS)]
    assert all(np.array_equal(x.astype(acc).astype(np.float64), x) for x in chains)
    total = np.zeros((16, 8), dtype=np.float32)
    for x in chains:
        total += x.astype(acc).astype(np.float32)
    assert np.array_equal(total.astype(np.float64), ceiling.expected(a, b))


def test_warp_results_scatter_each_warp():
    d = np.arange(2 * 32 * 4, dtype=np.float32).reshape(2, 32, 4)
    m = ceiling.warp_results("m16n8k16.f32", d)
    assert m.shape == (2, 16, 8)
    assert m[1, 0, 0] == d[1, 0, 0] and m[0, 8, 1] == d[0, 0, 3]   # c3 of lane 0 is (row 8, col 1)


def test_flops_count_two_mma_per_round_and_one_more():
    assert ceiling.flops("m16n8k16.f32", warps=2, rounds=3) == 2 * 7 * ceiling.CHAINS * 4096
    assert ceiling.flops("m16n8k32.e4m3.f32", warps=1, rounds=0) == ceiling.CHAINS * 8192
    assert ceiling.rate_unit("m16n8k32.s32") == "TOP/s" and ceiling.rate_unit("m16n8k8.tf32.f32") == "TFLOP/s"


def test_ceiling_reports_fit_the_text_column():
    """Both ceilings (measured in tests/gpu) print their rate, then how it was measured, each line
    within the book's text column."""
    from tcgemm.engine.gpu.ceiling import Ceiling
    from tcgemm.engine.gpu.ffma_ceiling import FfmaCeiling
    from tcgemm.engine.report import Timing
    from tcgemm.style import TEXT_COLUMN_CHARS
    timing = Timing(1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 10)
    reports = [str(Ceiling(631.74, timing, 16, 2048, True)), str(FfmaCeiling(65.61, timing, 8, 1024, False))]
    assert [r.splitlines()[0] for r in reports] == ["mma.sync m16n8k16.f32 ceiling: 631.7 TFLOP/s",
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

