"""The tile timeline (tcgemm.hopper.timeline): the stamps' layout shared with kernels/trace.cuh, the reading of
stamps, and the TRACE switch in the kernels' machine code. No GPU."""
from __future__ import annotations

import numpy as np
import pytest

from tcgemm import KERNEL_DIR
from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.hopper.timeline import (FIRST_TILE_SLOT, MAX_TILES, TRACE_BLOCKS, TRACE_SLOTS, TileTimeline, compare_table,
                                    header_constants, storing_blocks, tiles_per_block)

TRACED = ("k5.6", "k5.7", "k5.8")


def stamps(tiles_per_block_us, start_us=(0.0,), end_gap_us=1.0):
    """Stamps in ns for blocks given as lists of (wait, main, store) in µs, each block starting at start_us."""
    out = np.zeros((len(tiles_per_block_us), TRACE_SLOTS), np.int64)
    for b, tiles in enumerate(tiles_per_block_us):
        t = 1_000_000 + 1e3 * start_us[b % len(start_us)]
        out[b, 0], out[b, 1] = t, 100 - b
        for i, (wait, main, store) in enumerate(tiles):
            slot = FIRST_TILE_SLOT + 3 * i
            t += 1e3 * wait
            out[b, slot] = t
            t += 1e3 * main
            out[b, slot + 1] = t
            t += 1e3 * store
            out[b, slot + 2] = t
        out[b, -1] = t + 1e3 * end_gap_us
    return out


def test_layout_is_the_headers():
    assert header_constants() == (TRACE_BLOCKS, TRACE_SLOTS) == (1024, 64)
    assert MAX_TILES == 20 and FIRST_TILE_SLOT + 3 * MAX_TILES < TRACE_SLOTS - 1   # the end slot stays free


def test_phases_are_read_per_tile_index():
    t = TileTimeline(stamps([[(2, 50, 3), (0.5, 48, 3.5)], [(1, 40, 4)]], start_us=(0, 10)), "x")
    assert list(t.counts) == [2, 1]
    first, second = t.phases()
    np.testing.assert_allclose(first.wait, [2, 1])
    np.testing.assert_allclose(first.main, [50, 40])
    np.testing.assert_allclose(first.store, [3, 4])
    np.testing.assert_allclose(first.begin, [2, 11])
    assert list(second.blocks) == [0]
    np.testing.assert_allclose([second.wait[0], second.main[0], second.store[0], second.begin[0]], [0.5, 48, 3.5, 55.5])
    assert t.span_us == pytest.approx(2 + 50 + 3 + 0.5 + 48 + 3.5 + 1)


def test_tables_and_figure():
    t = TileTimeline(stamps([[(2, 50, 3)] * 4] * 6 + [[(2, 50, 3)] * 3] * 2), "5.6")
    table = t.phase_table()
    assert [row[0] for row in table.rows] == ["tile 0", "tile 1", "tile 2", "tile 3"]
    assert [row[1] for row in table.rows] == [8, 8, 8, 6]
    assert table.rows[1][4] == "50.0 [50.0, 50.0]" and table.rows[1][5] == "3.0 [3.0, 3.0]"
    assert "the 6 blocks with 4 tiles end at 221.0 µs; the 2 blocks with 3 tiles end at 166.0 µs" in table.notes[0]
    fig = t.figure()
    assert fig.axes[0].get_ylim() == (7.5, -0.5)
    skip = TileTimeline(stamps([[(2, 48, 0.1)] * 2] * 2), "skip", stores=[False, False])
    rows = compare_table([t, skip]).rows
    assert rows[0][1:5] == (50.0, None, None, 3.0) and rows[1][4] is None and rows[0][6] is None


