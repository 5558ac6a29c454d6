"""Kernel 5.14 (Kernel 5.11 with the cluster's shape a choice) without a GPU: each shape's build as the
catalog describes it, the boxes each block copies, the grid in whole clusters, the prediction's bytes, the
dispatch's use of its 1 x 2 clusters, and (NVRTC, sm_90a) the multicast copies and HGMMA of its widths."""
import re

import pytest

from tcgemm.engine.catalog import CLUSTER_SHAPES, GEMM_KERNELS, NARROW_TILE_WIDTHS, WMMA_CASES, build_target, configured
from tcgemm.engine.dispatch import ROW_CLUSTER, dispatch, row_cluster, tile_width
from tcgemm.engine.gpu.nvrtc_offline import compile_cubin, cuda_tool, cuobjdump_sass, find_toolkit
from tcgemm.engine.tma import mn_box, operand_map
from tcgemm.hopper.cluster_shapes import ClusterShape, prediction_table
from required import skip_or_fail

K514 = GEMM_KERNELS["k5.14"]


def spec(cluster, width=64, case="A B^T"):
    return configured("k5.14", "sm_90").with_orders(*WMMA_CASES[case]).with_tile_n(width).with_cluster(*cluster)


def test_each_cluster_shape_compiles_in_with_its_blocks():
    assert K514.cluster_shapes == CLUSTER_SHAPES and K514.cluster_shape == CLUSTER_SHAPES[0]
    for m, n in CLUSTER_SHAPES:
        s = spec((m, n))
        assert (s.cluster_m, s.cluster_n, s.cluster) == (m, n, m * n)
        assert ("CLUSTER_M", m) in s.defines and ("CLUSTER_N", n) in s.defines
        assert f"clusters {m}x{n}" in s.variant
    assert GEMM_KERNELS["k5.11"].cluster_shape == (2, 1) and "CLUSTER_M" not in dict(GEMM_KERNELS["k5.11"].defines)
    with pytest.raises(ValueError, match=r"has no clusters of 4 x 1; its shapes are: 2 x 2, 2 x 1, 1 x 2"):
        K514.with_cluster(4, 1)
    with pytest.raises(ValueError, match=r"Kernel 5.11: tile widths has no clusters of 1 x 2; its shapes are: 2 x 1 only"):
        GEMM_KERNELS["k5.11"].with_cluster(1, 2)


def test_a_32_wide_tile_has_nine_stages_within_sm_90_s_shared_memory():
    from tcgemm.arch import arch_limits
    assert NARROW_TILE_WIDTHS[-1] == (32, 9)
    s = spec((1, 2), 32)
    assert s.stages == 9 and s.smem_bytes <= arch_limits("sm_90").max_smem_per_block


@pytest.mark.parametrize("cluster", CLUSTER_SHAPES)
def test_each_block_copies_its_share_of_a_and_of_b(cluster):
    m, n = cluster
    a, b = operand_map(spec(cluster, 128), "A", 1000, 512), operand_map(spec(cluster, 128), "B", 1000, 512)
    assert (a.box_rows, b.box_rows) == (128 // n, 128 // m)      # K-major: rows of M and N, one box each
    a_mn = operand_map(spec(cluster, 128, "A^T B"), "A", 1000, 512)
    assert (a_mn.box_rows, a_mn.box_cols) == (64, mn_box("float16"))   # MN-major: 64-column boxes, 128 / n of them
    with pytest.raises(ValueError, match="an MN-major B tile of 32 is narrower than a box of 64"):
        operand_map(spec(cluster, 32, "A B"), "B", 1000, 512)


def test_the_grid_is_whole_clusters_as_many_as_run_at_once():
    s = spec((2, 2), 64)
    assert s.cluster_tiles(1000, 1000) == 4 * 8          # clusters of 256 x 128
    assert s.grid(1000, 1000, 132) == (32 * 4, 1, 1)     # 33 would fit 132 SMs; 32 tiles
    assert s.grid(4096, 4096, 132, clusters=30) == (120, 1, 1)
    assert spec((1, 2), 32).cluster_tiles(64, 4096) == 64


def test_the_prediction_counts_each_block_s_share():
    assert ClusterShape(2, 1, 64).copied_kb() == 20 and ClusterShape(1, 2, 64).copied_kb() == 16
    assert ClusterShape(2, 2, 64).copied_kb() == 12 and ClusterShape(2, 2, 256).copied_kb() == 24
    assert ClusterShape(2, 2, 64).clusters(1000, 1000) == 32 and ClusterShape(2, 1, 256).waves(4096, 4096, 66) == 4
    table = prediction_table([(1000, 1000, 1000, [ClusterShape(2, 1, 64), ClusterShape(2, 2, 64)])])
    assert [r["at once (if all SMs)"] for r in table.records()] == [66, 33]


def test_the_dispatch_runs_small_problems_in_row_clusters():
    for n in (512, 768):          # too few 64 x 128 tiles for Kernel 5.15 (tests/test_tile_rows.py)
        d = dispatch("sm_90", 132, n, n, n)
        assert row_cluster(132, n, n) and d.key == "k5.14" and d.cluster == ROW_CLUSTER
        assert d.label == "k5.14/64/1x2" and "clusters of 1 × 2" in d.why
    assert tile_width(132, 256, 4096) == 64 and not row_cluster(132, 256, 4096)    # measured behind there
    assert dispatch("sm_90", 132, 256, 4096, 4096).label == "k5.11/64"
    assert dispatch("sm_90", 132, 1100, 1100, 1100).key == "k5.11"                  # 128 wide
    scaled = dispatch("sm_90", 132, 700, 700, 700, scaled=True)
    assert scaled.key == "k5.14" and scaled.kernel_out == "float32"


@pytest.mark.slow     # four builds of Kernel 5.14
@pytest.mark.parametrize("cluster, width, case", [((2, 2), 256, "A B"), ((1, 2), 32, "A^T B^T"),
                                                  ((1, 2), 64, "A B^T"), ((2, 1), 192, "A^T B")])
def test_each_shape_compiles_to_multicast_copies_and_its_hgmma_with_no_spills(cluster, width, case):
    kit = find_toolkit(13)
    if kit is None or cuda_tool("cuobjdump") is None:
        skip_or_fail("TCGEMM_REQUIRE_NVRTC", "no NVRTC 13 with its headers, or no cuobjdump")
    s = spec(cluster, width, case)
    listing = cuobjdump_sass(compile_cubin(s.source, build_target(s.source, "sm_90"), s.defines, kit))
    assert set(re.findall(r"HGMMA\.(\d+x\d+x\d+)", listing)) == {f"64x{width}x16"}
    assert "UTMALDG.2D.MULTICAST" in listing
    assert ("UTMASTG.2D" in listing) == (width >= 64)     # a 16-bit C box is 64 columns: 32 are stored by threads
    assert not re.search(r"\b(LDL|STL)\b", listing)
