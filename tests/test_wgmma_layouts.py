"""wgmma as data (tcgemm.hopper.wgmma, tcgemm.canonical) and the probe's verdicts, without a GPU."""
import json
from pathlib import Path

import numpy as np
import pytest

from tcgemm import layouts
from tcgemm.canonical import (SWIZZLE_MODES, MatrixDescriptor, canonical_strides, cute_notation, descriptor,
                              kmajor_layout, mnmajor_layout, operand_layout, smem_image, swizzle_mode,
                              swizzle_mode_of_width, swizzle_modes_table)
from tcgemm.fragment_layouts import FragmentLayout, mma_layout, same_positions
from tcgemm.hopper.wgmma import (WGMMA_TYPES, accumulator_layout, shapes_table, warpgroup_coordinates,
                                 wgmma_instruction, wgmma_shape)
from tcgemm.smem import bank_cases, banks
from tcgemm.smem.notation import parse_cute

MODES = list(SWIZZLE_MODES)


def test_shapes_follow_the_ptx_isa():
    assert wgmma_shape(8) == "m64n8k16" and wgmma_shape(256, "bf16") == "m64n256k16"
    assert wgmma_shape(40, "tf32") == "m64n40k8" and wgmma_shape(24, "e4m3") == "m64n24k32"
    assert wgmma_shape(48, "s8") == "m64n48k32"
    for n, ab in ((12, "f16"), (264, "f16"), (0, "f16"), (40, "s8")):
        with pytest.raises(ValueError, match=f"got {n}"):
            wgmma_shape(n, ab)
    with pytest.raises(ValueError, match="accepted: f16, bf16"):
        wgmma_shape(8, "f64")
    assert wgmma_instruction(16) == "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16"
    with pytest.raises(ValueError, match="accumulates in f32, not 'f16'"):
        wgmma_instruction(16, "bf16", "f16")
    assert len(WGMMA_TYPES["f16"].n_values) == 32 and len(WGMMA_TYPES["s8"].n_values) == 18
    table = shapes_table()
    assert [r[0] for r in table.rows] == list(WGMMA_TYPES)
    assert table.rows[2][-1] == "m64n256k8" and table.rows[-1][3].startswith("8, 16, 24, 32, then 48")


def test_a_warpgroup_is_four_warps():
    assert warpgroup_coordinates(0) == (0, 0, 0, 0)
    assert warpgroup_coordinates(127) == (3, 31, 7, 3)
    assert warpgroup_coordinates(45) == (1, 13, 3, 1)
    with pytest.raises(ValueError, match="0..127"):
        warpgroup_coordinates(128)


