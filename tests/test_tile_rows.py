"""Kernel 5.15 (Kernel 5.14 with 64-row tiles, one consumer warpgroup) without a GPU: its build as the catalog
describes it (256 threads, each width's stages within sm_90's shared memory), the boxes of a 64-row A, the
ring's prediction, the dispatch's use of it, and (NVRTC, sm_90a) its HGMMA, multicast and no spills."""
import re

import pytest

from tcgemm.arch import arch_limits
from tcgemm.engine.catalog import GEMM_KERNELS, ROW_TILE_WIDTHS, WMMA_CASES, build_target, configured
from tcgemm.engine.dispatch import ROW_TILE_MIN_SHARE, dispatch, row_tiles
from tcgemm.engine.gpu.nvrtc_offline import compile_cubin, cuda_tool, cuobjdump_sass, find_toolkit
from tcgemm.engine.tma import mn_box, operand_map
from tcgemm.hopper.tile_rows import RingShape, prediction_table
from required import skip_or_fail

K515 = GEMM_KERNELS["k5.15"]


def spec(cluster, width, case="A B^T"):
    return configured("k5.15", "sm_90").with_orders(*WMMA_CASES[case]).with_tile_n(width).with_cluster(*cluster)


def test_one_consumer_and_each_width_s_stages_fit_sm_90_s_shared_memory():
    assert (K515.tile_m, K515.block, K515.threads) == (64, (256, 1, 1), 256)
    assert K515.tile_widths == ROW_TILE_WIDTHS and K515.cluster_shapes == ((2, 1), (1, 2))
    limit = arch_limits("sm_90").max_smem_per_block
    for width, stages in ROW_TILE_WIDTHS:
        s = configured("k5.15", "sm_90").with_tile_n(width)
        assert s.stages == stages and s.smem_bytes <= limit, (width, s.smem_bytes)
        assert s.with_tile_n(width).with_config(64, stages + 1).smem_bytes > limit or width == 256, width


def test_a_64_row_a_shared_along_n_is_one_box_copied_in_turn():
    a = operand_map(spec((1, 2), 64, "A^T B^T"), "A", 1000, 512)     # MN-major A: one box of 64 for the two blocks
    assert (a.box_rows, a.box_cols) == (64, mn_box("float16"))
    assert operand_map(spec((1, 2), 64), "A", 1000, 512).box_rows == 32      # K-major: 32 rows each
    assert operand_map(spec((2, 1), 64), "B", 1000, 512).box_rows == 32


def test_the_ring_keeps_more_of_b_in_flight():
    old, new = RingShape("k5.14", 32), RingShape("k5.15", 32)
    assert (old.rows, old.stages, old.a_kb(), old.b_in_flight_kb()) == (128, 9, 16, 36)
    assert (new.rows, new.stages, new.a_kb(), new.b_in_flight_kb()) == (64, 16, 8, 64)
    assert [r["stages"] for r in prediction_table([old, new]).records()] == [9, 16]


def test_the_dispatch_runs_short_m_and_small_squares_in_64_row_tiles():
    assert row_tiles(132, 64, 4096, 4096) == ((1, 2), 32) and dispatch("sm_90", 132, 64, 4096, 4096).label == "k5.15/32/1x2"
    assert row_tiles(132, 128, 4096, 4096) == ((2, 1), 64)
    assert dispatch("sm_90", 132, 128, 4096, 4096).label == "k5.15/64/2x1"
    assert dispatch("sm_90", 132, 1000, 1000, 1000).label == "k5.15/128/2x1"
    assert row_tiles(132, 64, 4096, 14336) is None                   # K longer than N: Kernel 4.7 splits K
    assert row_tiles(132, 16, 4096, 4096) is None                    # M = 16: Kernel 4.7
    assert row_tiles(132, 64, 4096, 4096, b_k_major=False) is None   # a row-major B is wider than 32 columns
    assert row_tiles(132, 128, 14336, 4096) is None                  # a long N: turned round (Kernel 5.13)
    assert row_tiles(132, 128, 2048, 2048) is None                   # 64 blocks: under ROW_TILE_MIN_SHARE
    assert 2 * 2048 // 64 < ROW_TILE_MIN_SHARE * 132 <= 2 * 4096 // 64
    d = dispatch("sm_90", 132, 128, 4096, 4096, scaled=True)
    assert (d.key, d.kernel_out) == ("k5.15", "float32") and "second pass" in d.why


@pytest.mark.slow     # three builds of Kernel 5.15
@pytest.mark.parametrize("cluster, width, case", [((1, 2), 32, "A B^T"), ((2, 1), 64, "A^T B^T"),
                                                  ((1, 2), 128, "A^T B")])
def test_each_build_compiles_to_its_hgmma_with_multicast_and_no_spills(cluster, width, case):
    kit = find_toolkit(13)
    if kit is None or cuda_tool("cuobjdump") is None:
        skip_or_fail("TCGEMM_REQUIRE_NVRTC", "no NVRTC 13 with its headers, or no cuobjdump")
    s = spec(cluster, width, case)
    listing = cuobjdump_sass(compile_cubin(s.source, build_target(s.source, "sm_90"), s.defines, kit))
    assert set(re.findall(r"HGMMA\.(\d+x\d+x\d+)", listing)) == {f"64x{width}x16"}
    assert "UTMALDG.2D.MULTICAST" in listing and "USETMAXREG" in listing
    assert not re.search(r"\b(LDL|STL)\b", listing)
