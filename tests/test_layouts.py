"""Checks of tcgemm.fragment_layouts against tables rebuilt here from the ISA's pictures.

The expected tables do not reuse the ISA's per-element formulas: they are built
from how the figures read. Each fragment is made of "core tiles" of 8 lines; the
32 lanes, in order, walk a tile line by line, each lane taking the next few
consecutive entries (two b16 or four s8 values, one 32-bit register's worth).
A/C tiles run along matrix rows, B tiles along matrix columns (the k direction).
"""
import numpy as np
import tcgemm.fragment_layouts as L
import pytest

from tcgemm.fragment_layouts import (
    MMA_VARIANTS,
    FragmentLayout,
    describe,
    ldmatrix_address_lane,
    ldmatrix_instruction,
    ldmatrix_layout,
    mma_layout,
    mma_layouts,
    ptx_instruction,
)


def core_tile_tables(tile_origins, per_lane, along):
    """Expected row/col tables from tiles listed in element order."""
    n_elements = len(tile_origins) * per_lane
    rows = np.zeros((32, n_elements), dtype=int)
    cols = np.zeros((32, n_elements), dtype=int)
    line_length = 4 * per_lane
    for tile, (r0, c0) in enumerate(tile_origins):
        for lane in range(32):
            for j in range(per_lane):
                line, offset = divmod(lane * per_lane + j, line_length)
                r, c = (line, offset) if along == "row" else (offset, line)
                rows[lane, tile * per_lane + j] = r0 + r
                cols[lane, tile * per_lane + j] = c0 + c
    return rows, cols


TILES_16x16 = [(0, 0), (8, 0), (0, 8), (8, 8)]
EXPECTED_MMA = {
    ("m16n8k16", "f16", "A"): (TILES_16x16, 2, "row"),
    ("m16n8k16", "f16", "B"): ([(0, 0), (8, 0)], 2, "col"),
    ("m16n8k8", "f16", "A"): ([(0, 0), (8, 0)], 2, "row"),
    ("m16n8k8", "f16", "B"): ([(0, 0)], 2, "col"),
    ("m16n8k32", "s8", "A"): ([(0, 0), (8, 0), (0, 16), (8, 16)], 4, "row"),
    ("m16n8k32", "s8", "B"): ([(0, 0), (16, 0)], 4, "col"),
    # bf16 is drawn in f16's figures, e4m3/e5m2 in s8's; tf32 has its own (one element per register).
    ("m16n8k16", "bf16", "A"): (TILES_16x16, 2, "row"),
    ("m16n8k16", "bf16", "B"): ([(0, 0), (8, 0)], 2, "col"),
    ("m16n8k8", "tf32", "A"): ([(0, 0), (8, 0), (0, 4), (8, 4)], 1, "row"),
    ("m16n8k8", "tf32", "B"): ([(0, 0), (4, 0)], 1, "col"),
    ("m16n8k32", "e4m3", "A"): ([(0, 0), (8, 0), (0, 16), (8, 16)], 4, "row"),
    ("m16n8k32", "e4m3", "B"): ([(0, 0), (16, 0)], 4, "col"),
    ("m16n8k32", "e5m2", "A"): ([(0, 0), (8, 0), (0, 16), (8, 16)], 4, "row"),
    ("m16n8k32", "e5m2", "B"): ([(0, 0), (16, 0)], 4, "col"),
}
ACC_TILES = ([(0, 0), (8, 0)], 2, "row")

ALL_MMA_LAYOUTS = [
    (key, op) for key in MMA_VARIANTS for op in ("A", "B", "C", "D")
]
ALL_LDMATRIX = [(num, trans) for num in (1, 2, 4) for trans in (False, True)]


def all_layouts():
    layouts = [mma_layouts(key)[op] for key, op in ALL_MMA_LAYOUTS]
    layouts += [ldmatrix_layout(num, trans) for num, trans in ALL_LDMATRIX]
    return layouts


