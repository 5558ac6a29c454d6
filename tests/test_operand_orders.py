"""Kernel 4.7 without a GPU: its variants per memory order in the catalog, the operand checks of
tcgemm.matmul, and its shared-memory layout in the bank model (conflict-free for every tile and order)."""
import numpy as np
import pytest

from tcgemm.engine.catalog import GEMM_KERNELS, WMMA_CASES
from tcgemm.errors import OperandError
from tcgemm.engine.plan import TILES
from tcgemm.smem.kernel_smem import _operand_orders, block_step, count
from tcgemm.engine.operands import check_addend, leading_dimension, memory_order

K47 = GEMM_KERNELS["k4.7"]


def test_orders_are_compiled_in_and_named():
    assert K47.either_order and K47.defines == GEMM_KERNELS["k4.6"].defines
    variant = K47.with_orders("F", "C")
    assert (variant.a_order, variant.b_order) == ("F", "C")
    assert dict(variant.defines)["A_COL_MAJOR"] == 1 and dict(variant.defines)["B_COL_MAJOR"] == 0
    assert K47.with_orders("C", "F") == K47                      # mma.sync's own orders: the default build
    assert "A column-major, B row-major" in variant.with_tile(TILES[0]).variant
    with pytest.raises(ValueError, match="reads A C- and B F-ordered only"):
        GEMM_KERNELS["k4.6"].with_orders("C", "C")
    with pytest.raises(ValueError, match="'C' \\(row-major\\) or 'F'"):
        K47.with_orders("C", "row")


def test_memory_order_and_leading_dimension():
    a = np.zeros((6, 10), dtype=np.float16)
    assert memory_order("A", a) == "C" and leading_dimension(a, "C") == 10
    assert memory_order("A", a.T) == "F" and leading_dimension(a.T, "F") == 10
    wide = np.zeros((6, 16), dtype=np.float16)[:, :10]           # rows 16 apart: a BLAS leading dimension
    assert leading_dimension(wide, "C") == 16
    row = np.zeros((1, 10), dtype=np.float16)                    # both orders: the preferred one wins
    assert memory_order("B", row, prefer="F") == "F" and leading_dimension(row, "F") == 1
    with pytest.raises(OperandError, match="non-contiguous.*ascontiguousarray"):
        memory_order("A", wide)


def test_addend_checks():
    A, B = np.zeros((4, 8), np.float16), np.zeros((8, 6), np.float16, order="F")
    out, C = np.zeros((4, 6), np.float32), np.ones((4, 6), np.float32)
    check_addend(K47, C, out, 4, 6, 2, 0.5, A, B)
    check_addend(K47, out, out, 4, 6, 1, 1, A, B)                # in place
    check_addend(K47, None, out, 4, 6, 3, 0, A, B)               # beta = 0 reads no C
    with pytest.raises(OperandError, match="beta=1 needs a C"):
        check_addend(K47, None, out, 4, 6, 1, 1, A, B)
    with pytest.raises(OperandError, match="real alpha"):
        check_addend(K47, C, out, 4, 6, "2", 1, A, B)
    with pytest.raises(OperandError, match="C has dtype float16"):
        check_addend(K47, C.astype(np.float16), out, 4, 6, 1, 1, A, B)
    shared = np.zeros(48, np.float32)
    with pytest.raises(OperandError, match="C overlaps out"):
        check_addend(K47, shared[2:26].reshape(4, 6), shared[:24].reshape(4, 6), 4, 6, 1, 1, A, B)
    with pytest.raises(OperandError, match="A @ B only"):
        check_addend(GEMM_KERNELS["k4.6"], None, out, 4, 6, 2, 0, A, B)


@pytest.mark.parametrize("case", list(WMMA_CASES))
@pytest.mark.parametrize("tile", TILES, ids=lambda t: t.name)
def test_every_tile_and_order_is_free_of_bank_conflicts(tile, case):
    """Copies and ldmatrix(.trans) of one K tile: every wavefront is a whole 128-byte line, for either
    tile depth, K-major or MN-major (Operand::slot's XOR)."""
    a_col, b_col = (order == "F" for order in WMMA_CASES[case])
    for bk in (32, 64):
        steps = [i for warp in range(tile.warps_m * tile.warps_n)
                 for i in _operand_orders(warp, bk, a_col, b_col, tile.bm, tile.bn, tile.warps_m, tile.warps_n)]
        counts = count(steps)
        assert counts.total.requests and counts.total.conflicts == 0, (tile.name, case, bk, counts.table_rows())


def test_the_default_orders_model_kernel_4_6():
    assert count(block_step("k4.7")) == count(block_step("k4.6"))
    assert count(block_step("k4.7", orders=("F", "C"))).total.conflicts == 0
    with pytest.raises(ValueError, match="either memory order"):
        block_step("k4.6", orders=("C", "F"))
