"""Checks of tcgemm.smem.banks and of tcgemm.layouts against counts worked out by hand and against the
seed's Kernel 2.0.

Kernel 2.0 addresses are rebuilt here from the kernel's own index formulas (uint4 arrays with
8 uint4 = 128 bytes per shared row), not from tcgemm.layouts; the layouts are then checked
to produce exactly those addresses.
"""
import numpy as np
import pytest

from tcgemm.layouts import custom, padded, row_major, swizzle, swizzle_layout, xor_chunk, xor_permuted
from tcgemm.smem.banks import (
    Access,
    analysis_table,
    analyze,
    bank_of,
    layout_access,
    ldmatrix_access,
    ldmatrix_tile,
    phases,
    strided_access,
)

LANES = np.arange(32)
UINT4 = 16
SMEM_ROW = 8 * UINT4  # the seed's `uint4 As[...][8]`


def counts(report):
    return report.wavefronts, report.ideal, report.conflicts, report.ways


# --- the model on plain strided accesses ------------------------------------------------------

def test_bank_of():
    assert bank_of(0) == 0 and bank_of(3) == 0 and bank_of(4) == 1
    assert bank_of(124) == 31 and bank_of(128) == 0 and bank_of(132 + 2) == 1
    np.testing.assert_array_equal(bank_of(np.array([0, 64, 256, 260])), [0, 16, 0, 1])


def test_unit_stride_words_one_wavefront():
    report = analyze(strided_access(4, 4))
    assert counts(report) == (1, 1, 0, 1)
    assert len(report.phases) == 1
    np.testing.assert_array_equal(report.phases[0].words_per_bank, np.ones(32))


def test_stride_8_bytes_is_two_way():
    # lane i reads word 2i, bank 2i % 32: lanes i and i + 16 share a bank, odd banks idle
    report = analyze(strided_access(8, 4))
    assert counts(report) == (2, 1, 1, 2)
    expected = np.tile([2, 0], 16)
    np.testing.assert_array_equal(report.phases[0].words_per_bank, expected)


def test_stride_128_bytes_is_32_way():
    report = analyze(strided_access(128, 4))
    assert counts(report) == (32, 1, 31, 32)
    assert report.phases[0].words_per_bank[0] == 32
    assert report.phases[0].words_per_bank[1:].sum() == 0


def test_same_word_is_a_broadcast():
    assert counts(analyze(Access(np.full(32, 256), 4))) == (1, 1, 0, 1)
    # bytes and halves inside one word are the same word
    assert analyze(Access(LANES % 4 + 64, 1)).conflicts == 0
    assert analyze(Access(2 * (LANES % 2) + 64, 2)).conflicts == 0


def test_broadcast_does_not_hide_a_second_word():
    addresses = np.zeros(32, dtype=int)
    addresses[5] = 128  # word 32: also bank 0
    assert counts(analyze(Access(addresses, 4))) == (2, 1, 1, 2)


def test_16_byte_accesses_in_four_phases_of_eight():
    access = strided_access(16, 16)
    assert [list(p) for p in phases(access)] == [list(range(8 * j, 8 * j + 8)) for j in range(4)]
    report = analyze(access)
    assert counts(report) == (4, 4, 0, 1)
    assert report.phases[1].banks_per_lane[0] == (0, 1, 2, 3)  # lane 8 at byte 128


def test_8_byte_accesses_in_two_phases_of_sixteen():
    access = strided_access(8, 8)
    assert [list(p) for p in phases(access)] == [list(range(16)), list(range(16, 32))]
    assert counts(analyze(access)) == (2, 2, 0, 1)


def test_wide_accesses_count_every_word():
    # 8 B at 16 B stride: lane i covers banks 4i, 4i+1 (mod 32); lanes i and i + 8 collide
    assert counts(analyze(strided_access(16, 8))) == (4, 2, 2, 2)
    # 16 B at 32 B stride: lanes i and i + 4 of each phase of 8 collide
    assert counts(analyze(strided_access(32, 16))) == (8, 4, 4, 2)


