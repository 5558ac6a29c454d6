"""The SGEMM thread layout, load pattern and staged write-back, checked against their invariants."""
from collections import Counter

import numpy as np
import pytest

from tcgemm.smem import banks
from tcgemm.sgemm import sgemm_layout as sg

TILES = [64, 128]


@pytest.mark.parametrize("tile", TILES)
def test_every_c_element_has_exactly_one_owner_with_64_each(tile):
    threads = sg.thread_count(tile)
    counts = Counter()
    for tid in range(threads):
        counts.update((m, n) for m in sg.thread_rows(tid, tile) for n in sg.thread_cols(tid, tile))
    assert set(counts) == {(m, n) for m in range(tile) for n in range(tile)}
    assert set(counts.values()) == {1}
    owner = sg.owner_map(tile)
    assert owner.shape == (tile, tile)
    assert sorted(Counter(owner.ravel().tolist()).items()) == [(tid, 64) for tid in range(threads)]


def test_thread_and_warp_counts():
    assert [(sg.thread_count(t), sg.warp_count(t), sg.half(t)) for t in TILES] == [(64, 2, 32), (256, 8, 64)]


@pytest.mark.parametrize("tid, rows, cols", [
    (0, (0, 1, 2, 3, 32, 33, 34, 35), (0, 1, 2, 3, 32, 33, 34, 35)),
    (1, (0, 1, 2, 3, 32, 33, 34, 35), (4, 5, 6, 7, 36, 37, 38, 39)),
    (2, (4, 5, 6, 7, 36, 37, 38, 39), (0, 1, 2, 3, 32, 33, 34, 35)),
    (16, (0, 1, 2, 3, 32, 33, 34, 35), (8, 9, 10, 11, 40, 41, 42, 43)),
    (32, (0, 1, 2, 3, 32, 33, 34, 35), (16, 17, 18, 19, 48, 49, 50, 51)),
])
def test_maxas_64_thread_layout(tid, rows, cols):
    assert sg.thread_rows(tid, 64) == rows
    assert sg.thread_cols(tid, 64) == cols
    assert sg.thread_origin(tid, 64) == (rows[0], cols[0])


def test_warps_of_the_64_tile_split_the_first_quadrant_in_n():
    owner = sg.owner_map(64)
    warp = owner // 32
    assert np.all(warp[:32, :16] == 0) and np.all(warp[:32, 16:32] == 1)
    assert np.array_equal(owner[:32, :32], owner[32:, 32:])