@pytest.mark.parametrize("key,operand", ALL_MMA_LAYOUTS)
def test_mma_tables_match_core_tile_reading(key, operand):
    shape, ab_type, acc_type = MMA_VARIANTS[key]
    layout = mma_layout(shape, operand, ab_type, acc_type)
    spec = ACC_TILES if operand in ("C", "D") else EXPECTED_MMA[(shape, ab_type, operand)]
    rows, cols = core_tile_tables(*spec)
    np.testing.assert_array_equal(layout.row, rows)
    np.testing.assert_array_equal(layout.col, cols)


@pytest.mark.parametrize("num,trans", ALL_LDMATRIX)
def test_ldmatrix_tables_match_row_words(num, trans):
    rows, cols = core_tile_tables([(8 * j, 0) for j in range(num)], 2, "col" if trans else "row")
    layout = ldmatrix_layout(num, trans)
    np.testing.assert_array_equal(layout.row, rows)
    np.testing.assert_array_equal(layout.col, cols)


def test_ldmatrix_emulated_as_32bit_row_words():
    # Without .trans each stored row of 8 b16 values is four 32-bit words, word w of
    # row r going to lane 4r + w; with .trans the same holds for the transposed matrix.
    stored = np.arange(32 * 8).reshape(32, 8)
    blocks = stored.reshape(4, 8, 8)
    plain = blocks.reshape(4, 32, 2).transpose(1, 0, 2).reshape(32, 8)
    transposed = blocks.transpose(0, 2, 1).reshape(4, 32, 2).transpose(1, 0, 2).reshape(32, 8)
    np.testing.assert_array_equal(ldmatrix_layout(4).gather(stored), plain)
    np.testing.assert_array_equal(ldmatrix_layout(4, trans=True).gather(stored), transposed)


def test_spot_check_lane5_m16n8k16_a():
    layout = mma_layout("m16n8k16", "A", "f16", "f32")
    held = list(zip(layout.row[5], layout.col[5]))
    assert held == [(1, 2), (1, 3), (9, 2), (9, 3), (1, 10), (1, 11), (9, 10), (9, 11)]


def test_spot_check_lane5_m16n8k32_a():
    layout = mma_layout("m16n8k32", "A", "s8", "s32")
    held = list(zip(layout.row[5], layout.col[5]))
    expected = (
        [(1, c) for c in range(4, 8)] + [(9, c) for c in range(4, 8)]
        + [(1, c) for c in range(20, 24)] + [(9, c) for c in range(20, 24)]
    )
    assert held == expected


def test_spot_check_lane31_accumulator_and_lane6_b():
    c = mma_layout("m16n8k16", "C")
    assert list(zip(c.row[31], c.col[31])) == [(7, 6), (7, 7), (15, 6), (15, 7)]
    b = mma_layout("m16n8k16", "B")
    assert list(zip(b.row[6], b.col[6])) == [(4, 1), (5, 1), (12, 1), (13, 1)]


@pytest.mark.parametrize(
    "key,operand,registers,per_register",
    [
        ("m16n8k16.f32", "A", 4, 2), ("m16n8k16.f32", "B", 2, 2), ("m16n8k16.f32", "C", 4, 1),
        ("m16n8k16.f16", "C", 2, 2), ("m16n8k16.f16", "D", 2, 2),
        ("m16n8k8.f32", "A", 2, 2), ("m16n8k8.f32", "B", 1, 2), ("m16n8k8.f32", "D", 4, 1),
        ("m16n8k32.s32", "A", 4, 4), ("m16n8k32.s32", "B", 2, 4), ("m16n8k32.s32", "C", 4, 1),
        ("m16n8k16.bf16.f32", "A", 4, 2), ("m16n8k16.bf16.f32", "B", 2, 2), ("m16n8k16.bf16.f32", "D", 4, 1),
        ("m16n8k8.tf32.f32", "A", 4, 1), ("m16n8k8.tf32.f32", "B", 2, 1), ("m16n8k8.tf32.f32", "C", 4, 1),
        ("m16n8k32.e4m3.f32", "A", 4, 4), ("m16n8k32.e5m2.f32", "B", 2, 4), ("m16n8k32.e4m3.f32", "D", 4, 1),
    ],
)
def test_register_counts_follow_isa_operand_tables(key, operand, registers, per_register):
    layout = mma_layouts(key)[operand]
    assert layout.registers_per_lane == registers
    assert layout.elements_per_register == per_register
    assert layout.elements_per_lane == registers * per_register


