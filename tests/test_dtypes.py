"""Data types on Tensor Cores without a GPU: register encodings of every input type, the probes'
experiments run through an emulated mma, the recorded probe observation (tests/data/mma_fragments_*.json,
written by tcgemm.engine.gpu.probes.report on a GPU) against the layouts, the SASS of every variant per target
(NVRTC offline), and the per-type datasheet rates."""
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import tcgemm.engine.gpu.probes as probes
from tcgemm.engine import ceiling
from tcgemm import hw
from tcgemm.engine.catalog import PROBES
from tcgemm.errors import OperandError, UnsupportedOnGPUError
from tcgemm.fragment_layouts import MMA_VARIANTS, FragmentLayout, element_bits, mma_layout, mma_layouts
from tcgemm.registers import from_registers, to_registers

DATA = Path(__file__).resolve().parent / "data"
RECORDINGS = sorted(DATA.glob("mma_fragments_*.json"))
TYPES = ["f16", "bf16", "tf32", "f32", "s8", "s32", "e4m3", "e5m2"]


# ---- register words --------------------------------------------------------------------------------

@pytest.mark.parametrize("element_type", TYPES)
def test_small_integers_and_eighths_round_trip(element_type):
    values = np.array([[0, 1, -2, 3, 4, -4, 8, 1]], dtype=float)
    if element_type not in ("s8", "s32"):
        values = values / 8
    words = to_registers(values, element_type)
    assert words.dtype == np.uint32 and words.shape == (1, 8 * element_bits(element_type) // 32)
    assert np.array_equal(from_registers(words, element_type), values)


def test_encodings_are_the_ptx_bit_patterns():
    one = np.ones((1, 4))
    assert to_registers(one, "e4m3")[0, 0] == 0x38383838          # 0 0111 000
    assert to_registers(one, "e5m2")[0, 0] == 0x3C3C3C3C          # 0 01111 00
    assert to_registers(one[:, :2], "bf16")[0, 0] == 0x3F803F80    # fp32 1.0 = 0x3F800000, upper half
    assert to_registers(one[:, :1], "tf32")[0, 0] == 0x3F800000
    assert to_registers(np.array([[448.0, -2.0 ** -9, 57344.0 / 128, 0]]), "e4m3")[0, 0] == 0x007E817E
    first = to_registers(np.array([[1.0, 2.0]]), "f16")[0, 0]
    assert first & 0xFFFF == 0x3C00 and first >> 16 == 0x4000     # element 0 in the low half


@pytest.mark.parametrize("element_type", ["e4m3", "e5m2"])
def test_every_finite_fp8_code_round_trips(element_type):
    codes = np.arange(256, dtype=np.uint8).view(np.uint32).reshape(1, 64)
    values = from_registers(codes, element_type).ravel()
    finite = np.isfinite(values)
    assert finite.sum() == {"e4m3": 254, "e5m2": 248}[element_type]   # NaNs (and e5m2's infinities) left out
    back = to_registers(np.where(finite, values, 0).reshape(1, 256), element_type).view(np.uint8).ravel()
    assert np.array_equal(back[finite], np.arange(256)[finite])


@pytest.mark.parametrize("element_type, value", [("e5m2", 9.0), ("e4m3", 17.0), ("e4m3", 480.0),
                                                 ("bf16", 257.0), ("tf32", 1 + 2.0 ** -11), ("s8", 200.0),
                                                 ("f16", 2049.0)])
def test_a_value_the_type_cannot_hold_is_refused(element_type, value):
    per_register = 32 // element_bits(element_type)
    with pytest.raises(OperandError, match=f"not exactly representable in {element_type}, e.g. {value}"):
        to_registers(np.full((1, per_register), value), element_type)


def test_bad_types_and_partial_registers_are_refused():
    with pytest.raises(ValueError, match="unknown mma element type 'fp8'"):
        to_registers(np.zeros((1, 4)), "fp8")
    with pytest.raises(OperandError, match="3 bf16 elements per lane do not fill whole registers of 2"):
        to_registers(np.zeros((1, 3)), "bf16")


# ---- the probes' experiments, through an emulated mma ------------------------------------------------

def _emulated_mma(layouts_of):
    """run_mma done on the CPU with the given layouts, inputs through their register encodings."""
    def run(variant, a, b, c):
        L, (_, ab, acc) = layouts_of(variant), MMA_VARIANTS[variant]
        exact = lambda x, t: from_registers(to_registers(x, t), t)
        return np.array([L["D"].gather(L["A"].scatter(exact(x, ab)) @ L["B"].scatter(exact(y, ab))
                                       + L["C"].scatter(exact(z, acc))) for x, y, z in zip(a, b, c)])
    return run


@pytest.mark.parametrize("variant", list(MMA_VARIANTS))
def test_probe_reads_the_layouts_back_through_an_emulated_mma(variant, monkeypatch):
    monkeypatch.setattr(probes, "run_mma", _emulated_mma(mma_layouts))
    observed = probes.observe_mma(variant)
    assert {op: p.match for op, p in observed.items()} == dict.fromkeys("ABCD", True)
    assert probes.random_product_check(variant)


def test_probe_catches_a_tf32_a_read_as_f16(monkeypatch):
    """Hardware that reads m16n8k8 .tf32 A in the .f16 order: A mismatches element by element (and
    so do B and D, whose experiments fill A through the table); C, observed with A = 0, matches."""
    f16, tf32 = mma_layout("m16n8k8", "A", "f16"), mma_layout("m16n8k8", "A", "tf32")
    as_f16 = FragmentLayout(f16.name, "A", f16.shape, 1, f16.row, f16.col)
    monkeypatch.setattr(probes, "run_mma", _emulated_mma(lambda v: {**mma_layouts(v), "A": as_f16}))
    observed = probes.observe_mma("m16n8k8.tf32.f32")
    assert {op: p.match for op, p in observed.items()} == {"A": False, "B": False, "C": True, "D": False}
    assert not probes.random_product_check("m16n8k8.tf32.f32")
    assert observed["A"].mismatches == np.count_nonzero((f16.row != tf32.row) | (f16.col != tf32.col)) > 0


def test_a_gpu_without_fp8_skips_in_one_line(monkeypatch):
    monkeypatch.setattr(probes, "current_arch", lambda: "sm_86")
    with pytest.raises(UnsupportedOnGPUError, match=r"^this GPU \(sm_86\) has no .e5m2 mma.sync"):
        probes.run_mma("m16n8k32.e5m2.f32", *np.zeros((3, 1, 32, 16)))
    table = probes.mma_verdicts(["m16n8k32.e4m3.f32", "m16n8k32.e5m2.f32"])
    assert table.rows == () and len(table.notes) == 2 and all("\n" not in n for n in table.notes)


def test_the_ceiling_skips_fp8_on_an_older_gpu(monkeypatch):
    import tcgemm.engine.gpu.ceiling as gpu_ceiling
    monkeypatch.setattr(gpu_ceiling, "current_arch", lambda: "sm_80")
    with pytest.raises(UnsupportedOnGPUError, match=r"\(sm_80\) has no .e4m3 mma.sync"):
        gpu_ceiling.run_once(8, 16, variant="m16n8k32.e4m3.f32")
    assert gpu_ceiling.measure_variants(["m16n8k32.e5m2.f32"]) == (
        [], ["this GPU (sm_80) has no .e5m2 mma.sync (sm_89 and later): m16n8k32.e5m2.f32 skipped"])


def test_every_variant_has_its_probe_kernel():
    assert [probes.probe_entry(v) for v in MMA_VARIANTS] == list(PROBES["mma"].entries)


# ---- the recorded observation ------------------------------------------------------------------------

def test_a_probe_observation_is_recorded():
    assert RECORDINGS, ("no recorded mma probe observation: run tcgemm.engine.gpu.probes.report('tests/data') on a "
                        "GPU; it writes tests/data/mma_fragments_<gpu>.json")


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_recorded_observation_is_the_layouts(path):
    """On the GPU that recorded it, every variant it executes matches the layouts operand by operand,
    and its random product; the variants it lacks are named."""
    recorded = json.loads(path.read_text())
    lacking = [v for v in MMA_VARIANTS if v not in recorded["variants"]]
    assert len(recorded["skipped"]) == len(lacking) and all(v in " ".join(recorded["skipped"]) for v in lacking)
    table = probes.observation_verdicts(recorded)
    assert [row[0] for row in table.rows] == [probes.ptx_instruction(v) for v in recorded["variants"]]
    assert all(cell == "MATCH" for row in table.rows for cell in row[1:]), f"{recorded['device']}:\n{table}"


def test_observation_verdicts_see_a_moved_element():
    layouts = mma_layouts("m16n8k16.bf16.f32")
    seen = {op: {"row": l.row.tolist(), "col": l.col.tolist()} for op, l in layouts.items()}
    seen["B"]["row"][3][0] += 1
    table = probes.observation_verdicts({"variants": {"m16n8k16.bf16.f32": {**seen, "random_product": True}},
                                         "skipped": []})
    assert table.rows == ((probes.ptx_instruction("m16n8k16.bf16.f32"), "MATCH", "MISMATCH", "MATCH", "MATCH",
                           "MATCH"),)


# ---- SASS per variant and target ---------------------------------------------------------------------

# What each probe entry compiles to (cuobjdump spelling); sm_90 has no fp8 mma.sync instruction:
# ptxas unpacks the fp8 values to fp16 (F2FP) and runs two fp16 HMMA.16816 per m16n8k32.
EXPECTED_SASS = {
    "m16n8k16.bf16.f32": {a: {"HMMA.16816.F32.BF16": 1} for a in ("sm_80", "sm_86", "sm_89", "sm_90")},
    "m16n8k8.tf32.f32": {a: {"HMMA.1688.F32.TF32": 1} for a in ("sm_80", "sm_86", "sm_89", "sm_90")},
    "m16n8k32.e4m3.f32": {"sm_80": {}, "sm_86": {}, "sm_89": {"QMMA.16832.F32.E4M3.E4M3": 1},
                          "sm_90": {"HMMA.16816.F32": 2, "F2FP.F16.E4M3.UNPACK_B": 12}},
    "m16n8k32.e5m2.f32": {"sm_80": {}, "sm_86": {}, "sm_89": {"QMMA.16832.F32.E5M2.E5M2": 1},
                          "sm_90": {"HMMA.16816.F32": 2, "F2FP.F16.E5M2.UNPACK_B": 12}},
}


ARCHS = ["sm_80", "sm_86", "sm_89", "sm_90"]


@pytest.fixture(scope="module")
def listings():
    """(source, arch) -> cuobjdump -sass of the two probe files, compiled by NVRTC."""
    from tcgemm.engine.gpu.sass import sass_tools_missing
    if missing := sass_tools_missing():
        pytest.skip(missing)
    from tcgemm.engine.gpu.nvrtc_offline import compile_cubin, cuobjdump_sass
    return {(source, arch): cuobjdump_sass(compile_cubin(source, arch))
            for source in ("probe_mma.cu", "probe_mma_ceiling.cu") for arch in ARCHS}


@pytest.fixture(scope="module")
def probe_ops(listings):
    from tcgemm.engine.gpu.sass import function_ops
    return {where: function_ops(listing) for where, listing in listings.items()}


@pytest.mark.slow     # the listings: the probes compiled for every architecture
@pytest.mark.parametrize("variant", list(EXPECTED_SASS))
@pytest.mark.parametrize("arch", ARCHS)
def test_each_new_variant_compiles_to_its_instruction(probe_ops, variant, arch):
    assert probe_ops["probe_mma.cu", arch][probes.probe_entry(variant)] == EXPECTED_SASS[variant][arch]


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(MMA_VARIANTS))
@pytest.mark.parametrize("arch", ARCHS)
def test_the_ceiling_loop_runs_one_round_of_the_probes_mma(listings, probe_ops, variant, arch):
    """The ceiling kernel's loop issues, per trip, one round of its variant's mma (2 per chain), as many
    instructions of each kind as 16 probes of the variant: no mma computed once for two (ptxas does
    that for sm_90's fp8 when the loop is unrolled)."""
    from collections import Counter
    from tcgemm.engine import sass_loop
    probe = probe_ops["probe_mma.cu", arch][probes.probe_entry(variant)]
    if not probe:
        assert not probe_ops["probe_mma_ceiling.cu", arch][ceiling.entry(variant)]     # fp8 before sm_89
        return
    tensor = next(op for op in probe if "MMA" in op).split(".")[0]
    body = sass_loop.hot_loop(listings["probe_mma_ceiling.cu", arch], ceiling.entry(variant), tensor)
    in_loop = Counter(i.opcode for i in body if i.opcode.startswith(tensor))
    assert in_loop == {op: 2 * ceiling.CHAINS * n for op, n in probe.items() if op.startswith(tensor)}


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["m16n8k32.e4m3.f32", "m16n8k32.e5m2.f32"])
def test_hopper_adds_c_to_fp8_products_outside_the_tensor_core(listings, variant):
    """On sm_90 the first of the two HMMA starts from zero (RZ) and C joins by 4 FADD per lane."""
    import re
    from tcgemm.engine.gpu.sass import function_ops
    pattern = re.compile(r"\bFADD\b|HMMA\.16816\.F32 R\d+, R\d+, R\d+, RZ")
    ops = function_ops(listings["probe_mma.cu", "sm_90"], pattern)[probes.probe_entry(variant)]
    from_zero = [op for op in ops if op.startswith("HMMA")]
    assert ops["FADD"] == 4 and len(from_zero) == 1 and ops[from_zero[0]] == 1, ops


