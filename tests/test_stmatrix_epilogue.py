"""Kernel 5.10 (C staged by stmatrix) without a GPU: every element of a box lands where Kernel 5.9's 32-bit
stores put it (TMA's 128-byte swizzle), each stmatrix.x4 is free of bank conflicts by the bank model, and
each type build compiles to STSM in place of 5.9's STS (NVRTC, sm_90a)."""
import re

import numpy as np
import pytest

from tcgemm.engine.catalog import GEMM_KERNELS, HOPPER_DTYPES, WMMA_CASES, build_target, configured
from tcgemm.engine.gpu.nvrtc_offline import compile_cubin, cuda_tool, cuobjdump_sass, find_toolkit
from tcgemm.smem import banks
from required import skip_or_fail

WARPS, BOX_COLS = 4, 64


def _row_address(warp: int, lane: int, j: int) -> int:
    """The row address lane `lane` of `warp` gives the box's stmatrix.x4 number j / 2, as the kernel
    computes it: block m = lane / 8 is rows 8 (m % 2).. of the warp's 16, 16-byte chunk j + m / 2."""
    m = lane // 8
    r = 16 * warp + 8 * (m % 2) + lane % 8
    return 128 * r + 16 * ((j + m // 2) ^ r % 8)


def _stmatrix_writes():
    """(row, column, byte offset) of every pair of a 64 x 64 box of 16-bit C: stmatrix puts register i of
    lane l (the pair at row l / 4, columns 2 (l % 4) of matrix i) at matrix i's row l / 4 address + 4 (l % 4).
    Register i of the kernel's call holds the accumulators of block (h, chunk) = (i % 2, j + i / 2)."""
    out = []
    for warp in range(WARPS):
        for j in range(0, BOX_COLS // 8, 2):
            for lane in range(32):
                for i in range(4):
                    h, chunk = i % 2, j + i // 2
                    row, col = 16 * warp + lane // 4 + 8 * h, 8 * chunk + 2 * (lane % 4)
                    address = _row_address(warp, 8 * i + lane // 4, j) + 4 * (lane % 4)
                    out.append((row, col, address))
    return np.array(out)


def test_every_pair_lands_where_kernel_5_9_and_tma_s_swizzle_put_it():
    rows, cols, offsets = _stmatrix_writes().T
    assert np.array_equal(offsets, 128 * rows + 16 * ((cols // 8) ^ rows % 8) + 2 * (cols % 8))
    assert len(np.unique(offsets)) == offsets.size == 64 * BOX_COLS // 2


def test_each_stmatrix_x4_is_free_of_bank_conflicts():
    for warp in range(WARPS):
        for j in range(0, BOX_COLS // 8, 2):
            access = banks.Access(np.array([_row_address(warp, lane, j) for lane in range(32)]), 16,
                                  kind="stmatrix", ldmatrix_num=4)
            report = banks.analyze(access)
            assert report.conflicts == 0 and report.wavefronts == 4, (warp, j, report)


def test_the_catalog_claims_stmatrix_for_the_16_bit_builds():
    k = GEMM_KERNELS["k5.10"]
    assert "STSM.16.M88.4" in k.sass and (k.in_dtype, k.out_dtype) == ("float16", "float16")
    assert k.dtypes == HOPPER_DTYPES


@pytest.mark.slow     # four type builds of Kernel 5.10
@pytest.mark.parametrize("in_dtype, out_dtype", HOPPER_DTYPES)
def test_each_type_build_stages_16_bit_c_by_stmatrix_and_fp32_c_as_kernel_5_9(in_dtype, out_dtype):
    kit = find_toolkit(13)
    if kit is None or cuda_tool("cuobjdump") is None:
        skip_or_fail("TCGEMM_REQUIRE_NVRTC", "no NVRTC 13 with its headers, or no cuobjdump")
    spec = configured("k5.10", "sm_90").with_dtypes(in_dtype, out_dtype).with_orders(*WMMA_CASES["A B^T"])
    listing = cuobjdump_sass(compile_cubin(spec.source, build_target(spec.source, "sm_90"), spec.defines, kit))
    stsm = len(re.findall(r"\bSTSM\.16\.M88\.4\b", listing))
    if out_dtype == "float32":
        assert stsm == 0 and "STS.64" in listing
    else:   # 4 boxes of 64 columns, 4 stmatrix.x4 a box; no 32-bit STS left in the staging
        assert stsm == 16 and not re.search(r"\bSTS\b(?!\.)", listing)
    assert "UTMASTG.2D" in listing and not re.search(r"\b(LDL|STL)\b", listing)