@pytest.mark.parametrize("key,operand", [(k, op) for k in MMA_VARIANTS for op in ("A", "B")])
def test_register_holds_consecutive_k(key, operand):
    # A is row-major (k along columns), B is column-major (k along rows): the values
    # packed in one 32-bit register are consecutive in k, in increasing order.
    layout = mma_layouts(key)[operand]
    k_index = layout.col if operand == "A" else layout.row
    other = layout.row if operand == "A" else layout.col
    for element in range(layout.elements_per_lane):
        first = element - element % layout.elements_per_register
        offset = element - first
        assert layout.register_of(element) == element // layout.elements_per_register
        np.testing.assert_array_equal(k_index[:, element], k_index[:, first] + offset)
        np.testing.assert_array_equal(other[:, element], other[:, first])


def test_ldmatrix_x4_of_four_subtiles_is_the_m16n8k16_a_fragment():
    rng = np.random.default_rng(0)
    a = rng.integers(-99, 99, size=(16, 16))
    stacked = np.vstack([a[0:8, 0:8], a[8:16, 0:8], a[0:8, 8:16], a[8:16, 8:16]])
    np.testing.assert_array_equal(
        ldmatrix_layout(4).gather(stacked), mma_layout("m16n8k16", "A").gather(a)
    )


def test_ldmatrix_trans_of_row_major_b_is_the_b_fragment():
    rng = np.random.default_rng(1)
    b16 = rng.integers(-99, 99, size=(16, 8))
    np.testing.assert_array_equal(
        ldmatrix_layout(2, trans=True).gather(b16), mma_layout("m16n8k16", "B").gather(b16)
    )
    b8 = b16[:8]
    np.testing.assert_array_equal(
        ldmatrix_layout(1, trans=True).gather(b8), mma_layout("m16n8k8", "B").gather(b8)
    )


def test_ldmatrix_x2_matches_f16_accumulator_packing():
    c = np.arange(16 * 8).reshape(16, 8)
    np.testing.assert_array_equal(
        ldmatrix_layout(2).gather(c), mma_layout("m16n8k16", "C", acc_type="f16").gather(c)
    )


def test_ldmatrix_address_lanes_follow_isa_table():
    # .x1: threads 0-7 give addr0-7; .x2 adds threads 8-15; .x4 uses all 32.
    for num in (1, 2, 4):
        lanes = ldmatrix_address_lane(num)
        assert lanes.shape == (8 * num,)
        for matrix in range(num):
            for row in range(8):
                assert lanes[8 * matrix + row] == 8 * matrix + row
    assert ldmatrix_instruction(4, True) == "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"


@pytest.mark.parametrize("layout", all_layouts(), ids=lambda l: l.name)
def test_inverse_is_a_bijection(layout):
    lane, element = layout.inverse()
    assert lane.shape == layout.shape == element.shape
    rows, cols = np.indices(layout.shape)
    np.testing.assert_array_equal(layout.row[lane, element], rows)
    np.testing.assert_array_equal(layout.col[lane, element], cols)
    pairs = set(zip(lane.ravel(), element.ravel()))
    assert len(pairs) == 32 * layout.elements_per_lane == rows.size


