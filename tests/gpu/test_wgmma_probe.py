"""The canonical shared-memory layouts, the descriptor and the accumulator layout are what wgmma does:
the wgmma probe on an sm_90 GPU (skipped on any other)."""
import pytest

from tcgemm.canonical import SWIZZLE_MODES
from tcgemm.hopper.gpu.wgmma import MN_CASES

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def probe():
    from tcgemm.hopper.gpu import wgmma
    if reason := wgmma.skipped():
        pytest.skip(reason)
    return wgmma


@pytest.mark.parametrize("mode", list(SWIZZLE_MODES))
@pytest.mark.parametrize("n", [8, 16])
def test_wgmma_reads_and_writes_as_the_layouts_say(probe, n, mode):
    p = probe.observe_wgmma(n, mode)
    assert [p.match(op) for op in "ABD"] == [True] * 3, probe.wgmma_verdict_table([p])
    assert p.random_product


@pytest.mark.parametrize("n", [8, 16])
def test_a_wrong_swizzle_field_in_the_descriptor_mismatches(probe, n):
    p = probe.observe_wgmma(n, *probe.CONTROL)
    assert not p.match("A") and not p.match("B") and not p.random_product


def test_verdict_table_has_a_row_per_probe(probe):
    table = probe.wgmma_verdicts()
    assert len(table.rows) == 2 * len(SWIZZLE_MODES) + 2
    assert all("MISMATCH" not in row for row in table.rows[:-2]), str(table)



@pytest.mark.parametrize("n, operand, mode", MN_CASES)
def test_wgmma_reads_an_mn_major_operand_as_the_layout_says(probe, n, operand, mode):
    p = probe.observe_wgmma(n, mode, mn_major=operand)
    assert [p.match(op) for op in "ABD"] == [True] * 3, probe.wgmma_verdict_table([p])
    assert p.random_product


def test_mn_major_lbo_and_sbo_exchanged_mismatch(probe):
    n, operand, mode = probe.MN_CONTROL
    p = probe.observe_wgmma(n, mode, mn_major=operand, swapped=True)
    assert not p.match(operand) and not p.random_product


def test_mn_major_verdict_table_has_a_row_per_case_and_the_control(probe):
    table = probe.wgmma_verdicts(mn_major=True)
    assert len(table.rows) == len(probe.MN_CASES) + 1
    assert all("MISMATCH" not in row for row in table.rows[:-1]) and "MISMATCH" in table.rows[-1], str(table)