@pytest.mark.parametrize("n", [8, 16, 24, 256])
def test_accumulator_covers_d_once_and_warp_w_owns_rows_16w_on(n):
    layout = accumulator_layout(n)
    assert layout.row.shape == (128, n // 2)
    count = np.zeros((64, n), dtype=int)
    np.add.at(count, (layout.row, layout.col), 1)
    assert np.all(count == 1)
    for w in range(4):
        rows = layout.row[32 * w:32 * (w + 1)]
        assert rows.min() == 16 * w and rows.max() == 16 * w + 15
    matrix = np.arange(64 * n).reshape(64, n)
    assert np.array_equal(layout.scatter(layout.gather(matrix)), matrix)


@pytest.mark.parametrize("n", [8, 32])
def test_every_8_columns_of_a_warp_repeat_mma_syncs_accumulator(n):
    """Warp w's rows, columns 8j..8j+7, registers 4j..4j+3: mma.sync m16n8's C/D layout."""
    mma_d = mma_layout("m16n8k16", "D")
    layout = accumulator_layout(n)
    for w in range(4):
        layout.warp_fragment(w).inverse()                   # a bijection onto 16 x n
    blocks = layout.m16n8_blocks()
    assert sorted(blocks) == [(w, j) for w in range(4) for j in range(n // 8)]
    for (w, j), block in blocks.items():
        assert same_positions(block, mma_d), (w, j)
        assert np.array_equal(block.row + 16 * w, layout.row[32 * w:32 * w + 32, 4 * j:4 * j + 4])
    moved = FragmentLayout("moved", "D", (16, 8), 1, mma_d.row[::-1], mma_d.col)
    assert not same_positions(moved, mma_d)


def test_accumulator_layout_refuses_packed_f16():
    with pytest.raises(ValueError, match="two entries per register"):
        accumulator_layout(16, acc_type="f16")


def test_swizzle_modes_are_one_table_for_wgmma_and_tma():
    assert [(m.width, m.descriptor_code, m.tma_value, m.notation) for m in SWIZZLE_MODES.values()] == [
        (16, 0, 0, "Sw<0,4,3>"), (32, 3, 1, "Sw<1,4,3>"), (64, 2, 2, "Sw<2,4,3>"), (128, 1, 3, "Sw<3,4,3>")]
    assert SWIZZLE_MODES["128B"].tma_name == "CU_TENSOR_MAP_SWIZZLE_128B"
    assert swizzle_mode_of_width(0).name == "none" and swizzle_mode_of_width(64).name == "64B"
    with pytest.raises(ValueError, match="0 \\(none\\), 32, 64 or 128"):
        swizzle_mode_of_width(16)
    with pytest.raises(ValueError, match="accepted: none, 32B"):
        swizzle_mode("256B")
    for m in SWIZZLE_MODES.values():     # the explorer's notation parses each to the same Swizzle
        assert parse_cute(f"{m.notation} o (8,64):(64,1)").swizzle == (m.swizzle.bits, 4, 3)
    presets = {name: p["settings"] for name, p in bank_cases.PRESETS.items() if name.startswith("tma-")}
    assert sorted(presets) == ["tma-128B", "tma-32B", "tma-64B"]
    for name, s in presets.items():
        m = SWIZZLE_MODES[name[4:]]
        assert (s["B"], s["M"], s["S"], s["unit"], s["row_elems"] * s["elem_bytes"]) == (
            m.swizzle.bits, 4, 3, "byte", m.width)
    assert len(swizzle_modes_table().rows) == 4


def test_swizzled_rows_xor_their_16_byte_chunks_with_the_row_bits():
    """Atom row r, chunk c is stored at chunk c ^ (r // (128 / width)): bits 4.. ^= bits 7.."""
    for mode in MODES[1:]:
        m = SWIZZLE_MODES[mode]
        chunks = m.width // 16
        layout = kmajor_layout(mode, 8, m.width // 2)
        r, c = np.meshgrid(np.arange(8), np.arange(chunks), indexing="ij")
        stored = (layout(r, c * 8) - r * m.width) // 16
        assert np.array_equal(stored, c ^ (r * m.width // 128 % chunks)), mode
    none = kmajor_layout("none", 16, 16)
    assert none(np.arange(9), np.zeros(9, int)).tolist() == [0, 16, 32, 48, 64, 80, 96, 112, 256]
    assert none(0, 8) == 128                           # the next core matrix in K: LBO away


def test_128b_swizzle_is_the_bank_chapters_xor_generalised():
    """The bank chapter's XOR-permuted tile (Kernel 2.0) is Swizzle<2,4,3> on bytes: 4 chunks XORed
    with 2 row bits. The 128B mode XORs all 8 chunks of a 128-byte row with 3 row bits, so 8 rows of
    one chunk fill the 8 bank groups and an ldmatrix phase is never split; row-major rows of 128 bytes
    put all 8 rows in one bank group (8-way)."""
    r, k = np.meshgrid(np.arange(8), np.arange(64), indexing="ij")
    wgmma_128 = kmajor_layout("128B", 8, 64)
    assert np.array_equal(wgmma_128(r, k), layouts.swizzle_layout(3, 4, 3, 64, 2, "byte")(r, k))
    rk, kk = np.meshgrid(np.arange(16), np.arange(32), indexing="ij")
    kernel_20 = layouts.xor_permuted()
    assert np.array_equal(kernel_20(rk, kk), layouts.swizzle_layout(2, 4, 3, 64, 2, "byte")(rk // 2, kk + 32 * (rk % 2)))
    row_major = layouts.row_major(64, 2)
    for chunk in range(8):
        rows, cols = np.arange(8), np.full(8, 8 * chunk)
        assert banks.analyze(banks.ldmatrix_access(wgmma_128, rows, cols)).ways == 1
        assert banks.analyze(banks.ldmatrix_access(row_major, rows, cols)).ways == 8


@pytest.mark.parametrize("mode", MODES)
def test_canonical_tiles_are_conflict_free_for_ldmatrix_of_a(mode):
    layout = kmajor_layout(mode, 64, 16)
    for row0 in range(0, 64, 16):
        assert banks.analyze(banks.ldmatrix_tile(layout, row0, 0)).conflicts == 0


def test_canonical_layouts_are_one_to_one_and_checked():
    for mode in MODES:
        layout = kmajor_layout(mode, 64, 16)
        r, k = np.indices((64, 16))
        offsets = layout(r, k)
        assert len(np.unique(offsets)) == offsets.size and np.all(offsets % 2 == 0)
        assert offsets.max() < 8 * 1024
    with pytest.raises(ValueError, match="holds 32 bytes"):
        kmajor_layout("32B", 64, 32)
    with pytest.raises(ValueError, match="multiple of 8 rows"):
        kmajor_layout("128B", 12, 16)
    with pytest.raises(ValueError, match="multiple of 16 bytes"):
        kmajor_layout("none", 64, 16, lbo=24)


# The PTX ISA's worked MN-major examples (bf16, T = 8 elements), "Exact layout" in elements, K-index
# strides after the M/N ones: Swizzle<B,4,3> o ((8,atoms-per-row,m),(8,k)):((1,8,S_mn),(row,S_k)).
PTX_MN_EXAMPLES = [   # (mode, mn, k, LBO bytes, SBO bytes, mn strides, k strides, in elements)
    ("none", 16, 16, 256, 128, ((8, 1, 2), (1, 8, 64)), ((8, 2), (8, 128))),
    ("32B", 32, 16, 256, 512, ((8, 2, 2), (1, 8, 128)), ((8, 2), (16, 256))),
    ("64B", 64, 16, 512, 1024, ((8, 4, 2), (1, 8, 256)), ((8, 2), (32, 512))),
]


@pytest.mark.parametrize("mode, mn, k, lbo, sbo, mn_modes, k_modes", PTX_MN_EXAMPLES)
def test_mn_major_layout_is_the_ptx_isas_example(mode, mn, k, lbo, sbo, mn_modes, k_modes):
    """mnmajor_layout at the example's LBO and SBO puts every element where the PTX ISA's exact CuTe
    layout does: LBO is the K stride of "none" but the M/N atom stride of the swizzled modes."""
    layout = mnmajor_layout(mode, mn, k, lbo=lbo, sbo=sbo)
    kk, nn = np.indices((k, mn))

    def cute(index, modes):
        shape, stride = modes
        out = 0
        for size, step in zip(shape, stride):
            out, index = out + index % size * step, index // size
        return out

    elements = cute(nn, mn_modes) + cute(kk, k_modes)
    assert np.array_equal(layout(kk, nn), SWIZZLE_MODES[mode].swizzle(2 * elements))


def test_mn_major_strides_and_descriptor():
    """Dense MN-major tiles as a TMA box of K rows writes them: 8 K rows per atom, the next atom along
    M/N after all of K. One 128B atom is the same bytes as the K-major one, rows of K instead of M/N."""
    assert canonical_strides("128B", 256, 64, major="MN") == (8192, 1024)
    assert canonical_strides("none", 64, 16, major="MN") == (128, 256)
    assert canonical_strides("32B", 64, 16, major="MN") == (512, 256)
    assert descriptor("128B", 64, 16, 1024, major="MN") == MatrixDescriptor(1024, 2048, 1024, "128B")
    r, c = np.indices((8, 64))
    assert np.array_equal(mnmajor_layout("128B", 64, 8)(r, c), kmajor_layout("128B", 8, 64)(r, c))
    for mode in MODES:
        kk, nn = np.indices((16, 128))
        offsets = mnmajor_layout(mode, 128, 16)(kk, nn)
        assert len(np.unique(offsets)) == offsets.size and offsets.max() < 128 * 16 * 2
    with pytest.raises(ValueError, match="multiple of 8 rows of K"):
        mnmajor_layout("128B", 64, 12)
    with pytest.raises(ValueError, match="major must be one of 'K', 'MN'"):
        canonical_strides("128B", 64, 16, major="M")
    matrix = (np.arange(16 * 128).reshape(16, 128) + 1).astype(np.float16)
    image = smem_image("128B", matrix, major="MN")
    assert image.view(np.float16)[operand_layout("128B", (16, 128), major="MN")(9, 70) // 2] == matrix[9, 70]


def test_smem_image_places_each_element_where_the_layout_says():
    matrix = (np.arange(64 * 16).reshape(64, 16) + 1).astype(np.float16)
    image = smem_image("128B", matrix)
    layout = kmajor_layout("128B", 64, 16)
    assert image.view(np.float16)[layout(5, 11) // 2] == matrix[5, 11]
    assert np.count_nonzero(image.view(np.float16)) == matrix.size
    with pytest.raises(ValueError, match="2-byte elements"):
        smem_image("none", matrix.astype(np.float32))


def test_descriptor_fields_sit_where_the_ptx_isa_puts_them():
    d = MatrixDescriptor(start_address=0x1230, leading_byte_offset=16, stride_byte_offset=1024, swizzle="128B")
    word = d.encode()
    assert word == (0x123 | 1 << 16 | 64 << 32 | 1 << 62)
    assert MatrixDescriptor.decode(word) == d
    assert MatrixDescriptor(0, 128, 256, "none").encode() == 8 << 16 | 16 << 32
    assert MatrixDescriptor(0, 16, 256, "32B").encode() >> 62 == 3
    assert MatrixDescriptor(0, 16, 512, "64B", base_offset=5).encode() == 1 << 16 | 32 << 32 | 5 << 49 | 2 << 62
    rows = d.table().rows
    assert rows[0] == ("start_address", "0-13", 0x1230, 0x123) and rows[-1] == ("swizzle", "62-63", "128B", 1)


@pytest.mark.parametrize("mode", MODES)
def test_descriptor_round_trips(mode):
    rng = np.random.default_rng(1)
    for _ in range(50):
        start, lbo, sbo = (int(x) * 16 for x in rng.integers(0, 1 << 14, 3))
        d = MatrixDescriptor(start, lbo, sbo, mode, int(rng.integers(0, 8)))
        assert MatrixDescriptor.decode(d.encode()) == d


def test_descriptor_refuses_what_it_cannot_hold():
    with pytest.raises(ValueError, match="multiple of 16 bytes"):
        MatrixDescriptor(8, 16, 16)
    with pytest.raises(ValueError, match="does not fit the descriptor's 14 bits"):
        MatrixDescriptor(1 << 18, 16, 16)
    with pytest.raises(ValueError, match="3 bits"):
        MatrixDescriptor(0, 16, 16, base_offset=8)
    with pytest.raises(ValueError, match="bits outside its fields"):
        MatrixDescriptor.decode(1 << 15)
    with pytest.raises(ValueError, match="starts on a multiple of 1024"):
        descriptor("128B", 64, 16, start_address=512)
    assert canonical_strides("none", 64, 16) == (128, 256)
    assert descriptor("64B", 64, 16, 512) == MatrixDescriptor(512, 16, 512, "64B")


# ---- the probe's reading of what it sees (tcgemm.hopper.gpu.wgmma), with the hardware simulated ----------

def _simulated_hardware(accumulator=accumulator_layout, ignore_swizzle=False, roles_swapped=False):
    """run_wgmma as a GPU would answer if it read A and B through the descriptor as operand_layout says
    (or, with ignore_swizzle, as if every swizzle were none; with roles_swapped, an MN-major operand's
    LBO and SBO each in the other's role) and laid D out by `accumulator`."""
    from tcgemm.hopper.gpu import wgmma as probe

    def read(image, word, rows, major):
        """The operand as (rows, 16): rows of M or N, whatever its major."""
        d = MatrixDescriptor.decode(word)
        mode = "none" if ignore_swizzle else d.swizzle
        lbo, sbo = canonical_strides("none", rows, 16, major=major) if ignore_swizzle else \
            (d.leading_byte_offset, d.stride_byte_offset)
        if roles_swapped and major == "MN":
            lbo, sbo = sbo, lbo
        shape = (rows, 16) if major == "K" else (16, rows)
        layout = operand_layout(mode, shape, lbo=lbo, sbo=sbo, major=major)
        memory = np.zeros(1 << 16, dtype=np.uint8)      # shared memory past the image reads as zeros here
        memory[:image.size] = image
        values = memory.view(np.float16)[layout(*np.indices(shape)) // 2].astype(float)
        return values if major == "K" else values.T

    def run(n, a, b, mode, descriptor_mode=None, mn_major="", swapped=False):
        descriptor_mode = descriptor_mode or mode
        majors = {op: "MN" if op == mn_major else "K" for op in "AB"}
        words = {op: probe._descriptor(mode, descriptor_mode, rows, majors[op], swapped and op == mn_major)
                 for op, rows in (("A", 64), ("B", n))}
        out = []
        for x, y in zip(a, b):
            product = read(probe._image(mode, x, "A", n, mn_major), words["A"], 64, majors["A"]) @ \
                read(probe._image(mode, y, "B", n, mn_major), words["B"], n, majors["B"]).T
            out.append(accumulator(n).gather(product))
        return np.array(out)

    return run


def test_probe_matches_hardware_that_reads_as_the_layouts_say(monkeypatch):
    from tcgemm.hopper.gpu import wgmma as probe

    monkeypatch.setattr(probe, "run_wgmma", _simulated_hardware())
    probes = probe.observe_every_wgmma()
    table = probe.wgmma_verdict_table(probes)
    assert [c.name for c in table.columns] == ["Instruction", "Swizzle", "A", "B", "D", "Random product"]
    good, control = table.rows[:8], table.rows[8:]
    assert all(row[2:] == ("MATCH",) * 4 for row in good)
    assert [row[1] for row in good] == MODES * 2 and table.rows[0][0] == "m64n8k16.f32.f16.f16"
    assert all(row[1] == "128B data, 32B descriptor" and row[2] == "MISMATCH" for row in control)


def test_mn_major_probe_matches_hardware_that_reads_as_the_layouts_say(monkeypatch):
    from tcgemm.hopper.gpu import wgmma as probe

    monkeypatch.setattr(probe, "run_wgmma", _simulated_hardware())
    table = probe.wgmma_verdict_table(probe.observe_mn_major_wgmma())
    good, control = table.rows[:-1], table.rows[-1]
    assert len(good) == len(probe.MN_CASES) and all(row[2:] == ("MATCH",) * 4 for row in good)
    assert good[0][1] == "none, A M-major" and good[-1][:2] == ("m64n128k16.f32.f16.f16", "128B, B N-major")
    assert control[1] == "128B, B N-major, LBO and SBO swapped" and control[3] == "MISMATCH"


def test_mn_major_probe_sees_lbo_and_sbo_in_each_others_role(monkeypatch):
    """Hardware that took an MN-major operand's LBO for SBO and back would fail every case (the next 8
    rows of K are never where the other offset points: with one wgmma's 16 rows of K the canonical
    offsets always differ) and pass the control."""
    from tcgemm.hopper.gpu import wgmma as probe

    monkeypatch.setattr(probe, "run_wgmma", _simulated_hardware(roles_swapped=True))
    probes = probe.observe_mn_major_wgmma()
    assert [p.match(p.mn_major) or p.random_product for p in probes] == [False] * len(probe.MN_CASES) + [True]


def test_probe_sees_a_swizzle_the_hardware_does_not_apply(monkeypatch):
    from tcgemm.hopper.gpu import wgmma as probe

    monkeypatch.setattr(probe, "run_wgmma", _simulated_hardware(ignore_swizzle=True))
    for mode in MODES:
        p = probe.observe_wgmma(16, mode)
        assert (p.match("A"), p.match("B"), p.random_product) == ((True,) * 3 if mode == "none" else (False,) * 3)


def test_probe_sees_another_accumulator_layout(monkeypatch):
    from tcgemm.hopper.gpu import wgmma as probe

    def swapped(n):       # warps 0 and 1 exchange their rows
        layout = accumulator_layout(n)
        row = layout.row.copy()
        row[:64] = np.concatenate([layout.row[32:64], layout.row[:32]])
        return type(layout)(n, "f32", row, layout.col)

    monkeypatch.setattr(probe, "run_wgmma", _simulated_hardware(accumulator=swapped))
    p = probe.observe_wgmma(8, "128B")
    assert not p.match("D") and not p.random_product


def test_the_probe_refuses_other_gpus_in_one_line(monkeypatch, capsys):
    from tcgemm.errors import UnsupportedOnGPUError
    from tcgemm.hopper.gpu import wgmma as probe

    monkeypatch.setattr(probe, "current_arch", lambda: "sm_86")
    assert probe.skipped() == "wgmma needs an sm_90 GPU (Hopper); this one is sm_86: skipped"
    with pytest.raises(UnsupportedOnGPUError, match="needs an sm_90 GPU"):
        probe.run_wgmma(16, np.zeros((1, 64, 16)), np.zeros((1, 16, 16)), "none")
    assert probe.wgmma_verdicts() is None
    assert capsys.readouterr().out == probe.skipped() + "\n"
    monkeypatch.setattr(probe, "current_arch", lambda: "sm_90")
    with pytest.raises(ValueError, match="no wgmma with N = 128 and A M-major"):
        probe.run_wgmma(128, np.zeros((1, 64, 16)), np.zeros((1, 16, 128)), "128B", mn_major="A")


def test_an_observation_round_trips_through_json(monkeypatch):
    from tcgemm.hopper.gpu import wgmma as probe

    monkeypatch.setattr(probe, "run_wgmma", _simulated_hardware())
    probes = [probe.observe_wgmma(8, "64B"), probe.observe_wgmma(16, *probe.CONTROL),
              probe.observe_wgmma(128, "128B", mn_major="B", swapped=True)]
    again = probe.from_observation(json.loads(json.dumps(probe.observation(probes))))
    assert probe.wgmma_verdict_table(again).rows == probe.wgmma_verdict_table(probes).rows


@pytest.mark.parametrize("mode", MODES)
def test_the_explorer_reads_the_canonical_layouts_in_cute_notation(mode):
    """The explorer's presets spell each canonical layout in CuTe notation; parsed by the explorer's
    grammar they are kmajor_layout, and its ldmatrix.x4 of A is conflict-free."""
    text = cute_notation(mode, 64, 16)
    assert text == {"none": "((8,8),(8,2)):((8,128),(1,64))", "32B": "Sw<1,4,3> o ((8,8),16):((16,128),1)",
                    "64B": "Sw<2,4,3> o ((8,8),16):((32,256),1)",
                    "128B": "Sw<3,4,3> o ((8,8),16):((64,512),1)"}[mode]
    explorer = bank_cases.build_layout(bank_cases.settings(layout="cute", cute=text, unit="byte"))
    r, k = np.indices((64, 16))
    assert np.array_equal(explorer(r, k), kmajor_layout(mode, 64, 16)(r, k))
    preset = bank_cases.PRESETS[f"wgmma-{mode}"]["settings"]
    assert preset["cute"] == cute_notation(mode, 16, 16) and bank_cases.analyze(preset).conflicts == 0


# ---- the H100's recorded answers (tests/data/wgmma_<gpu>.json, written by tcgemm.hopper.gpu.wgmma.report) --

DATA = Path(__file__).resolve().parent / "data"
RECORDINGS = sorted(DATA.glob("wgmma_*.json"))


def test_a_wgmma_observation_is_recorded():
    assert RECORDINGS, ("no recorded wgmma probe observation: run tcgemm.hopper.gpu.wgmma.report('tests/data') on an "
                        "sm_90 GPU; it writes tests/data/wgmma_<gpu>.json")


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_recorded_observation_matches_the_layouts(path):
    """What the chapter states, on the GPU that recorded it: every swizzle mode and N reads A and B and
    writes D as the layouts say, K-major and with either operand MN-major, and the controls (a wrong
    swizzle field; LBO and SBO exchanged) do not."""
    from tcgemm.hopper.gpu import wgmma as probe

    recorded = json.loads(path.read_text())
    probes = probe.from_observation(recorded["probes"])
    assert recorded["arch"] == "sm_90"
    k_major, mn_major = [p for p in probes if not p.mn_major], [p for p in probes if p.mn_major]
    assert [(p.n, p.mode, p.descriptor_mode) for p in k_major] == \
        [(n, m, m) for n in probe.PROBE_N for m in MODES] + [(n, *probe.CONTROL) for n in probe.PROBE_N]
    assert [(p.n, p.mn_major, p.mode, p.swapped) for p in mn_major] == \
        [case + (False,) for case in probe.MN_CASES] + [probe.MN_CONTROL + (True,)]
    for p in probes:
        good = p.descriptor_mode == p.mode and not p.swapped
        verdicts = [p.match(op) for op in "AB"] + [p.random_product]
        assert verdicts == [good] * 3, (p.n, p.label)
        assert p.match("D") == good, (p.n, p.label)