@pytest.mark.parametrize("layout", all_layouts(), ids=lambda l: l.name)
def test_gather_scatter_round_trip(layout):
    rng = np.random.default_rng(2)
    matrix = rng.standard_normal(layout.shape)
    np.testing.assert_array_equal(layout.scatter(layout.gather(matrix)), matrix)
    values = rng.standard_normal((32, layout.elements_per_lane))
    np.testing.assert_array_equal(layout.gather(layout.scatter(values)), values)


def emulate_mma(layouts, a_frag, b_frag, c_frag):
    """D fragments computed lane by lane, fetching A and B values from their owners."""
    a_lane, a_elem = layouts["A"].inverse()
    b_lane, b_elem = layouts["B"].inverse()
    d_layout = layouts["D"]
    k = layouts["A"].shape[1]
    d_frag = np.zeros_like(c_frag)
    for lane in range(32):
        for element in range(d_layout.elements_per_lane):
            r, c = d_layout.row[lane, element], d_layout.col[lane, element]
            total = c_frag[lane, element]
            for kk in range(k):
                total += (
                    a_frag[a_lane[r, kk], a_elem[r, kk]] * b_frag[b_lane[kk, c], b_elem[kk, c]]
                )
            d_frag[lane, element] = total
    return d_frag


@pytest.mark.parametrize("key", MMA_VARIANTS)
def test_emulated_mma_through_fragments_equals_matmul(key):
    layouts = mma_layouts(key)
    rng = np.random.default_rng(3)
    a = rng.integers(-8, 8, size=layouts["A"].shape)
    b = rng.integers(-8, 8, size=layouts["B"].shape)
    c = rng.integers(-50, 50, size=layouts["C"].shape)
    d_frag = emulate_mma(
        layouts, layouts["A"].gather(a), layouts["B"].gather(b), layouts["C"].gather(c)
    )
    np.testing.assert_array_equal(layouts["D"].scatter(d_frag), a @ b + c)
    assert layouts["A"].shape[1] == layouts["B"].shape[0]
    assert layouts["C"].shape == (layouts["A"].shape[0], layouts["B"].shape[1])


def _isa_formula_tables(shape, ab_type, operand):
    """The PTX ISA 9.0 formulas of the new types, typed in as printed (sections 9.7.14.5.7,
    9.7.14.5.8 and 9.7.14.5.10), element by element."""
    g, t = np.arange(32)[:, None] >> 2, np.arange(32)[:, None] % 4
    i = np.arange(mma_layout(shape, operand, ab_type).elements_per_lane)[None, :]
    if (ab_type, operand) == ("tf32", "A"):     # row g for a0, a2; col t for a0, a1
        return np.where((i == 0) | (i == 2), g, g + 8), np.where(i < 2, t, t + 4)
    if (ab_type, operand) == ("tf32", "B"):     # row t for b0, t + 4 for b1; col g
        return np.where(i == 0, t, t + 4), g + 0 * i
    if (ab_type, operand) == ("bf16", "A"):     # m16n8k16 .f16/.bf16
        return (np.where((i < 2) | ((4 <= i) & (i < 6)), g, g + 8),
                np.where(i < 4, t * 2 + (i & 1), t * 2 + (i & 1) + 8))
    if (ab_type, operand) == ("bf16", "B"):
        return np.where(i < 2, t * 2 + (i & 1), t * 2 + (i & 1) + 8), g + 0 * i
    if operand == "A":                          # m16n8k32 .s8/.u8/.e4m3/.e5m2
        return (np.where((i < 4) | ((8 <= i) & (i < 12)), g, g + 8),
                np.where(i < 8, t * 4 + (i & 3), t * 4 + (i & 3) + 16))
    return np.where(i < 4, t * 4 + (i & 3), t * 4 + (i & 3) + 16), g + 0 * i


@pytest.mark.parametrize("key", ["m16n8k16.bf16.f32", "m16n8k8.tf32.f32", "m16n8k32.e4m3.f32",
                                 "m16n8k32.e5m2.f32"])
