"""The drawn layouts are what the hardware does: mma and ldmatrix probes on the GPU."""
import pytest

from tcgemm.fragment_layouts import MMA_VARIANTS

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("variant", list(MMA_VARIANTS))
def test_mma_operands_match(variant):
    from tcgemm.engine.gpu.probes import observe_mma, random_product_check, skipped
    if reason := skipped(variant):
        pytest.skip(reason)
    probes = observe_mma(variant)
    for op, p in probes.items():
        assert p.match, f"{variant} {op}: {p.mismatches} mismatching elements"
    assert random_product_check(variant)


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_matches(num, trans):
    from tcgemm.engine.gpu.probes import observe_ldmatrix
    p = observe_ldmatrix(num, trans)
    assert p.match and p.shuffled_rows_match


def test_every_ldmatrix_is_observed_once_and_matches():
    from tcgemm.engine.gpu.probes import observe_every_ldmatrix
    probes = observe_every_ldmatrix()
    assert [(p.num, p.trans) for p in probes] == [(n, t) for n in (1, 2, 4) for t in (False, True)]
    assert all(p.match and "MISMATCH" not in str(p) for p in probes), "\n".join(map(str, probes))


def test_mma_verdicts_read_match_for_every_operand():
    from tcgemm.fragment_layouts import ptx_instruction
    from tcgemm.engine.gpu.probes import mma_verdicts
    table = mma_verdicts(["m16n8k16.f32"])
    assert table.rows == ((ptx_instruction("m16n8k16.f32"), *["MATCH"] * 5),), str(table)
