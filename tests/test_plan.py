"""tcgemm.engine.plan without a GPU: the model's choices on the H100 that recorded the book, blocks per SM on
three GPU shapes, what does not fit, bad input; the registers TILES declares against what NVRTC 13
compiles for sm_90; and the catalog and validation of a tile-planned, split-K launch (Kernel 4.6)."""
from __future__ import annotations

import subprocess
from dataclasses import replace

import pytest

from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.errors import OperandError
from tcgemm.engine.gpu.nvrtc_offline import compile_cubin, find_toolkit
from tcgemm.pipelines.occupancy import parse_res_usage
from tcgemm.engine.plan import H100_SXM, TILES, GpuShape, blocks_per_sm, estimate, plan
from tcgemm.engine.operands import check_gemm_shape
from required import require_cuda_tool    # cuobjdump's path, or a skip (a failure with TCGEMM_REQUIRE_NVCC=1)

# Shared memory as tcgemm.arch gives sm_80 (164 KB per SM) and sm_89 (100 KB per SM, 1536 threads).
SM80_LIKE = GpuShape("sm_80-like", sms=108, smem_per_sm=167936, smem_per_block=166912, ceiling_tflops=312.0,
                     dram_gbs=2039.0)
SM89_LIKE = GpuShape("sm_89-like", sms=128, smem_per_sm=102400, smem_per_block=101376, threads_per_sm=1536,
                     ceiling_tflops=165.2, dram_gbs=1008.0)
TILE = {t.name: t for t in TILES}


def test_h100_sxm_is_the_recording_gpu():
    assert (H100_SXM.sms, H100_SXM.smem_per_sm, H100_SXM.smem_per_block) == (132, 233472, 232448)
    assert (H100_SXM.regs_per_sm, H100_SXM.threads_per_sm) == (65536, 2048)
    assert (H100_SXM.ceiling_tflops, H100_SXM.dram_gbs) == (628.0, 3350.0)


# Hand-computed: min(smem per SM // tile's smem, threads per SM // threads, 65536 // (threads x regs)),
# 0 where the tile's smem exceeds one block's maximum. On the H100 registers bind the two 229-register
# tiles (58624 and 29312 per block) and shared memory the rest (192, 96, 96, 64, 80 and 40 KB).
@pytest.mark.parametrize("gpu, blocks", [
    (H100_SXM, {"128x256": 1, "128x128": 2, "64x128": 2, "64x64": 3, "32x128": 2, "16x64": 5}),
    (SM80_LIKE, {"128x256": 0, "128x128": 1, "64x128": 1, "64x64": 2, "32x128": 2, "16x64": 4}),
    (SM89_LIKE, {"128x256": 0, "128x128": 1, "64x128": 1, "64x64": 1, "32x128": 1, "16x64": 2}),
], ids=lambda v: getattr(v, "name", ""))
def test_blocks_per_sm(gpu, blocks):
    assert {t.name: blocks_per_sm(t, gpu) for t in TILES} == blocks


def test_tile_shared_memory_and_threads():
    assert {t.name: (t.smem_bytes, t.threads) for t in TILES} == {
        "128x256": (196608, 256), "128x128": (98304, 128), "64x128": (98304, 128),
        "64x64": (65536, 128), "32x128": (81920, 128), "16x64": (40960, 128)}


def test_one_token_splits_k_on_a_small_m_tile():
    """1×4096×4096 with the 128×256 tile is 16 blocks for 132 SMs; the plan takes a tile of at most 32
    rows and splits K so that the grid covers the GPU."""
    assert estimate(TILE["128x256"], 1, 1, 4096, 4096, H100_SXM).tiles == 16
    p = plan(1, 4096, 4096, H100_SXM)
    assert p.tile.bm <= 32 and p.splits > 1
    assert p.choice.tiles * p.splits > H100_SXM.sms
    assert f"K split {p.splits} ways" in p.why and p.why.startswith("1×4096×4096: ")


def test_a_large_square_takes_a_big_tile_unsplit():
    p = plan(8192, 8192, 8192, H100_SXM)
    assert p.tile.bm == 128 and p.tile.bn >= 128 and p.splits == 1
    assert "K not split" in p.why and p.choice.bound == "compute"


def test_candidates_fastest_first_and_the_table_starts_with_the_choice():
    p = plan(77, 8192, 4096, H100_SXM)
    times = [e.seconds for e in p.candidates]
    assert p.candidates[0] == p.choice and times == sorted(times)
    assert len({(e.tile.name, e.splits) for e in p.candidates}) == len(p.candidates)
    table = p.table(rows=3)
    assert len(table.rows) == 3 and table.rows[0][:2] == (p.tile.name, p.splits)