@pytest.mark.parametrize("operand", ["A", "B"])
def test_new_types_follow_the_isa_formulas(key, operand):
    shape, ab_type, acc_type = MMA_VARIANTS[key]
    layout = mma_layout(shape, operand, ab_type, acc_type)
    rows, cols = _isa_formula_tables(shape, ab_type, operand)
    np.testing.assert_array_equal(layout.row, rows)
    np.testing.assert_array_equal(layout.col, cols)


def test_tf32_a_is_not_f16_a_of_the_same_shape():
    """m16n8k8 .tf32 walks k before the second row block (a1 is row g + 8); .f16 packs two k per
    register and takes row g + 8 in its second register. Same 16 x 8 matrix, different lanes' data."""
    tf32, f16 = mma_layout("m16n8k8", "A", "tf32"), mma_layout("m16n8k8", "A", "f16")
    assert list(zip(tf32.row[5], tf32.col[5])) == [(1, 1), (9, 1), (1, 5), (9, 5)]
    assert list(zip(f16.row[5], f16.col[5])) == [(1, 2), (1, 3), (9, 2), (9, 3)]


def test_fp8_needs_sm_89_and_says_so_in_one_line():
    assert [L.min_sm(v) for v in MMA_VARIANTS] == [80] * 6 + [89] * 2
    assert L.unsupported("m16n8k32.e5m2.f32", "sm_89") is None
    assert L.unsupported("m16n8k16.bf16.f32", "sm_80") is None
    assert L.unsupported("m16n8k32.e4m3.f32", "sm_86") == (
        "this GPU (sm_86) has no .e4m3 mma.sync (sm_89 and later): m16n8k32.e4m3.f32 skipped")
    with pytest.raises(ValueError, match="sm_90"):
        L.unsupported("m16n8k32.e4m3.f32", "90")
    assert L.element_bits("tf32") == 32 and L.element_bits("e5m2") == 8
    with pytest.raises(ValueError, match="e4m3"):
        L.element_bits("fp8")


def test_ptx_instruction_strings():
    assert ptx_instruction("m16n8k16.bf16.f32") == "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    assert ptx_instruction("m16n8k8.tf32.f32") == "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
    assert ptx_instruction("m16n8k32.e5m2.f32") == "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32"
    assert ptx_instruction("m16n8k16.f32") == "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
    assert ptx_instruction("m16n8k16.f16") == "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"
    assert ptx_instruction("m16n8k8.f32") == "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32"
    assert ptx_instruction("m16n8k32.s32") == "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"


def test_default_types_follow_the_shape():
    assert mma_layout("m16n8k32", "A").elements_per_register == 4
    assert mma_layout("m16n8k32", "C").name == "mma.m16n8k32 .s32 C"
    assert mma_layout("m16n8k16", "C").elements_per_register == 1


def test_describe_reads_formulas_off_the_tables():
    text = describe(mma_layout("m16n8k16", "A"))
    lines = text.splitlines()
    assert len(lines) == 2 + 8
    assert any(line.startswith("a6 (R3): row = g + 8") and line.endswith("col = 2t + 8")
               for line in lines)
    trans = describe(ldmatrix_layout(2, trans=True))
    assert any(line.startswith("r1.hi (R1): row = 2t + 9") for line in trans.splitlines())


@pytest.mark.parametrize(
    "call,accepted",
    [
        (lambda: mma_layout("m16n8k4", "A"), "m16n8k8, m16n8k16, m16n8k32"),
        (lambda: mma_layout("m16n8k16", "E"), "A, B, C, D"),
        (lambda: mma_layout("m16n8k16", "A", "s8"), "f16"),
        (lambda: mma_layout("m16n8k32", "A", "f16"), "s8"),
        (lambda: mma_layout("m16n8k16", "C", "f16", "s32"), "f32, f16"),
        (lambda: mma_layout("m16n8k32", "C", "s8", "f32"), "s32"),
        (lambda: mma_layout("m16n8k8", "C", "tf32", "f16"), "f32"),
        (lambda: mma_layout("m16n8k8", "A", "e4m3"), "f16, tf32"),
        (lambda: ldmatrix_layout(3), ".x1/.x2/.x4"),
        (lambda: ldmatrix_address_lane(8), ".x1/.x2/.x4"),
        (lambda: ptx_instruction("m16n8k16.bf16"), "m16n8k16.f32"),
        (lambda: mma_layout("m16n8k16", "A").register_of(8), "0..7"),
    ],
)
def test_invalid_arguments_raise_naming_accepted_values(call, accepted):
    with pytest.raises(ValueError) as error:
        call()
    assert accepted in str(error.value)


