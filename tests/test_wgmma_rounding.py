"""The wgmma rounding probe without a GPU: its kernels compile to one wgmma of the intended shape for sm_90a
(the SASS claim: HGMMA for f16, QGMMA, the fp8 Tensor Core instruction, for e4m3) and to nothing elsewhere;
its cases are exact in the input types; a recorded observation (an H200, sm_90) singles out one hypothesis."""
import json
from pathlib import Path

import numpy as np
import pytest

from tcgemm.engine.catalog import PROBES
from tcgemm.numerics.elements import decode, encode
from tcgemm.hopper.wgmma import WGMMA_TYPES
from tcgemm.numerics.gpu.wgmma_rounding import WGMMA_ROUNDING, wgmma_rounding_table
from tcgemm.numerics.rounding import ACCUMULATOR_FLUSH, Hypothesis, cases, verdict
from required import skip_or_fail

SOURCE = PROBES["wgmma_rounding"].source
# What each entry compiles to for sm_90a (cuobjdump's names): the f16 wgmma is HGMMA, the e4m3 one QGMMA.
SASS = {"wgmma_rounding_f16_f32": "HGMMA.64x8x16.F32", "wgmma_rounding_e4m3_f32": "QGMMA.64x8x32.F32.E4M3.E4M3"}
RECORDED = json.loads((Path(__file__).parent / "data" / "rounding_wgmma_h200_sm90.json").read_text())


def _functions(arch: str) -> dict[str, str]:
    from tcgemm.engine.gpu.nvrtc_offline import compile_cubin, cuda_tool, cuobjdump_sass, find_toolkit
    kit = find_toolkit(13)
    if kit is None or cuda_tool("cuobjdump") is None:
        skip_or_fail("TCGEMM_REQUIRE_NVRTC", "no NVRTC with its headers, or no cuobjdump, for CUDA 13")
    import re
    parts = re.split(r"\s+Function : (\S+)", cuobjdump_sass(compile_cubin(SOURCE, arch, (), kit)))
    return dict(zip(parts[1::2], parts[2::2]))


def test_each_entry_holds_one_wgmma_of_its_type_on_sm_90a():
    functions = _functions("sm_90a")
    assert set(functions) == set(PROBES["wgmma_rounding"].entries) == set(SASS)
    for entry, instruction in SASS.items():
        lines = [line for line in functions[entry].splitlines() if "GMMA." in line]
        assert len(lines) == 1 and instruction in lines[0], (entry, lines)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_entries_are_empty_without_sm_90a(arch):
    functions = _functions(arch)
    assert set(functions) == set(SASS)
    assert not any("GMMA" in body for body in functions.values())


@pytest.mark.parametrize("w", WGMMA_ROUNDING, ids=lambda w: w.label)
def test_wgmma_runs_the_cases_of_the_mma_type_of_its_k(w):
    assert w.k == WGMMA_TYPES[w.ab].k and w.mma.ab == w.ab and w.mma.acc == "f32"
    assert w.entry in PROBES["wgmma_rounding"].entries
    for c in cases(w.mma):      # the images hold the case's values exactly
        for values in (c.a, c.b):
            exact = np.array(values, dtype=np.float64)
            assert np.array_equal(decode(encode(exact, w.element), w.element), exact), (c.name, values)


def _recorded_verdict(w):
    recorded = RECORDED["observed"][w.label]
    case_list = [c for c in cases(w.mma) if c.name in recorded]
    assert len(case_list) == len(recorded)
    return verdict(w.mma, [float.fromhex(recorded[c.name]) for c in case_list], case_list)


def test_recorded_h200_observations_fit_one_hypothesis_each():
    """f16: what mma.sync does (26 bits, all 16 products and C in one addition, truncated); e4m3: the fp8
    Tensor Core path keeps 14 bits, adds all 32 products and C at once, and flushes a subnormal C."""
    f16, e4m3 = (_recorded_verdict(w).fitting for w in WGMMA_ROUNDING)
    assert f16 == (Hypothesis("exact", 26, 16, "k", "first", "RZ", True),)
    assert e4m3 == (Hypothesis("exact", 14, 32, "k", "first", None, ACCUMULATOR_FLUSH),)


def test_table_names_the_wgmma_and_says_whether_the_entries_agreed():
    verdicts = [_recorded_verdict(w) for w in WGMMA_ROUNDING]
    table = wgmma_rounding_table(verdicts, arch="sm_90")
    rows = table.records()
    assert [r["wgmma"] for r in rows] == ["m64n8k16, fp16 -> fp32", "m64n8k32, e4m3 -> fp32"]
    assert rows[1]["bits kept in the sum"] == "14 (-10 vs fp32)" and rows[1]["products per addition"] == "32 (all)"
    assert all("agree in every case" in note for note in table.notes)


def test_accumulator_only_flush_is_a_hypothesis_where_the_cases_tell_it_apart():
    """Kept in A and B but flushed in C and D: offered where the cases' subnormal input is a normal number
    of the accumulator (fp16 and e4m3 into fp32), and a verdict on its predictions names it alone."""
    from tcgemm.numerics.rounding import MMA_TYPES, hypotheses, predict
    offered = {t.label for t in MMA_TYPES.values() if t.acc != "s32"
               and any(h.subnormals == ACCUMULATOR_FLUSH for h in hypotheses(t))}
    assert offered == {"fp16 -> fp32", "e4m3 -> fp32"}
    t = MMA_TYPES["fp16 -> fp32"]
    h = Hypothesis("exact", 26, 16, "k", "first", "RZ", ACCUMULATOR_FLUSH)
    assert verdict(t, [float(predict(c, h, t)) for c in cases(t)]).fitting == (h,)
