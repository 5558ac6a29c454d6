"""Kernel 5.6 (C stored by TMA) without a GPU: its catalog entry, the map of C it takes, that the
accumulators its threads write into a box buffer are where TMA's 128-byte swizzle reads each element of
C, and what the bank model says of those writes."""
import numpy as np
import pytest

from tcgemm.engine.catalog import GEMM_KERNELS, configured
from tcgemm.engine.kernel_types import TMA_SMEM_ALIGN, TMA_STORE_SMEM, Signature
from tcgemm.hopper.wgmma import accumulator_layout
from tcgemm.smem.banks import Access, analyze
from tcgemm.engine.tma import C_BOX_COLS, C_BOX_ROWS, box_offsets, c_map, c_staging_offsets

K56 = GEMM_KERNELS["k5.6"]


def test_catalog_entry_adds_the_buffers_of_c_to_kernel_5_5s_shared_memory():
    k55, k56 = configured("k5.5"), configured("k5.6")
    assert K56.signature is Signature.TENSOR_MAPS_AND_C and GEMM_KERNELS["k5.5"].signature is Signature.TENSOR_MAPS
    assert k56.smem_bytes == k55.smem_bytes + TMA_STORE_SMEM == 4 * 48 * 1024 + TMA_SMEM_ALIGN + 32 * 1024
    assert k56.smem_bytes <= 227 * 1024                                 # the H100's opt-in limit per block
    assert dict(K56.switches)["SKIP_STORE"].endswith("a measurement only)")


@pytest.mark.parametrize("M, N", [(4096, 4096), (129, 260), (1, 4)])
def test_map_of_c_is_fp32_rows_in_boxes_of_one_warpgroups_rows(M, N):
    m = c_map(K56, M, N).check()
    assert (m.dtype, m.rows, m.cols, m.row_stride) == ("float32", M, N, 4 * N)
    assert (m.box_rows, m.box_cols, m.swizzle) == (C_BOX_ROWS, C_BOX_COLS, 128) == (64, 32, 128)
    assert m.box_bytes * 2 * 2 == TMA_STORE_SMEM                       # two boxes per consumer warpgroup


@pytest.mark.parametrize("N", [1, 2, 3, 4097, 1001])
def test_no_map_where_rows_are_not_16_byte_multiples(N):
    assert c_map(K56, 64, N) is None


def test_a_kernel_storing_c_itself_has_no_map_of_c():
    with pytest.raises(ValueError, match="Kernel 5.5.*without TMA"):
        c_map(GEMM_KERNELS["k5.5"], 64, 64)


def test_threads_write_each_element_where_the_tma_store_reads_it():
    rows, cols, offsets = c_staging_offsets()
    expected = box_offsets(c_map(K56, 64, 64), 1, rows, cols)
    assert np.array_equal(offsets, expected)
    both = np.concatenate([offsets.ravel(), offsets.ravel() + 4])    # each pair's two floats
    assert np.array_equal(np.sort(both), np.arange(0, C_BOX_ROWS * C_BOX_COLS * 4, 4))   # the box, once


def test_rows_and_columns_are_the_wgmma_accumulators():
    """Thread t's pair (j, h) of a box holds accumulator registers 4 (4 box + j) + 2 h and + 1: their
    (row, col) in wgmma's accumulator layout, less the box's first column, is what the kernel stores."""
    rows, cols, _ = c_staging_offsets()
    layout = accumulator_layout(256)
    for box in (0, 5):
        t, j, h = np.meshgrid(np.arange(128), np.arange(4), np.arange(2), indexing="ij")
        i = 4 * (4 * box + j) + 2 * h
        r, c = layout.row[t, i], layout.col[t, i]
        assert np.array_equal(layout.row[t, i + 1], r) and np.array_equal(layout.col[t, i + 1], c + 1)
        assert np.array_equal(r, rows) and np.array_equal(c - C_BOX_COLS * box, cols)


def test_each_st_shared_of_the_staging_is_two_way_conflicted_by_the_swizzle():
    """An 8-byte store is served a half-warp at a time: lanes 0-15 hold rows 0-3 (+ 16 warp + 8 h), whose
    XOR (r % 8 = 0..3) maps chunks 2j and 2j + 1 onto the same four chunks twice. So each of the 64 stores
    takes 4 wavefronts where 2 would do; boxes 8 columns wide would avoid it, at four TMA stores per box."""
    _, _, offsets = c_staging_offsets()
    for warp in range(4):
        for j in range(4):
            for h in range(2):
                report = analyze(Access(offsets[32 * warp:32 * warp + 32, j, h], 8, "st"))
                assert (report.wavefronts, report.ideal, report.ways) == (4, 2, 2), (warp, j, h, str(report))