def test_function_ops_counts_per_function():
    from tcgemm.engine.gpu.sass import function_ops
    listing = ("  Function : first\n  HMMA.16816.F32 R4, R4, R8, RZ ;\n  HMMA.16816.F32 R4, R8, R8, R4 ;\n"
               "  Function : second\n  IMMA.16832.S8.S8 R0, R4, R8, R0 ;\n  LDG.E R0, [R2] ;\n")
    assert function_ops(listing) == {"first": {"HMMA.16816.F32": 2}, "second": {"IMMA.16832.S8.S8": 1}}


# ---- datasheet rates per type ------------------------------------------------------------------------

@pytest.mark.parametrize("name, ab, acc, rate", [
    ("NVIDIA H100 80GB HBM3", "bf16", "f32", 989.4), ("NVIDIA H100 80GB HBM3", "tf32", "f32", 494.7),
    ("NVIDIA H100 80GB HBM3", "e5m2", "f32", 1978.9), ("NVIDIA H100 80GB HBM3", "s8", "s32", 1978.9),
    ("NVIDIA GeForce RTX 4090", "e4m3", "f32", 330.3), ("NVIDIA GeForce RTX 4090", "f16", "f16", 330.3),
    ("NVIDIA A100-SXM4-80GB", "tf32", "f32", 156.0), ("NVIDIA A100-SXM4-80GB", "e4m3", "f32", None),
    ("NVIDIA L4", "e4m3", "f32", 242.5), ("NVIDIA GeForce RTX 3090", "s8", "s32", 284.0),
])
def test_datasheet_rate_per_type(name, ab, acc, rate):
    assert hw.peak_for(name).rate(ab, acc) == rate


