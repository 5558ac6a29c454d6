"""Kernel 5.8 (ping-pong consumers) without a GPU: its catalog entry (Kernel 5.7 with 128 x 128 tiles
and a deeper ring), the maps and boxes of its smaller B tile, that each consumer's two accumulator
halves go to the rows and columns of C its TMA boxes cover, that the kernel's constants are the
catalog's; and tcgemm.pipelines.ping_pong's model of the two schedules and count of operand bytes."""
import re

import numpy as np
import pytest

from tcgemm.arch import arch_limits
from tcgemm.engine.catalog import GEMM_KERNELS, WMMA_CASES, configured
from tcgemm.engine.kernel_types import TMA_SMEM_ALIGN, TMA_STORE_SMEM
from tcgemm.hopper.wgmma import accumulator_layout
from tcgemm.pipelines.ping_pong import bytes_per_mac, consumer_spans, tensor_cores_idle, traffic_table
from tcgemm.engine.source import KERNEL_DIR
from tcgemm.engine.tma import C_BOX_COLS, C_BOX_ROWS, boxes_as_canonical, c_staging_offsets, gemm_maps

K57, K58 = GEMM_KERNELS["k5.7"], GEMM_KERNELS["k5.8"]
LIMIT = arch_limits("sm_90").max_smem_per_block


def test_catalog_entry_is_kernel_5_7_with_128_x_128_tiles():
    same = lambda k: (k.tile_m, k.tile_k, k.cluster, k.block, k.signature, k.switches, k.either_order,
                      k.schedule, k.archs, k.arch_specific)
    assert same(K58) == same(K57) and (K57.tile_n, K58.tile_n) == (256, 128)
    assert "HGMMA.64x128x16.F32" in K58.sass and "HGMMA.64x256x16.F32" not in K58.sass


def test_six_stages_of_32_kb_fit_beside_the_buffers_of_c_and_seven_do_not():
    spec = configured("k5.8", "sm_90")
    stage = 2 * (128 + 128) * 64
    assert stage == 32 * 1024 and spec.stages == 6
    assert spec.smem_bytes == 6 * stage + TMA_SMEM_ALIGN + TMA_STORE_SMEM <= LIMIT
    assert K58.with_config(64, 7).smem_bytes > LIMIT
    assert K58.for_smem(6 * stage + TMA_SMEM_ALIGN + TMA_STORE_SMEM - 1).stages == 5


def test_persistent_grid_counts_clusters_of_two_128_x_128_tiles():
    assert K58.grid(4096, 4096, 132) == (132, 1, 1)        # 16 x 32 pairs of tiles: one block per SM
    assert K58.grid(256, 256, 132) == (4, 1, 1)            # one pair of rows, two columns of tiles
    assert K58.grid(129, 257, 132) == (6, 1, 1)


@pytest.mark.parametrize("case", list(WMMA_CASES))
def test_b_is_copied_in_halves_of_64_per_block(case):
    """Each block of the cluster copies 64 of the tile's 128 columns of B and multicasts them: one box of
    64 rows K-major, one box of 64 N MN-major. A as in Kernel 5.7."""
    spec = configured("k5.8", "sm_90").with_orders(*WMMA_CASES[case])
    a, b = gemm_maps(spec, 1000, 1008, 1024)
    a57, _ = gemm_maps(configured("k5.7", "sm_90").with_orders(*WMMA_CASES[case]), 1000, 1008, 1024)
    assert a == a57
    assert (b.box_rows, b.box_cols) == (64, 64)              # 64 N by 64 K, or 64 K by 64 N
    assert (b.rows, b.cols) == ((1024, 1008) if spec.mn_major("B") else (1008, 1024))


def test_an_mn_major_b_tile_is_two_boxes_at_the_descriptors_offsets():
    same, lbo, sbo = boxes_as_canonical(K58.with_orders("C", "C"), "B")
    assert same and (lbo, sbo) == (8192, 1024)


