"""Kernel 5.7 on the GPU in every memory-order case of A and B: odd shapes (M, N, K not multiples of the
tile, of 8, or a single row), views that are not 16-byte aligned (staged), against the fp32 product,
into a NaN-filled C; and under compute-sanitizer memcheck / racecheck."""
import pytest

from tcgemm.catalog import WMMA_CASES

pytestmark = pytest.mark.gpu

SHAPES = [(129, 257, 75), (1000, 1003, 1007), (1, 4096, 4096), (4096, 1, 200), (256, 512, 4096 - 64),
          (640, 768, 64)]


@pytest.fixture(scope="module")
def orders():
    from tcgemm.catalog import GEMM_KERNELS
    from tcgemm.gpu.compile import current_arch
    if reason := GEMM_KERNELS["k5.7"].unsupported(current_arch()):
        pytest.skip(reason)
    from tcgemm.gpu import hopper_orders
    return hopper_orders


@pytest.mark.parametrize("case", list(WMMA_CASES))
def test_every_order_matches_reference(orders, case):
    for M, N, K in SHAPES:
        for offset in (0, 3) if (M, N, K) == SHAPES[0] else (0,):
            result = orders.check(case, M, N, K, offset)
            assert result.passed, f"Kernel 5.7 {case} at {M}x{N}x{K}, offset {offset}: {result}"


def test_check_table_passes_everywhere(orders):
    table = orders.checks(shapes=SHAPES[:2], offsets=(0, 3))
    assert len(table.rows) == 4 * 2 and all(v.startswith("PASS") for row in table.rows for v in row[3:]), str(table)


@pytest.mark.parametrize("case, tool", [(case, "memcheck") for case in WMMA_CASES] +
                         [(case, "racecheck") for case in ("A^T B",)])
def test_sanitizer_is_clean_on_every_order(orders, case, tool):
    from tests.gpu.test_sanitizer import assert_clean
    assert_clean(tool, "tcgemm.gpu.hopper_orders", case, "129", "257", "75", "3")
