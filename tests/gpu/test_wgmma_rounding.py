"""The rounding probe through wgmma on an sm_90 GPU (skipped on any other): every case's 512 entries of D
agree, a second run gives the same D, and the observations single out one hypothesis of tcgemm.numerics.rounding."""
import numpy as np
import pytest

from tcgemm.numerics.gpu.wgmma_rounding import WGMMA_ROUNDING
from tcgemm.numerics.rounding import cases, verdict

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def probe():
    from tcgemm.numerics.gpu import wgmma_rounding
    if reason := wgmma_rounding.skipped():
        pytest.skip(reason)
    return wgmma_rounding


@pytest.mark.parametrize("w", WGMMA_ROUNDING, ids=lambda w: w.label)
def test_wgmma_singles_out_one_hypothesis_on_every_run(probe, w):
    case_list = cases(w.mma)
    first, second = probe.observe(w, case_list), probe.observe(w, case_list)
    assert first.shape == (len(case_list), 512)
    assert np.array_equal(first, second)
    v = verdict(w.mma, first, case_list)
    assert v.disagreeing_cases == 0, "the 512 entries of D differ in some case: an image or a layout is wrong"
    assert len(v.fitting) == 1, f"{len(v.fitting)} hypotheses fit {w.label}"


def test_table_has_a_row_per_wgmma(probe):
    table = probe.wgmma_rounding_table()
    assert [r["wgmma"] for r in table.records()] == [w.label for w in WGMMA_ROUNDING]
    assert all("disagree" not in note for note in table.notes), table.notes


def test_fp8_accumulation_checks_every_gemm():
    """Kernel D1 and cuBLASLt with FAST_ACCUM 0 and 1 all give finite errors on the same operands."""
    from tcgemm.numerics.gpu.data_types import FP8_GEMMS, fp8_accumulation, skipped
    if reason := skipped("e4m3"):
        pytest.skip(reason)
    table = fp8_accumulation(512, 512, 512, reps=5)
    rows = table.records()
    assert [r["GEMM"] for r in rows] == list(FP8_GEMMS)
    assert all(np.isfinite(r["Error"]) and r["Tolerance"] > 0 for r in rows), rows
    assert rows[0]["Check"] == "PASS"
