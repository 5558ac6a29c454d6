"""Kernel 5.7 (Kernel 5.6 for A and B in either memory order) without a GPU: its catalog entry, the
tensor maps of each order, that the boxes TMA writes for an MN-major operand are the canonical MN-major
layout at the kernel's descriptor offsets, and which operands the launcher stages or refuses."""
import re
from types import SimpleNamespace

import numpy as np
import pytest

from tcgemm.canonical import mnmajor_layout
from tcgemm.engine.catalog import GEMM_KERNELS, WMMA_CASES, configured
from tcgemm.engine.kernel_types import Signature
from tcgemm.errors import OperandError
from tcgemm.engine.source import KERNEL_DIR
from tcgemm.engine.tma import box_offsets, boxes_as_canonical, gemm_maps, mn_box, operand_map
from tcgemm.engine.operands import check_addend

K57 = GEMM_KERNELS["k5.7"]


def test_catalog_entry_is_kernel_5_6_with_either_order():
    k56 = GEMM_KERNELS["k5.6"]
    assert K57.either_order and K57.signature is Signature.TENSOR_MAPS_AND_C
    assert GEMM_KERNELS["k4.7"].signature is Signature.BLAS
    assert (K57.tile_m, K57.tile_n, K57.tile_k, K57.cluster, K57.block, K57.signature, K57.switches) == \
        (k56.tile_m, k56.tile_n, k56.tile_k, k56.cluster, k56.block, k56.signature, k56.switches)
    assert K57.defines == configured("k5.6", "sm_90").defines            # the K-major default build
    variant = K57.with_orders("F", "C")
    assert dict(variant.defines)["A_COL_MAJOR"] == 1 and dict(variant.defines)["B_COL_MAJOR"] == 0
    assert variant.mn_major("A") and variant.mn_major("B") and not K57.mn_major("A") and not K57.mn_major("B")
    assert "A column-major, B row-major" in variant.variant
    with pytest.raises(ValueError, match="operand must be 'A' or 'B'"):
        K57.mn_major("C")


def test_alpha_and_beta_are_refused_by_name():
    with pytest.raises(OperandError, match="Kernel 5.7.*A @ B only"):
        check_addend(K57, None, None, 4, 4, 2, 0, None, None)


@pytest.mark.parametrize("case", list(WMMA_CASES))
def test_maps_follow_each_operands_memory_order(case):
    """K-major operands as in Kernel 5.6 (A: M rows of K, B: N rows of K, boxes of one stage's rows);
    an MN-major one as it lies, K rows of M or N, in boxes of BK rows by 64 (one 128-byte swizzle row)."""
    spec = configured("k5.7", "sm_90").with_orders(*WMMA_CASES[case])
    M, N, K = 1000, 1003, 1007
    a, b = gemm_maps(spec, M, N, K, lda=1008 if spec.a_order == "C" else 1000, ldb=1008)
    if spec.mn_major("A"):
        assert (a.rows, a.cols, a.row_stride, a.box_rows, a.box_cols) == (K, M, 2000, 64, 64)
    else:
        assert (a.rows, a.cols, a.row_stride, a.box_rows, a.box_cols) == (M, K, 2016, 128, 64)
    if spec.mn_major("B"):
        assert (b.rows, b.cols, b.box_rows, b.box_cols) == (K, N, 64, 64)
    else:
        assert (b.rows, b.cols, b.box_rows, b.box_cols) == (N, K, 128, 64)   # half of 256: multicast
    assert a.swizzle == b.swizzle == 128 and b.row_stride == 2016
    a.check(0x1000), b.check(0x1000)


def test_an_mn_major_operand_whose_rows_break_tmas_stride_rule_is_named():
    """TMA needs the rows of the stored matrix 16 bytes apart: M % 8 == 0 for a column-major A, N % 8
    == 0 for a row-major B. The launcher stages such an operand (tcgemm.engine.gpu.gemm._needs_staging); the
    map of the operand as it lies is refused naming the rule."""
    spec = K57.with_orders("F", "C")
    with pytest.raises(OperandError, match="contiguous dimension must be a multiple of 8"):
        operand_map(spec, "A", 1001, 64).check(0x1000)
    with pytest.raises(OperandError, match="contiguous dimension must be a multiple of 8"):
        operand_map(spec, "B", 257, 64).check(0x1000)


def _array(shape, strides, ptr=0x1000):
    return SimpleNamespace(shape=shape, strides=strides, itemsize=2, data=SimpleNamespace(ptr=ptr))