def test_128_tile_warps_cover_32_rows_by_16_columns_of_each_quadrant():
    warp = sg.owner_map(128)[:64, :64] // 32
    for w in range(8):
        rows, cols = np.nonzero(warp == w)
        assert (rows.min(), rows.max() - rows.min(), cols.min(), cols.max() - cols.min()) == \
               (32 * (w // 4), 31, 16 * (w % 4), 15)


@pytest.mark.parametrize("tile", TILES)
def test_load_map_covers_each_float4_of_each_stripe_once(tile):
    loads = sg.load_map(tile)
    counts = Counter(load for per_thread in loads for load in per_thread)
    expected = {sg.Load(m, k, c) for m in "AB" for k in range(sg.BK) for c in range(tile // 4)}
    assert set(counts) == expected and set(counts.values()) == {1}
    half_threads = sg.thread_count(tile) // 2
    assert all(load.matrix == ("A" if tid < half_threads else "B")
               for tid, per_thread in enumerate(loads) for load in per_thread)


def test_64_tile_load_pattern_is_maxas():
    loads = sg.load_map(64)
    assert sg.loads_per_thread(64) == 4 and sg.loads_per_thread(128) == 2
    assert loads[0] == [sg.Load("A", k, 0) for k in (0, 2, 4, 6)]
    assert loads[17] == [sg.Load("A", k, 1) for k in (1, 3, 5, 7)]
    assert loads[32] == [sg.Load("B", k, 0) for k in (0, 2, 4, 6)]
    # one instruction of a warp: two whole k rows of 16 float4
    assert {(l[0].k, l[0].col4) for l in loads[32:64]} == {(k, c) for k in (0, 1) for c in range(16)}
    assert sg.load_map(128)[130] == [sg.Load("B", 0, 2), sg.Load("B", 4, 2)]


@pytest.mark.parametrize("tile", TILES)
@pytest.mark.parametrize("p", range(4))
def test_staging_writes_fill_every_stage_cell_once_with_the_row_it_holds(tile, p):
    writes = [cell for per_thread in sg.stage_writes(tile, p) for cell in per_thread]
    cells = Counter((c.stage_row, c.col4) for c in writes)
    assert set(cells) == {(s, c) for s in range(tile // 4) for c in range(tile // 4)}
    assert set(cells.values()) == {1}
    assert all(c.c_row == sg.stage_c_row(tile, p, c.stage_row) and c.c_col == 4 * c.col4 for c in writes)
    owner = sg.owner_map(tile)
    for tid, per_thread in enumerate(sg.stage_writes(tile, p)):
        assert all(owner[c.c_row, c.c_col + i] == tid for c in per_thread for i in range(4))


@pytest.mark.parametrize("tile", TILES)
def test_staging_reads_store_every_c_element_once_over_the_four_passes(tile):
    stored = Counter()
    for p in range(4):
        for per_thread in sg.stage_reads(tile, p):
            stored.update((c.c_row, c.c_col + i) for c in per_thread for i in range(4))
    assert set(stored) == {(m, n) for m in range(tile) for n in range(tile)}
    assert set(stored.values()) == {1}


def test_stage_rows_hold_row_p_of_each_block():
    assert [sg.stage_c_row(64, 1, s) for s in (0, 1, 7, 8, 15)] == [1, 5, 29, 33, 61]
    assert [sg.stage_c_row(128, 3, s) for s in (0, 15, 16, 31)] == [3, 63, 67, 127]


@pytest.mark.parametrize("tile, run_bytes", [(64, [256, 256]), (128, [512])])
def test_each_warp_store_writes_whole_contiguous_c_rows(tile, run_bytes):
    for p in range(4):
        for warp in range(sg.warp_count(tile)):
            for j in range(4):
                runs = sg.store_runs(tile, p, warp, j)
                assert [end - first for _, first, end in runs] == run_bytes
                assert all(first == 0 for _, first, _ in runs)
                assert len({row for row, _, _ in runs}) == len(runs)


def test_store_runs_of_the_64_tile():
    assert sg.store_runs(64, 0, 1, 0) == [(8, 0, 256), (12, 0, 256)]   # stage rows 2, 3
    assert sg.store_runs(64, 2, 0, 2) == [(34, 0, 256), (38, 0, 256)]  # stage rows 8, 9


@pytest.mark.parametrize("tile, phases", [(64, 128), (128, 512)])
def test_padding_makes_the_staging_writes_conflict_free(tile, phases):
    padded = sg.staging_bank_conflicts(tile, pad=8)
    assert (padded.ideal, padded.total, padded.conflicts, padded.ways) == (phases, phases, 0, 1)
    plain = sg.staging_bank_conflicts(tile, pad=0)
    assert (plain.ideal, plain.total, plain.conflicts, plain.ways) == (phases, 4 * phases, 3 * phases, 4)
    assert np.all(plain.wavefronts == 4)


@pytest.mark.parametrize("pad", [0, 8])
def test_staging_reads_are_conflict_free_either_way(pad):
    assert sg.staging_bank_conflicts(64, pad=pad, side="read").conflicts == 0


def test_an_unpadded_phase_puts_four_rows_on_the_same_eight_banks():
    access = sg.staging_access(64, 0, 0, 0, pad=0)
    phase = banks.analyze(access).phases[0]
    assert sorted(np.flatnonzero(phase.words_per_bank)) == list(range(8))
    assert set(phase.words_per_bank[:8]) == {4}


@pytest.mark.parametrize("tile", TILES)
def test_a_warp_reads_8_float4_of_as_and_4_of_bs_per_load_so_all_lanes_broadcast(tile):
    for warp in range(sg.warp_count(tile)):
        for k in range(sg.BK):
            words = sg.shared_words_read(tile, warp, k)
            assert [len(w) for w in words["A"]] == [8, 8]
            assert [len(w) for w in words["B"]] == [4, 4]
            for matrix in "AB":
                for load in (0, 1):
                    access = banks.Access(sg.shared_read_addresses(tile, warp, k, matrix, load), 16)
                    assert banks.analyze(access).conflicts == 0


def test_shared_words_of_warp_0_are_its_rows_and_columns():
    words = sg.shared_words_read(64, 0, 1)
    assert words["A"][0] == tuple(4 * (64 + m) for m in range(0, 32, 4))
    assert words["A"][1] == tuple(4 * (64 + m) for m in range(32, 64, 4))
    assert words["B"][0] == tuple(4 * (64 + n) for n in range(0, 16, 4))


@pytest.mark.parametrize("call, message", [
    (lambda: sg.owner_map(96), "tile must be one of"),
    (lambda: sg.thread_rows(0, True), "tile must be one of"),
    (lambda: sg.thread_rows(64, 64), "tid must be an integer in 0..63"),
    (lambda: sg.thread_cols(-1, 128), "tid must be an integer in 0..255"),
    (lambda: sg.stage_writes(64, 4), "pass p must be"),
    (lambda: sg.shared_words_read(64, 2, 0), "warp must be"),
    (lambda: sg.shared_words_read(64, 0, 8), "k must be"),
    (lambda: sg.shared_read_addresses(64, 0, 0, "C", 0), "matrix must be"),
    (lambda: sg.staging_bank_conflicts(64, pad=2), "pad must be"),
    (lambda: sg.staging_access(64, 0, 0, 0, side="both"), "side must be"),
])
def test_bad_arguments_are_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()