def test_inactive_lanes_and_empty_phases():
    addresses = np.full(32, -1)
    addresses[:8] = 16 * np.arange(8)
    report = analyze(Access(addresses, 16))
    assert [p.lanes.size for p in report.phases] == [8, 0, 0, 0]
    assert counts(report) == (1, 1, 0, 1)
    # one conflicting inactive lane changes nothing
    addresses[3] = -1
    assert analyze(Access(addresses, 16)).conflicts == 0


def test_ldmatrix_phases_and_unused_lanes():
    for num in (1, 2, 4):
        access = Access(np.zeros(32, dtype=int), 16, "ldmatrix", num)
        assert [list(p) for p in phases(access)] == [list(range(8 * j, 8 * j + 8)) for j in range(num)]
    # lanes 8-31 of an .x1 point at conflicting rows but are not used
    addresses = 128 * LANES
    addresses[:8] = 16 * np.arange(8)
    assert counts(analyze(Access(addresses, 16, "ldmatrix", 1))) == (1, 1, 0, 1)
    assert analyze(Access(addresses, 16)).conflicts > 0


# --- the seed's Kernel 2.0 (64 x 4 uint4 tiles, two K-slices per 128-byte shared row) ----------

def seed_store_addresses(warp, permuted=True):
    store_row = warp * 4 + LANES // 8
    store_col = (LANES % 8) ^ (LANES // 8) if permuted else LANES % 8
    return store_row * SMEM_ROW + store_col * UINT4


def seed_load_a_addresses(first_row, k_pair, permuted=True):
    """ldmatrix.x4 of As[first_row + loadRowA] + loadColA (k_pair 1: loadColA ^ 2)."""
    load_row = (LANES % 16) // 2
    load_col = LANES // 16 + 4 * (LANES % 2)
    if permuted:
        load_col = load_col ^ (load_row % 4)
    load_col = load_col ^ (2 * k_pair)
    return (first_row + load_row) * SMEM_ROW + load_col * UINT4


def seed_load_b_addresses(first_row, k_pair, permuted=True):
    load_row = (LANES % 8) // 2
    load_col = LANES // 8 + 4 * (LANES % 2)
    if permuted:
        load_col = load_col ^ (load_row % 4)
    load_col = load_col ^ (2 * k_pair)
    return (first_row + load_row) * SMEM_ROW + load_col * UINT4


@pytest.mark.parametrize("permuted", [True, False])
def test_seed_global_to_shared_stores_are_conflict_free(permuted):
    for warp in range(8):
        report = analyze(Access(seed_store_addresses(warp, permuted), 16, "st"))
        assert counts(report) == (4, 4, 0, 1)


@pytest.mark.parametrize("first_row", [0, 8, 16, 24])
@pytest.mark.parametrize("k_pair", [0, 1])
def test_seed_ldmatrix_loads(first_row, k_pair):
    permuted = analyze(Access(seed_load_a_addresses(first_row, k_pair), 16, "ldmatrix", 4))
    assert counts(permuted) == (4, 4, 0, 1)
    plain = analyze(Access(seed_load_a_addresses(first_row, k_pair, False), 16, "ldmatrix", 4))
    assert counts(plain) == (16, 4, 12, 4)
    for rows in (0, 4):  # B tiles are 4 shared rows
        b = analyze(Access(seed_load_b_addresses(first_row + rows, k_pair), 16, "ldmatrix", 2))
        assert counts(b) == (2, 2, 0, 1)
        b_plain = analyze(Access(seed_load_b_addresses(first_row + rows, k_pair, False), 16, "ldmatrix", 2))
        assert counts(b_plain) == (8, 2, 6, 4)


def test_seed_unpermuted_banks_of_lanes_0_to_7():
    report = analyze(Access(seed_load_a_addresses(0, 0, permuted=False), 16, "ldmatrix", 4))
    phase = report.phases[0]
    banks = dict(zip(phase.lanes.tolist(), phase.banks_per_lane))
    for lane in (0, 2, 4, 6):
        assert banks[lane] == (0, 1, 2, 3)
    for lane in (1, 3, 5, 7):
        assert banks[lane] == (16, 17, 18, 19)
    assert phase.words_per_bank[0] == 4 and phase.words_per_bank[16] == 4


def test_xor_chunk_is_the_seeds_store_column():
    row = LANES // 8
    np.testing.assert_array_equal(xor_chunk(row, LANES % 8), [(l % 8) ^ (l // 8) for l in range(32)])
    # a permutation of the 8 chunks in every shared row
    for smem_row in range(8):
        assert sorted(xor_chunk(smem_row, np.arange(8)).tolist()) == list(range(8))


def test_layouts_reproduce_the_seed_addresses():
    """Tile coordinates (m, k in fp16 elements) of a 64 x 32 tile; row-major is the unpermuted seed."""
    permuted, plain = xor_permuted(), row_major(32, 2)
    for warp in range(8):
        m, k = warp * 8 + LANES // 4, 8 * (LANES % 4)  # the seed's global tile indices
        np.testing.assert_array_equal(permuted(m, k), seed_store_addresses(warp))
        np.testing.assert_array_equal(plain(m, k), seed_store_addresses(warp, permuted=False))
        assert analyze(layout_access(permuted, m, k, 16, "st")).conflicts == 0
    for first_row in (0, 8, 16, 24):
        for k_pair in (0, 1):
            tile = ldmatrix_tile(permuted, row0=2 * first_row, col0=16 * k_pair)
            np.testing.assert_array_equal(tile.addresses, seed_load_a_addresses(first_row, k_pair))
            tile = ldmatrix_tile(plain, row0=2 * first_row, col0=16 * k_pair)
            np.testing.assert_array_equal(tile.addresses, seed_load_a_addresses(first_row, k_pair, False))
            b = ldmatrix_tile(permuted, row0=2 * first_row, col0=16 * k_pair, num=2)
            np.testing.assert_array_equal(b.addresses[:16], seed_load_b_addresses(first_row, k_pair)[:16])


def test_seed_permutation_is_swizzle_2_4_3_on_bytes():
    m, k = np.meshgrid(np.arange(64), np.arange(32), indexing="ij")
    offsets = xor_permuted()(m, k)
    assert sorted(offsets.ravel().tolist()) == list(range(0, 64 * 64, 2))
    np.testing.assert_array_equal(offsets, swizzle_layout(2, 3, 3, 32, 2)(m, k))
    np.testing.assert_array_equal(offsets, swizzle_layout(2, 4, 3, 32, 2, unit="byte")(m, k))


def test_padding_the_seed_tile_also_removes_the_conflicts():
    assert analyze(ldmatrix_tile(padded(32, 2, 16))).conflicts == 0


# --- 128-byte rows: padding and CuTe swizzles ------------------------------------------------

def column_of_8_rows(layout, chunk):
    return ldmatrix_access(layout, np.arange(8), np.full(8, 8 * chunk))


@pytest.mark.parametrize("chunk", range(8))
def test_128_byte_rows(chunk):
    assert counts(analyze(column_of_8_rows(row_major(64, 2), chunk))) == (8, 1, 7, 8)
    assert counts(analyze(column_of_8_rows(padded(64, 2, 16), chunk))) == (1, 1, 0, 1)
    assert counts(analyze(column_of_8_rows(swizzle_layout(3, 4, 3, 64, 2, unit="byte"), chunk))) == (1, 1, 0, 1)
    assert counts(analyze(column_of_8_rows(swizzle_layout(3, 3, 3, 64, 2), chunk))) == (1, 1, 0, 1)
    assert counts(analyze(column_of_8_rows(xor_permuted(tile_chunks=8), chunk))) == (1, 1, 0, 1)
    # the unit matters: on fp16 element offsets <3,4,3> XORs 32-byte units with row // 2
    assert counts(analyze(column_of_8_rows(swizzle_layout(3, 4, 3, 64, 2), chunk))) == (2, 1, 1, 2)


def test_swizzle_values():
    s = swizzle(3, 4, 3)
    assert s(0) == 0 and s(15) == 15
    assert s(128) == 128 + 16          # bit 7 -> bit 4
    assert s(3 * 128 + 5) == 3 * 128 + 3 * 16 + 5
    assert s(8 * 128) == 8 * 128       # bit 10 is outside the mask
    assert swizzle(1, 1, -1)(2) == 6   # S < 0: bit 1 -> bit 2
    x = np.arange(4096)
    np.testing.assert_array_equal(s(s(x)), x)
    assert s.name == "Swizzle<3,4,3>"


def test_custom_layout_and_names():
    skewed = custom(lambda r, c: r * 128 + ((c * 2 + r * 16) % 128), "row-skewed", elem_bytes=2)
    assert skewed(3, 1) == 3 * 128 + 50
    # row r's chunk 0 sits at chunk r: eight distinct bank groups
    assert analyze(column_of_8_rows(skewed, 0)).conflicts == 0
    for layout in (row_major(64, 2), padded(64, 2, 16), xor_permuted(), swizzle_layout(3, 3, 3, 64, 2)):
        assert isinstance(layout.name, str) and layout.name


# --- argument errors --------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    (dict(addresses=np.zeros(32, dtype=int), width=3), "width"),
    (dict(addresses=np.zeros(31, dtype=int), width=4), "shape"),
    (dict(addresses=np.zeros((2, 16), dtype=int), width=4), "shape"),
    (dict(addresses=np.zeros(32, dtype=int), width=4, kind="load"), "kind"),
    (dict(addresses=np.zeros(32, dtype=int), width=16, kind="ldmatrix", ldmatrix_num=3), "ldmatrix_num"),
    (dict(addresses=np.zeros(32, dtype=int), width=8, kind="ldmatrix", ldmatrix_num=4), "width"),
    (dict(addresses=np.zeros(32, dtype=int), width=4, ldmatrix_num=4), "ldmatrix_num"),
    (dict(addresses=np.full(32, 8), width=16), "aligned"),
    (dict(addresses=np.full(32, -2), width=4), "non-negative"),
    (dict(addresses=np.full(32, 0.5), width=4), "integers"),
])
def test_access_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Access(**kwargs)


def test_helper_errors():
    with pytest.raises(ValueError, match="8, 16 or 32"):
        ldmatrix_access(row_major(64, 2), np.arange(12), np.zeros(12))
    with pytest.raises(ValueError, match="same length"):
        layout_access(row_major(64, 2), np.arange(8), np.arange(4), 4)
    with pytest.raises(ValueError, match="row_elems"):
        row_major(64, 2)(0, 64)
    with pytest.raises(ValueError, match="non-negative"):
        row_major(64, 2)(-1, 0)
    with pytest.raises(ValueError, match="elem_bytes"):
        row_major(64, 3)
    with pytest.raises(ValueError, match="num"):
        ldmatrix_tile(row_major(64, 2), num=3)
    with pytest.raises(ValueError, match=r"\|S\| >= B"):
        swizzle(3, 4, 2)
    with pytest.raises(ValueError, match="unit"):
        swizzle_layout(3, 3, 3, 64, 2, unit="word")
    with pytest.raises(ValueError, match="power of two"):
        xor_permuted(tile_chunks=3)
    with pytest.raises(ValueError, match="non-negative"):
        bank_of(-4)


def test_analysis_table_has_one_row_of_counts_per_access():
    table = analysis_table({"words": strided_access(4), "same word": strided_access(0),
                            "128 B apart": strided_access(128), "16 B": strided_access(16, width=16)})
    assert [c.name for c in table.columns] == ["Access", "Phases", "Wavefronts", "Ideal", "Conflicts", "Ways"]
    assert table.rows == (("words", 1, 1, 1, 0, 1), ("same word", 1, 1, 1, 0, 1),
                          ("128 B apart", 1, 32, 1, 31, 32), ("16 B", 4, 4, 4, 0, 1))
