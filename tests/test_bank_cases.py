"""The explorer's cases in Python: presets that are the kernels' own instructions, CuTe equivalents that
are the same layouts, the notation's grammar, and the Nsight Compute counts the chapter recorded
for the explorer, which must be the ones in its tables."""
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from tcgemm import layouts
from tcgemm.engine.catalog import GEMM_KERNELS, TARGET_ARCHS
from tcgemm.engine.gpu.ncu import METRICS, PREDICTED_BY, Comparison
from tcgemm.publish.notebook import recorded_on
from tcgemm.smem import bank_cases, banks, kernel_smem, notation

ROOT = Path(__file__).resolve().parent.parent
CHAPTER = ROOT / "book" / "bank_conflicts.ipynb"


def counts(report) -> tuple[int, int, int, int]:
    return len(report.phases), report.wavefronts, report.ideal, report.ways


# ---- presets ----------------------------------------------------------------------------------

KERNEL_PRESETS = {name: p for name, p in bank_cases.PRESETS.items() if p["kernel"]}


@pytest.mark.parametrize("arch", sorted(TARGET_ARCHS))
@pytest.mark.parametrize("key, op", sorted({(p["kernel"], p["op"]) for p in KERNEL_PRESETS.values()}))
def test_every_instruction_of_a_kernel_preset_is_the_preset(key, op, arch):
    """Each instruction of that op class in one block-step behaves as one of the kernel's presets
    for it (same phases, wavefronts, ideal and ways), and each such preset is met."""
    presets = {name: bank_cases.analyze(p["settings"]) for name, p in KERNEL_PRESETS.items()
               if (p["kernel"], p["op"]) == (key, op)}
    met = set()
    instrs = [i for i in kernel_smem.block_step(key, arch=arch) if i.op == op]
    assert instrs
    for instr in instrs:
        found = counts(banks.analyze(instr.access))
        same = [name for name, report in presets.items() if counts(report) == found]
        assert same, f"{key} ({arch}) {op} instruction with {found} matches no preset of {sorted(presets)}"
        met.update(same)
    assert met == set(presets)


def test_presets_are_valid_and_say_what_they_are():
    for name, preset in bank_cases.PRESETS.items():
        assert set(preset["settings"]) == set(bank_cases.DEFAULTS), name
        report = bank_cases.analyze(preset["settings"])
        if "-way" in preset["label"]:
            assert preset["label"].endswith(f"{report.ways}-way"), (name, str(report))
        assert preset["op"] in (None, *bank_cases.MEASURED_COUNTERS)


# The access each preset's summary must name, in the words of no table shared by presets.
ACCESS_WORDS = {"ldmatrix-x4-A": "ldmatrix.x4 of", "ldmatrix-x2-B": "ldmatrix.x2 of",
                "ldmatrix-x4-trans-B": "ldmatrix.x4.trans of", "stmatrix-x4": "stmatrix.x4 of",
                "store-16": "16-byte stores of", "fragment-4": "4-byte mma fragment loads of",
                "fragment-8": "8-byte mma fragment stores of"}


@pytest.mark.parametrize("name", sorted(bank_cases.PRESETS))
def test_each_presets_summary_says_what_its_settings_are(name):
    """The summary is made from the preset's own settings: its access, element type and tile, its
    layout, and its kernel (only where the access is a kernel's; never another preset's kernel)."""
    preset = bank_cases.PRESETS[name]
    s, source = preset["settings"], preset["source"]
    assert bank_cases.preset_of(s) == name
    text = bank_cases.summary(s)
    covered = [cell for cells in bank_cases.lane_elements(s).values() for cell in cells]
    rows, cols = max(r for r, _ in covered) + 1, max(c for _, c in covered) + 1
    elem = {1: "int8", 2: "fp16", 4: "fp32"}[s["elem_bytes"]]
    access, _, rest = text.partition(f"; layout {bank_cases.build_layout(s).name}: ")
    assert rest.startswith(f"{len(bank_cases.analyze(s).phases)} phase"), text
    assert ACCESS_WORDS[s["access"]] in access and f" {rows}x{cols} {elem} " in access, text
    kernels = {key for key, spec in GEMM_KERNELS.items() if f"{spec.short_title}'s " in text}
    assert kernels == ({source} if source else set()), (text, kernels)
    assert preset["kernel"] in (None, source)


def test_the_tma_preset_names_no_kernel_2_0():
    text = bank_cases.summary(bank_cases.PRESETS["tma-64B"]["settings"])
    assert text.startswith("ldmatrix.x4 of a 16x16 fp16 A tile; layout Swizzle<2,4,3> on bytes (64 B rows): "), text
    assert "Kernel" not in text


@pytest.mark.parametrize("name", sorted(bank_cases.PRESETS))
def test_phases_are_numbered_from_0_in_the_text_and_the_table(name):
    s = bank_cases.PRESETS[name]["settings"]
    report = bank_cases.analyze(s)
    for p, phase in enumerate(report.phases):
        label, row = bank_cases.phase_label(s, p), bank_cases.phase_row_label(p, phase.wavefronts)
        assert label.startswith(f"{banks.phase_name(p)} (") and banks.phase_name(p) == f"phase {p}", label
        assert f"{phase.wavefronts} wavefront" in label and row == f"{p} ({phase.wavefronts}x)", (label, row)
        if bank_cases.build_access(s).kind in banks.MATRIX_KINDS:
            assert f": matrix {p}, " in label, label
    last = len(report.phases) - 1
    assert ("the only phase" if last == 0 else f"of phases 0-{last}") in bank_cases.phase_label(s, last)


