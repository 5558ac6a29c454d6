"""The drawn layouts are what the hardware does: mma and ldmatrix probes on the GPU."""
import pytest

from tcgemm.fragments.layouts import MMA_VARIANTS

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("variant", list(MMA_VARIANTS))
def test_mma_operands_match(variant):
    from tcgemm.gpu.probes import observe_mma, random_product_check
    probes = observe_mma(variant)
    for op, p in probes.items():
        assert p.match, f"{variant} {op}: {p.mismatches} mismatching elements"
    assert random_product_check(variant)


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_matches(num, trans):
    from tcgemm.gpu.probes import observe_ldmatrix
    p = observe_ldmatrix(num, trans)
    assert p.match and p.shuffled_rows_match
