"""Hardware counters agree with the arithmetic: one mma.sync per 16x8x16 block of the problem."""
import pytest

from tcgemm.hw import mma_count

pytestmark = pytest.mark.gpu


def test_hmma_count_matches_the_problem():
    from tcgemm.gpu.ncu import find_ncu, profile
    if find_ncu() is None:
        pytest.skip("Nsight Compute (ncu) is not installed")
    for key in ("k1.1", "hgemm"):
        counters = profile(key, 256, 512, 128)
        assert counters["hmma"] == mma_count(256, 512, 128), counters