def test_each_half_of_the_accumulators_is_stored_by_its_own_row_of_boxes():
    """Box `box` of a consumer's tile covers rows 64 (box // 4) on and columns 32 (box % 4) on; thread t's
    pair (j, h) of it holds register 4 (4 (box % 4) + j) + 2 h of accumulator half box // 4, whose
    (row, col) in the m64n128 layout, less the box's first column, is where the staging writes it."""
    rows, cols, _ = c_staging_offsets()
    layout = accumulator_layout(128)
    boxes_n = K58.tile_n // C_BOX_COLS
    seen = set()
    for box in range(2 * boxes_n):
        half, col = divmod(box, boxes_n)
        t, j, h = np.meshgrid(np.arange(128), np.arange(4), np.arange(2), indexing="ij")
        i = 4 * (4 * col + j) + 2 * h
        r, c = layout.row[t, i], layout.col[t, i]
        assert np.array_equal(r, rows) and np.array_equal(c - C_BOX_COLS * col, cols)
        seen |= {(half, int(reg)) for reg in np.unique(i)}
    assert seen == {(half, reg) for half in (0, 1) for reg in range(0, 64, 2)}   # every pair once
    assert 2 * C_BOX_ROWS == K58.tile_m


def test_kernel_source_uses_the_catalogs_tile_ring_and_wgmma():
    text = (KERNEL_DIR / K58.source).read_text()
    assert re.search(r"constexpr int BM = (\d+), BN = (\d+);", text).groups() == (str(K58.tile_m), str(K58.tile_n))
    assert re.search(r"#define N_STAGES (\d+)", text).group(1) == str(configured("k5.8", "sm_90").stages)
    assert "wgmma_m64n128k16_f32_f16_ss<A_MN, B_MN>(d[h]" in text
    assert "mbarrier_init(empty + 8 * s, 2)" in text      # one consumer per block frees a stage
    # Kernel 5.7's operand constants are kept as they were.
    text57 = (KERNEL_DIR / K57.source).read_text()
    for line in ("A_STEP = A_MN ? 16 * 128 : 32", "A_LBO = A_MN ? BOX_BYTES : 16", "BOX_MN = 64"):
        assert line in text and line in text57


def test_cooperative_consumers_store_together_and_the_tensor_cores_wait():
    spans = consumer_spans("cooperative", 3, main=4.0, store=1.0)
    mains = [(s.start, s.end) for s in spans if s.kind == "main"]
    assert mains[0::2] == mains[1::2]                         # both consumers, the same tile at once
    assert tensor_cores_idle(spans) == pytest.approx(1.0 / 5.0)


def test_ping_pong_main_loops_alternate_and_hide_each_store_under_the_other_consumers():
    spans = consumer_spans("ping-pong", 3, main=4.0, store=1.0)
    mains = sorted((s for s in spans if s.kind == "main"), key=lambda s: s.start)
    assert [s.consumer for s in mains] == [0, 1] * 3
    assert all(a.end <= b.start for a, b in zip(mains, mains[1:]))             # one at a time
    for c in (0, 1):
        own = [s for s in spans if s.consumer == c]
        assert all(a.end <= b.start for a, b in zip(own, own[1:]))             # a consumer's own order
    assert max(s.end for s in spans) == pytest.approx(3 * 4.0 + 1.0)          # only the last store shows
    assert tensor_cores_idle(spans) < tensor_cores_idle(consumer_spans("cooperative", 3, 4.0, 1.0))


def test_a_store_longer_than_half_a_main_loop_is_not_hidden():
    spans = consumer_spans("ping-pong", 4, main=2.0, store=3.0)
    assert tensor_cores_idle(spans) > 0.3
    with pytest.raises(ValueError, match="mode must be one of cooperative, ping-pong"):
        consumer_spans("both", 1, 1.0, 1.0)


def test_smaller_tiles_read_1_2_times_the_shared_memory_and_1_5_times_the_l2_bytes_per_mac():
    (smem56, l256), (smem58, l258) = bytes_per_mac("k5.6"), bytes_per_mac("k5.8")
    assert smem56 == pytest.approx((64 + 256) * 16 * 2 / (64 * 256 * 16))     # A 64 rows, B 256 columns
    assert (smem58 / smem56, l258 / l256) == (pytest.approx(1.2), pytest.approx(1.5))
    assert [row[0] for row in traffic_table().rows] == ["Kernel 5.6", "Kernel 5.8"]