def test_non_bijective_layout_is_refused_by_inverse_and_scatter():
    lanes = np.arange(32)[:, None]
    doubled = FragmentLayout(
        name="every lane holds row lane//4 twice", operand="A", shape=(8, 8),
        elements_per_register=2,
        row=np.repeat(lanes // 4, 2, axis=1), col=np.repeat(lanes % 4, 2, axis=1),
    )
    with pytest.raises(ValueError, match="not a bijection"):
        doubled.inverse()
    with pytest.raises(ValueError, match="not a bijection"):
        doubled.scatter(np.zeros((32, 2)))


def test_malformed_layouts_and_operands_are_refused():
    with pytest.raises(ValueError, match="shape"):
        FragmentLayout("short", "A", (8, 8), 2, np.zeros((16, 2)), np.zeros((16, 2)))
    with pytest.raises(ValueError, match="outside"):
        FragmentLayout("big", "A", (8, 8), 2, np.full((32, 2), 8), np.zeros((32, 2)))
    layout = mma_layout("m16n8k16", "A")
    with pytest.raises(ValueError, match=r"\(16, 16\)"):
        layout.gather(np.zeros((16, 8)))
    with pytest.raises(ValueError, match=r"\(32, 8\)"):
        layout.scatter(np.zeros((32, 4)))
    assert not layout.row.flags.writeable


def test_ldmatrix_x4_placed_in_quadrant_order_is_the_mma_a_fragment():
    a = L.mma_layout("m16n8k16", "A", "f16", "f32")
    in_order = L.ldmatrix_placed(4, False, [(0, 0), (8, 0), (0, 8), (8, 8)], (16, 16))
    swapped = L.ldmatrix_placed(4, False, [(0, 0), (0, 8), (8, 0), (8, 8)], (16, 16))
    assert L.same_positions(in_order, a)
    assert not L.same_positions(swapped, a)


def test_ldmatrix_x2_gives_the_b_fragment_from_either_storage():
    b = L.mma_layout("m16n8k16", "B", "f16", "f32")
    k_contiguous = L.ldmatrix_placed(2, False, [(0, 0), (8, 0)], (16, 8), stored_transposed=True)
    n_contiguous = L.ldmatrix_placed(2, True, [(0, 0), (8, 0)], (16, 8))
    assert L.same_positions(k_contiguous, b) and L.same_positions(n_contiguous, b)
    assert not L.same_positions(L.ldmatrix_placed(2, False, [(0, 0), (8, 0)], (16, 8)), b)


def test_placement_verdicts_name_each_candidate_and_align_the_verdicts():
    a = L.mma_layout("m16n8k16", "A", "f16", "f32")
    text = L.placement_verdicts([
        ("in order", a, L.ldmatrix_placed(4, False, [(0, 0), (8, 0), (0, 8), (8, 8)], (16, 16))),
        ("TR and BL swapped", a, L.ldmatrix_placed(4, False, [(0, 0), (0, 8), (8, 0), (8, 8)], (16, 16)))])
    assert text.splitlines() == ["in order            is the mma fragment",
                                 "TR and BL swapped   is NOT the fragment"]


def test_ldmatrix_placed_checks_its_origins():
    with pytest.raises(ValueError, match="places 4 matrices"):
        L.ldmatrix_placed(4, False, [(0, 0)], (16, 16))