def test_a_tile_that_does_not_fit_is_skipped():
    assert estimate(TILE["128x256"], 1, 4096, 4096, 4096, SM89_LIKE) is None
    p = plan(8192, 8192, 8192, SM89_LIKE)
    assert all(e.tile.name != "128x256" for e in p.candidates)
    assert blocks_per_sm(p.tile, SM89_LIKE) >= 1


def test_no_split_below_the_minimum_k_tiles():
    """K = 256 is 4 K tiles of 64: too few to split."""
    assert all(e.splits == 1 for e in plan(16, 4096, 256, H100_SXM).candidates)


@pytest.mark.parametrize("shape", [(0, 4096, 4096), (16, 0, 4096), (16, 4096, -8)])
def test_plan_rejects_empty_problems(shape):
    with pytest.raises(ValueError, match="M, N, K >= 1"):
        plan(*shape, H100_SXM)


def test_plan_says_when_no_tile_fits():
    tiny = replace(SM89_LIKE, name="tiny", smem_per_sm=32 * 1024, smem_per_block=32 * 1024)
    with pytest.raises(ValueError, match="no tile configuration of Kernel 4.6 fits tiny"):
        plan(1024, 1024, 1024, tiny)


@pytest.mark.slow     # compiles Kernel 4.6 in every tile
@pytest.mark.parametrize("tile", TILES, ids=lambda t: t.name)
def test_tile_registers_cover_what_nvrtc_13_compiles(tmp_path, tile):
    """The model counts TileConfig.regs per thread; the sm_90 build, compiled as the launcher compiles
    it (GemmKernel.with_tile's defines), may use no more, and spills nothing."""
    cuobjdump = require_cuda_tool("cuobjdump")
    kit = find_toolkit(13)
    if kit is None:
        pytest.skip("NVRTC 13 with its headers is not installed (requirements-nvrtc13.txt)")
    spec = GEMM_KERNELS["k4.6"].with_tile(tile)
    cubin = tmp_path / f"{tile.name}.cubin"
    cubin.write_bytes(compile_cubin(spec.source, "sm_90", spec.defines, kit))
    listing = subprocess.run([cuobjdump, "-res-usage", str(cubin)], check=True, capture_output=True,
                             text=True).stdout
    usage = parse_res_usage(listing)[spec.entry]
    assert usage["registers"] <= tile.regs and usage["local"] == 0, (tile.name, usage)


def test_with_tile_compiles_the_tile_in_and_splits_k_over_grid_z():
    spec = GEMM_KERNELS["k4.6"].with_tile(TILE["64x128"], splits=3)
    assert (spec.tile_m, spec.tile_n, spec.tile_k, spec.stages) == (64, 128, 64, 4)
    assert (spec.block, spec.warps, spec.splits, spec.planned) == ((128, 1, 1), (2, 2), 3, False)
    assert spec.grid(100, 300) == (3, 2, 3)
    assert spec.defines == (("BM", 64), ("BN", 128), ("WARPS_M", 2), ("WARPS_N", 2), ("BK", 64),
                            ("N_STAGES", 4))
    assert spec.variant == "64x128, BK=64, 4 stages, K split 3 ways"
    assert GEMM_KERNELS["k4.6"].planned and GEMM_KERNELS["k4.6"].variant == "tile planned per problem"
    assert GEMM_KERNELS["k4.6"].grid(100, 300)[2] == 1


def test_with_tile_needs_a_tile_macro_kernel_and_a_positive_split():
    with pytest.raises(ValueError, match="fixes its tile in its source"):
        GEMM_KERNELS["k4.5"].with_tile(TILE["64x64"])
    with pytest.raises(ValueError, match="splits must be at least 1"):
        GEMM_KERNELS["k4.6"].with_tile(TILE["64x64"], splits=0)


def test_split_partials_must_fit_32_bit_indices():
    """16384² of C fits int32 (2**28 elements); eight partial copies of it (2**31) do not."""
    whole = GEMM_KERNELS["k4.6"].with_tile(TILE["128x256"])
    assert check_gemm_shape(whole, 16384, 16384, 4096) == (16384, 16384, 4096)
    with pytest.raises(OperandError, match=r"splits\*M\*N=2147483648 overflows"):
        check_gemm_shape(whole.with_tile(TILE["128x256"], splits=8), 16384, 16384, 4096)