def test_the_launcher_stages_what_tma_cannot_read_in_place():
    from tcgemm.engine.gpu.gemm import _needs_staging
    spec = K57.with_orders("F", "C")
    assert not _needs_staging(spec, _array((1000, 64), (2, 2000)), "F", 64)           # column-major A, M % 8 == 0
    assert _needs_staging(spec, _array((1001, 64), (2, 2002)), "F", 64)               # M % 8 != 0
    assert _needs_staging(spec, _array((64, 257), (514, 2)), "C", 64)                 # row-major B, N % 8 != 0
    assert _needs_staging(spec, _array((64, 256), (512, 2), ptr=0x1008), "C", 64)     # not 16-byte aligned


@pytest.mark.parametrize("orders, operand", [(("F", "F"), "A"), (("C", "C"), "B"), (("F", "C"), "A"),
                                             (("F", "C"), "B")])
def test_tma_boxes_are_the_canonical_mn_major_layout(orders, operand):
    """What TMA writes for an MN-major operand (boxes of 64 K rows of 128 swizzled bytes, one after
    another) is mnmajor_layout with LBO = a box (8192 bytes) and SBO = 8 rows (1024): the descriptor
    Kernel 5.7 gives wgmma. With the two offsets exchanged it is not."""
    spec = K57.with_orders(*orders)
    same, lbo, sbo = boxes_as_canonical(spec, operand)
    assert same and (lbo, sbo) == (8192, 1024)
    extent = 64 if operand == "A" else 256
    k, mn = np.meshgrid(np.arange(64), np.arange(extent), indexing="ij")
    tile_map = operand_map(spec, operand, extent, 64)
    swapped = mnmajor_layout("128B", extent, 64, lbo=sbo, sbo=lbo)(k, mn)
    assert not np.array_equal(box_offsets(tile_map, extent // 64, k, mn), swapped)
    with pytest.raises(ValueError, match="reads A K-major"):
        boxes_as_canonical(K57, "A")


def test_kernel_source_uses_the_box_and_offsets_of_the_maps():
    """The constants of kernels/k5.7_operand_orders.cu are the ones the host's maps and the canonical
    layout say: boxes of mn_box elements, LBO one box, a k16 step 16 rows of 128 bytes."""
    text = (KERNEL_DIR / K57.source).read_text()
    assert re.search(r"BOX_MN = (\d+)", text).group(1) == str(mn_box("float16"))
    assert "A_LBO = A_MN ? BOX_BYTES : 16" in text and "B_LBO = B_MN ? BOX_BYTES : 16" in text
    assert "A_STEP = A_MN ? 16 * 128 : 32" in text and "wgmma_m64n256k16_f32_f16_ss<A_MN, B_MN>" in text


def test_order_table_rows_are_runs_by_round_relative_to_the_base(monkeypatch):
    """tcgemm.engine.gpu.matmul.order_table (Kernels 4.7 and 5.7's timing tables), with the GPU parts replaced:
    each run checked once, timed in every round, its speed relative to run `base` of the same round."""
    from tcgemm.engine.gpu import matmul, timing
    from tcgemm.engine.gpu import device

    calls = []
    monkeypatch.setattr(matmul, "reference", lambda *args: "ref")
    monkeypatch.setattr(matmul, "check_output", lambda out, ref: out)
    monkeypatch.setattr(matmul, "verdict", lambda result: f"checked {result}")
    monkeypatch.setattr(timing, "median_rounds", lambda fns, repeats: [[2e-3, 1e-3], [4e-3, 1e-3]][:repeats])
    monkeypatch.setattr(device, "device_info", lambda: SimpleNamespace(name="GPU"))
    runs = [(("one",), "A B^T", lambda: calls.append(1), None, None, "x"),
            (("two",), "A^T B", lambda: calls.append(2), None, None, "y")]
    table = matmul.order_table(runs, ["Kernel"], 1000, 1000, 1000, 2, base=1, operation="C = A @ B", note="n")
    assert calls == [1, 2] and table.columns[1].name == "Kernel"
    assert [list(row[:4]) for row in table.rows] == [[1, "one", "row-major", "column-major"],
                                                [1, "two", "column-major", "row-major"],
                                                [2, "one", "row-major", "column-major"],
                                                [2, "two", "column-major", "row-major"]]
    assert [round(row[6]) for row in table.rows] == [50, 100, 25, 100]
    assert table.rows[0][4] == pytest.approx(2000) and table.rows[0][-1] == "checked x"