def test_every_variant_has_a_rate_on_the_gpus_that_publish_all_types():
    for name in ("NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 4090"):
        peak = hw.peak_for(name)
        assert all(peak.rate(ab, acc) for _, ab, acc in MMA_VARIANTS.values()), name


def test_variants_table_puts_the_datasheet_beside_each_ceiling():
    measured = [SimpleNamespace(variant="m16n8k8.tf32.f32", tflops=247.35),
                SimpleNamespace(variant="m16n8k32.s32", tflops=600.0)]
    table = ceiling.variants_table(measured, hw.peak_for("NVIDIA A100-SXM4-80GB"), ["no fp8"], 108, 1410)
    per_clock = [t * 1e12 / (108 * 1410e6) / f for t, f in ((247.35, 2048), (600.0, 8192))]
    assert table.rows == (
        ("m16n8k8.tf32.f32", "tf32 -> f32", 247.35, "TFLOP/s", 156.0, 100 * 247.35 / 156.0, per_clock[0]),
        ("m16n8k32.s32", "s8 -> s32", 600.0, "TOP/s", 624.0, 100 * 600.0 / 624.0, per_clock[1]))
    assert table.notes == ("no fp8",) and "A100" in table.caption and "1410 MHz" in table.caption
    assert ceiling.variants_table(measured[:1]).rows[0][4:] == (None, None, None)


def test_variants_table_says_which_layouts_each_type_reuses():
    from tcgemm.fragments.variants import earlier_with_same_layout, variants_table
    rows = {row[0]: row[1:] for row in variants_table().rows}
    assert rows["m16n8k16.bf16.f32"] == ("bf16 -> f32", 16, 4, 2, 4, "m16n8k16.f32", "sm_80")
    assert rows["m16n8k8.tf32.f32"] == ("tf32 -> f32", 32, 4, 2, 4, "its own", "sm_80")
    assert rows["m16n8k32.e5m2.f32"] == ("e5m2 -> f32", 8, 4, 2, 4, "m16n8k32.s32", "sm_89")
    assert rows["m16n8k16.f16"][-2:] == ("m16n8k16.f32", "sm_80") and rows["m16n8k16.f32"][-2] == "its own"
    assert earlier_with_same_layout("m16n8k8.tf32.f32", "CD") == "m16n8k16.f32"     # C and D: one layout
