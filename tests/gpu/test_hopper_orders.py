"""Kernels 5.7 and 5.8 on the GPU in every memory-order case of A and B: odd shapes (M, N, K not
multiples of the tile, of 8, or a single row), views that are not 16-byte aligned (staged), against
the fp32 product, into a NaN-filled C; and under compute-sanitizer memcheck / racecheck."""
import pytest

from tcgemm.engine.catalog import WMMA_CASES

pytestmark = pytest.mark.gpu

SHAPES = [(129, 257, 75), (1000, 1003, 1007), (1, 4096, 4096), (4096, 1, 200), (256, 512, 4096 - 64),
          (640, 768, 64)]
# Kernel 5.8 also where a block has many tiles and K fewer tiles than the ring has stages (the consumers
# hand over often, each several ring laps apart), and with N % 4 == 0 (C stored by TMA) on odd M and K.
PING_PONG_SHAPES = [(2048, 4096, 128), (4096, 4096, 512), (129, 260, 75), (777, 1001, 520), (513, 1028, 264)]
KEYS = ["k5.7", "k5.8"]


@pytest.fixture(scope="module")
def orders():
    from tcgemm.engine.catalog import GEMM_KERNELS
    from tcgemm.engine.gpu.compile import current_arch
    if reason := GEMM_KERNELS["k5.7"].unsupported(current_arch()):
        pytest.skip(reason)
    from tcgemm.hopper.gpu import operand_orders
    return operand_orders


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("case", list(WMMA_CASES))
def test_every_order_matches_reference(orders, key, case):
    for M, N, K in SHAPES + (PING_PONG_SHAPES if key == "k5.8" else []):
        for offset in (0, 3) if (M, N, K) == SHAPES[0] else (0,):
            result = orders.check_kernel_order(case, M, N, K, offset, key=key)
            assert result.passed, f"{key} {case} at {M}x{N}x{K}, offset {offset}: {result}"


def test_check_table_passes_everywhere(orders):
    table = orders.check_kernel_orders(shapes=SHAPES[:2], offsets=(0, 3))
    assert len(table.rows) == 4 * 2 and all(v.startswith("PASS") for row in table.rows for v in row[3:]), str(table)


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("case, tool", [(case, "memcheck") for case in WMMA_CASES] +
                         [(case, "racecheck") for case in ("A^T B",)])
def test_sanitizer_is_clean_on_every_order(orders, key, case, tool):
    from tests.gpu.test_sanitizer import assert_clean
    assert_clean(tool, "tcgemm.hopper.gpu.operand_orders", case, "129", "257", "75", "3", key)


@pytest.mark.parametrize("tool", ["memcheck", "racecheck", "synccheck"])
def test_sanitizer_is_clean_where_the_consumers_hand_over(orders, tool):
    """Kernel 5.8 with about four tiles per block on an H100 and K of three tiles (fewer than the ring's
    stages): each consumer waits for the other's hand-over several times, TMA stores C."""
    from tests.gpu.test_sanitizer import assert_clean
    assert_clean(tool, "tcgemm.hopper.gpu.operand_orders", "A B^T", "2048", "4096", "130", "0", "k5.8")