def test_the_tma_swizzle_modes_are_conflict_free_for_ldmatrix_and_their_rows():
    for width, B in ((32, 1), (64, 2), (128, 3)):
        s = bank_cases.PRESETS[f"tma-{width}B"]["settings"]
        assert (s["B"], s["M"], s["S"], s["row_elems"] * s["elem_bytes"]) == (B, 4, 3, width)
        assert bank_cases.analyze(s).conflicts == 0
        assert bank_cases.analyze({**s, "layout": "row-major"}).conflicts > 0 or width == 32


def test_ldmatrix_trans_and_stmatrix_address_as_ldmatrix_does():
    plain = bank_cases.build_access(bank_cases.settings())
    for access, kind in (("ldmatrix-x4-trans-B", "ldmatrix"), ("stmatrix-x4", "stmatrix")):
        other = bank_cases.build_access(bank_cases.settings(access=access))
        assert other.kind == kind and other.ldmatrix_num == 4
        np.testing.assert_array_equal(other.addresses, plain.addresses)
        assert counts(banks.analyze(other)) == counts(banks.analyze(plain)) == (4, 16, 4, 4)


def test_eight_byte_fragment_stores_conflict_4_way_on_fp32_rows():
    report = bank_cases.analyze(access="fragment-8", elem_bytes=4)
    assert counts(report) == (2, 8, 2, 4)
    assert bank_cases.analyze(access="fragment-8", elem_bytes=4, layout="padded", pad_bytes=32).conflicts == 0


# ---- CuTe ---------------------------------------------------------------------------------------

def whole_tile(s: dict) -> np.ndarray:
    layout = bank_cases.build_layout(s)
    rows, cols = np.meshgrid(np.arange(bank_cases.tile_rows(s)), np.arange(layout.row_elems), indexing="ij")
    return layout(rows, cols)


@pytest.mark.parametrize("name", sorted(bank_cases.PRESETS))
def test_the_cute_equivalent_of_each_preset_is_the_same_layout(name):
    s = bank_cases.PRESETS[name]["settings"]
    equivalent = bank_cases.cute_equivalent(s)
    assert equivalent is not None, name
    cute = bank_cases.settings(**{**s, "layout": "cute", **equivalent})
    np.testing.assert_array_equal(whole_tile(cute), whole_tile(s))


def test_kernel_2_0s_xor_is_swizzle_2_3_3_on_fp16_elements():
    assert bank_cases.cute_equivalent(bank_cases.settings(layout="xor")) == {
        "cute": "Swizzle<2,3,3> o (16,32):(32,1)", "unit": "element"}
    # A byte swizzle below the element size stays on bytes; a custom expression has no CuTe form.
    assert bank_cases.cute_equivalent(bank_cases.settings(layout="swizzle", B=1, M=0, S=3, unit="byte"))["unit"] == "byte"
    assert bank_cases.cute_equivalent(bank_cases.settings(layout="custom")) is None
    assert bank_cases.cute_equivalent(bank_cases.settings(layout="padded", pad_bytes=3)) is None


def test_nested_cute_modes_split_the_index_colexicographically():
    cute = notation.parse_cute("((2,4),8):((1,16),2)")
    assert (cute.rows, cute.cols) == (8, 8)
    assert [cute.element_offset(r, 0) for r in range(8)] == [0, 1, 16, 17, 32, 33, 48, 49]
    assert str(notation.parse_cute(" Sw<3,4,3> o _0 o (_8,_64):(_64,_1)")) == "Swizzle<3,4,3> o (8,64):(64,1)"


@pytest.mark.parametrize("text, message", [
    ("(8,64)", "expected ':' at position 6, found the end"),
    ("(8,0):(64,1)", "every extent of the shape must be at least 1"),
    ("Swizzle<3,4,3> (8,64):(64,1)", "expected 'o' at position 15"),
    ("(8,64,2):(64,1,512)", "must have two modes"),
    ("Layout<8>", "a CuTe layout starts with Swizzle<B,M,S> o or with its shape"),
])
def test_cute_refusals(text, message):
    with pytest.raises(notation.NotationError, match=re.escape(message)):
        notation.parse_cute(text)


def test_swizzles_stay_below_bit_31():
    with pytest.raises(ValueError, match="reaches past bit 30"):
        layouts.swizzle(3, 26, 3)
    with pytest.raises(ValueError, match="reaches past bit 30"):
        bank_cases.build_access(bank_cases.settings(layout="cute", cute="Swizzle<3,26,3> o (8,64):(64,1)"))


# ---- the expression grammar ---------------------------------------------------------------------