def test_clock_counters_give_the_main_loops_clock():
    s = stamps([[(2, 50, 3), (0.5, 40, 3)], [(1, 40, 4)]])
    clocks = np.where(s > 0, 0, 0)
    clocks[:, 2:] = (s[:, 2:] - 1_000_000) * 2          # 2 cycles per ns: 2 GHz throughout
    clocks[0, 2 + 4] = clocks[0, 2 + 3] + 40_000 * 1.5   # block 0's second main loop at 1.5 GHz
    t = TileTimeline(s, clocks=clocks)
    first, second = t.phases()
    np.testing.assert_allclose(first.clock_ghz, [2, 2])
    np.testing.assert_allclose(second.clock_ghz, [1.5])
    assert t.phase_table().rows[1][-1] == "1.50 [1.50, 1.50]"
    assert compare_table([t]).rows[0][2] == pytest.approx(2.0) and compare_table([t]).rows[0][3] is None
    # at 2 GHz block 0's first main loop (50 us) has 100k cycles, block 1's (40 us) 80k
    worked = TileTimeline(s, clocks=clocks, flop_per_tile=1024 * 100_000, peak_flop_per_clock=2048)
    np.testing.assert_allclose(worked.main_peak_share()[:2], [0.5, 0.625])
    with pytest.raises(ValueError, match="clocks must have the stamps' shape"):
        TileTimeline(s, clocks=clocks[:1])


def test_stores_select_the_blocks_whose_epilogue_counts():
    t = TileTimeline(stamps([[(1, 40, 0.1)], [(1, 40, 3.0)]]), stores=[False, True])
    np.testing.assert_allclose(t.store_us(), [3.0])


@pytest.mark.parametrize("damage, message", [
    (lambda s: s.__setitem__((1, -1), 0), "block 1 has no end stamp: did the launch run with TRACE"),
    (lambda s: s.__setitem__((0, 0), 0), "block 0 has no start stamp"),
    (lambda s: s.__setitem__((0, FIRST_TILE_SLOT + 1), 0), "block 0: tile 0 is incomplete but later tiles"),
    (lambda s: s.__setitem__((1, FIRST_TILE_SLOT + 2), 1), "block 1: its stamps go back in time"),
])
def test_damaged_stamps_are_named(damage, message):
    s = stamps([[(1, 10, 1), (1, 10, 1)]] * 2)
    damage(s)
    with pytest.raises(ValueError, match=message):
        TileTimeline(s)


def test_wrong_shape_is_named():
    with pytest.raises(ValueError, match=r"stamps must be \(blocks, 64\)"):
        TileTimeline(np.zeros((4, 8)))


def test_storing_blocks_follow_the_switches():
    assert list(storing_blocks(6)) == [True] * 6
    assert list(storing_blocks(6, ("TRACE", "SKIP_STORE"))) == [False] * 6
    assert list(storing_blocks(6, ("HALF_STORE",))) == [False, False, True, True, False, False]


def test_tiles_per_block_follow_the_persistent_schedule():
    counts = tiles_per_block(256, 132)            # 4096^3 on 132 SMs: 256 tile pairs, 66 clusters
    assert list(np.bincount(counts)) == [0, 0, 0, 16, 116]
    assert list(tiles_per_block(3, 8)) == [1, 1, 1, 1, 1, 1, 0, 0]


@pytest.mark.parametrize("key", TRACED)
def test_traced_kernels_have_the_switches_and_stamp_each_tile(key):
    spec = GEMM_KERNELS[key]
    assert {"TRACE", "HALF_STORE", "SKIP_STORE"} <= set(dict(spec.switches))
    text = (KERNEL_DIR / spec.source).read_text()
    assert '#include "trace.cuh"' in text
    for call in ("trace_start();", "STAGE_ARRIVED);", "MAIN_LOOP_DONE);", "STORE_ISSUED);", "trace_end();"):
        assert text.count(call) == 1, (key, call)


def test_the_timer_is_read_only_with_trace():
    from tcgemm.engine.gpu.nvrtc_offline import compile_cubin, cuobjdump_sass
    from tcgemm.engine.gpu.sass import sass_tools_missing

    if missing := sass_tools_missing():
        pytest.skip(missing)
    spec = GEMM_KERNELS["k5.6"]
    sass = {on: cuobjdump_sass(compile_cubin(spec.source, "sm_90a", spec.with_switches(*on).defines))
            for on in ((), ("TRACE",))}
    for register in ("SR_GLOBALTIMER", "SR_CLOCKLO"):      # start, three per tile, end
        assert (sass[()].count(register), sass[("TRACE",)].count(register)) == (0, 5), register
