"""Kernel 5.11 (Kernel 5.9 with 256-, 192-, 128- or 64-wide tiles), 5.12 and 5.13 (the same widths) without a GPU:
each width's build as the catalog describes it (its -DBN, stages and shared memory within sm_90's), the
map of an MN-major B, and (NVRTC, sm_90a) the HGMMA of its width, TMA's multicast loads and stores, and no
spills."""
import re

import pytest

from tcgemm.arch import arch_limits
from tcgemm.engine.catalog import GEMM_KERNELS, HOPPER_DTYPES, TILE_WIDTHS, WMMA_CASES, build_target, configured
from tcgemm.engine.gpu.nvrtc_offline import compile_cubin, cuda_tool, cuobjdump_sass, find_toolkit
from tcgemm.engine.tma import mn_box, operand_map
from required import skip_or_fail

K511 = GEMM_KERNELS["k5.11"]


def test_each_width_compiles_with_its_bn_and_stages_within_sm_90_s_shared_memory():
    limit = arch_limits("sm_90").max_smem_per_block
    assert K511.tile_widths == TILE_WIDTHS and TILE_WIDTHS[0] == (256, 4)
    for width, stages in TILE_WIDTHS:
        spec = configured("k5.11", "sm_90").with_tile_n(width)
        assert (spec.tile_n, spec.stages) == (width, stages)
        assert ("BN", width) in spec.defines and ("N_STAGES", stages) in spec.defines
        assert spec.smem_bytes <= limit, (width, spec.smem_bytes, limit)
        assert spec.variant.startswith(f"128x{width}")
    with pytest.raises(ValueError, match="has no tiles 96 wide; its widths are: 256, 192, 128, 64"):
        K511.with_tile_n(96)
    with pytest.raises(ValueError, match="Kernel 5.9: C in 16 bits has no tiles 128 wide; its widths are: 256 only"):
        GEMM_KERNELS["k5.9"].with_tile_n(128)


def test_an_mn_major_b_is_copied_in_boxes_and_a_k_major_one_in_halves():
    for width in (64, 128, 192, 256):
        spec = configured("k5.11", "sm_90").with_tile_n(width).with_orders(*WMMA_CASES["A B"])   # B row-major
        b = operand_map(spec, "B", 1000, 512)
        assert (b.box_rows, b.box_cols) == (spec.tile_k, mn_box("float16"))
        k_major = operand_map(configured("k5.11", "sm_90").with_tile_n(width), "B", 1000, 512)
        assert k_major.box_rows == width // 2          # each block of the cluster copies half of B's tile


@pytest.mark.slow     # twelve builds of Kernel 5.11, four of 5.12, two of 5.13
@pytest.mark.parametrize("key, width, in_dtype, out_dtype",
                         [("k5.11", w, *types) for w, _ in TILE_WIDTHS for types in HOPPER_DTYPES[:3]] +
                         [("k5.12", w, *HOPPER_DTYPES[1]) for w, _ in TILE_WIDTHS] +
                         [("k5.13", w, *HOPPER_DTYPES[0]) for w in (64, 128)])
def test_each_width_compiles_to_its_hgmma_with_tma_and_no_spills(key, width, in_dtype, out_dtype):
    kit = find_toolkit(13)
    if kit is None or cuda_tool("cuobjdump") is None:
        skip_or_fail("TCGEMM_REQUIRE_NVRTC", "no NVRTC 13 with its headers, or no cuobjdump")
    spec = configured(key, "sm_90").with_dtypes(in_dtype, out_dtype).with_orders(*WMMA_CASES["A^T B"]) \
        .with_tile_n(width)
    listing = cuobjdump_sass(compile_cubin(spec.source, build_target(spec.source, "sm_90"), spec.defines, kit))
    assert set(re.findall(r"HGMMA\.(\d+x\d+x\d+)", listing)) == {f"64x{width}x16"}
    assert "UTMALDG.2D.MULTICAST" in listing
    assert ("UTMASTG.2D" in listing) == (key != "k5.13")      # Kernel 5.13's threads store its column-major C
    assert not re.search(r"\b(LDL|STL)\b", listing)