@pytest.mark.parametrize("expr, value", [
    ("1 + 2 * 3", 7), ("1 << 2 + 1", 8), ("6 & 3 ^ 1 | 8", 11), ("-7 // 2", -4), ("-7 % 4", 1),
    ("7 % -4", -1), ("~0", -1), ("-1 >> 70 - 10", -1), ("2 * (row + 1)", 8), ("0x10 | _1", 17),
])
def test_expression_precedence_and_floor_semantics(expr, value):
    assert notation.evaluate(notation.parse_expr(expr), {"row": 3}) == value


@pytest.mark.parametrize("expr, message", [
    ("row +", "unexpected the end at position 5"), ("row ** 2", "unexpected '*' at position 5"),
    ("2 @ 3", "unexpected character '@' at position 2"), ("pow(2)", "unknown name 'pow' at position 0"),
    ("(row", "expected ')' at position 4, found the end"), ("row < col", "unexpected '<' at position 4"),
    ("   ", "needs an expression"), ("row" + " + row" * 80, "at most 400"),
])
def test_expression_refusals(expr, message):
    with pytest.raises(notation.NotationError, match=re.escape(message)):
        notation.parse_expr(expr)


def test_the_python_eval_is_gone():
    source = (ROOT / "tcgemm" / "smem" / "bank_cases.py").read_text() + (ROOT / "tcgemm" / "widgets" / "banks.js").read_text()
    assert not re.search(r"\beval\(|new Function", source)


# ---- what Nsight Compute measured -----------------------------------------------------------------

def test_measured_counters_are_the_ncu_comparisons():
    for op, counters in bank_cases.MEASURED_COUNTERS.items():
        assert counters[0].endswith("_inst") or counters[0].endswith("_inst_sass")
        for counter in counters:
            ops, _ = PREDICTED_BY[counter]
            assert op in ops, (op, counter)


def test_measured_state_keeps_every_count_and_marks_what_the_gpu_lacks():
    rows = [Comparison("smem_ld_inst", METRICS["smem_ld_inst"], 10, 10.0),
            Comparison("smem_ldsm_wavefronts", METRICS["smem_ldsm_wavefronts"], 40, math.nan)]
    state = bank_cases.measured_state({"k2.0": rows}, "NVIDIA H100 80GB HBM3", "sm_90", "4096³")
    assert state == {"device": "NVIDIA H100 80GB HBM3", "arch": "sm_90", "size": "4096³", "kernels": {"k2.0": {
        "smem_ld_inst": {"metric": METRICS["smem_ld_inst"], "predicted": 10, "measured": 10},
        "smem_ldsm_wavefronts": {"metric": METRICS["smem_ldsm_wavefronts"], "predicted": 40, "measured": None}}}}
    json.dumps(state)  # widget state: plain JSON


def recorded_tables(nb: dict) -> dict:
    """{kernel key: {metric: (predicted, measured)}} from the text of the chapter's recorded ncu tables."""
    found = {}
    for cell in nb["cells"]:
        if "predicted_vs_measured" not in "".join(cell["source"]):
            continue
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get("text/plain")
            if not text:
                continue
            caption, *lines = "".join(text).splitlines()
            (key,) = [k for k, spec in GEMM_KERNELS.items() if caption.startswith(f"{spec.title} at ")]
            rows = [re.split(r"\s{2,}", line.strip()) for line in lines if line.split()[:1] and line.split()[0] in
                    METRICS.values()]
            found[key] = {metric: (int(p.replace(",", "")), int(m.replace(",", ""))) for metric, p, m, _ in rows}
    return found


def recorded_explorer_state(nb: dict) -> dict:
    state = nb["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    (explorer,) = [m["state"] for m in state.values()
                   if m["state"].get("_anywidget_id") == "tcgemm.widgets.bank_explorer.BankExplorer"]
    return explorer


def test_the_explorer_shows_the_counts_of_the_recorded_tables():
    """The explorer's measured counts are what the chapter's profiling cell gave it in the same run,
    so they are the numbers of the tables it displayed, on the GPU of the recording stamp."""
    nb = json.loads(CHAPTER.read_text(encoding="utf-8"))
    tables = recorded_tables(nb)
    measured = recorded_explorer_state(nb).get("measured", {})
    assert bool(measured) == bool(tables), "the explorer and the tables disagree on whether ncu ran: make record"
    if not tables:
        return
    stamp = recorded_on(CHAPTER)
    assert measured["device"] == stamp["device"]
    assert measured["arch"] == "sm_" + stamp["compute_capability"].replace(".", "")
    shown = {key: {c["metric"]: (c["predicted"], c["measured"]) for c in counters.values() if c["measured"] is not None}
             for key, counters in measured["kernels"].items()}
    assert shown == tables
    for preset in KERNEL_PRESETS.values():
        assert preset["kernel"] in measured["kernels"]


def test_layouts_refuse_offsets_outside_31_bits():
    far = layouts.custom(lambda r, c: r * 2 ** 40 + c, "far", 2, 8)
    assert far(0, 3) == 3
    with pytest.raises(ValueError, match=re.escape(f"offset {2 ** 40} of element (1, 0) is outside 0..2^31-1")):
        far(np.array([0, 1]), np.array([0, 0]))
