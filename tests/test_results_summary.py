"""What the results page says of each run (tcgemm.engine.results.summary, against_first): plain values for its
readings, on documents made up here, so each case is known; and its recorded readings, rendered from
altered values, change their verdicts with them."""
import copy
import json
from pathlib import Path

from tcgemm.engine import results as R
from tcgemm.publish import prose

PAGE = Path(__file__).resolve().parent.parent / "book" / "results.ipynb"


def _row(key, title, tflops, base, iqr=1.0, check="PASS"):
    return {"key": key, "title": title, "variant": "", "time_us": 100.0, "iqr_pct": iqr, "tflops": tflops,
            "pct_baseline": 100 * tflops / base, "pct_peak": None, "pct_ceiling": 50.0, "check": check, "runs": 500}


def _doc(name="NVIDIA Test GPU", scale=1.0):
    fp16 = [("cublas", "cuBLAS (cublasGemmEx)", 600.0), ("k4.4", "Kernel 4.4: ldmatrix addresses by XOR", 400.0),
            ("k4.5", "Kernel 4.5: any shape", 380.0), ("k4.6", "Kernel 4.6: a tile plan per problem", 385.0),
            ("k1.0", "Kernel 1.0: naive mma", 30.0), ("k5.6", "Kernel 5.6: C stored by TMA", 590.0)]
    fp32 = [("cublas-sgemm", "cuBLAS SGEMM (cublasSgemm, TF32 off)", 50.0), ("s1", "Kernel S1: Maxas", 45.0),
            ("s3", "Kernel S3: S2 with cp.async copies", 46.0)]
    group = lambda inputs, base, rows: {
        "inputs": inputs, "heading": inputs, "baseline": base, "ceiling": {"name": "x", "tflops": 1.0},
        "peak_tflops": None, "rows": [_row(k, t, v * scale, rows[0][2] * scale) for k, t, v in rows]}
    return {"device": {"name": name, "sm_count": 132, "sm_clock_mhz": 1980.0, "l2_bytes": 50 * 2**20,
                       "memory_bytes": 80 * 2**30},
            "groups": [group("float16", "cublas", fp16), group("float32", "cublas-sgemm", fp32)]}


def test_summary_names_the_fastest_kernels():
    s = R.summary(_doc())
    fp16 = s["float16"]
    assert s["gpu"] == "NVIDIA Test GPU"
    assert fp16["cublas"]["tflops"] == 600.0 and fp16["cublas"]["spread"] == 0.005
    assert (fp16["best"]["name"], fp16["best"]["what"], fp16["best"]["only_on"]) == ("Kernel 5.6", "C stored by TMA", "sm_90")
    assert fp16["portable"]["name"] == "Kernel 4.4" and fp16["portable"]["only_on"] == ""
    assert [n["name"] for n in fp16["near"]] == ["Kernel 4.5", "Kernel 4.6"]   # within NEAR of 4.4; 1.0 is not
    assert [p["name"] for p in fp16["plans"]] == ["Kernel 4.5", "Kernel 4.6"]
    assert fp16["failed"] == []
    assert s["float32"]["best"]["name"] == "Kernel S3" and "portable" not in s["float32"]


def test_summary_leaves_out_failed_kernels_and_missing_groups():
    doc = _doc()
    doc["groups"][0]["rows"][-1]["check"] = "FAIL"          # Kernel 5.6
    doc["groups"] = doc["groups"][:1]
    s = R.summary(doc, "label")
    assert s["gpu"] == "label" and "float32" not in s
    assert s["float16"]["best"]["name"] == "Kernel 4.4" and s["float16"]["failed"] == ["Kernel 5.6"]


def test_against_first_sets_each_run_against_the_first():
    first, second = _doc("GPU A"), _doc("GPU B", scale=1.02)
    second["groups"][0]["rows"][1]["tflops"] = 400.0 * 1.001    # Kernel 4.4: inside the spreads
    second["device"]["l2_bytes"] = 60 * 2**20
    assert R.against_first([first]) == []
    [c] = R.against_first([first, second])
    assert (c["gpu"], c["against"]) == ("GPU B", "GPU A")
    assert (c["here"]["l2_mib"], c["there"]["l2_mib"]) == (60, 50)
    rows = {name: (ratio, beyond) for name, ratio, beyond in c["float16"]}
    assert abs(rows["cuBLAS"][0] - 1.02) < 1e-12 and rows["cuBLAS"][1]
    assert not rows["Kernel 4.4"][1]
    assert len(c["float32"]) == 3


def test_against_first_skips_rows_that_failed_or_were_not_run():
    first, second = _doc("GPU A"), copy.deepcopy(_doc("GPU B"))
    second["groups"][0]["rows"][1]["check"] = "FAIL"
    del second["groups"][1]
    [c] = R.against_first([first, second])
    assert "Kernel 4.4" not in [name for name, *_ in c["float16"]] and "float32" not in c


# --- the page's recorded readings follow their values ---------------------------------------------


def _fp16_reading() -> dict:
    notebook = json.loads(PAGE.read_text(encoding="utf-8"))
    for _, _, output in prose.recorded_readings(notebook):
        recorded = output["metadata"]["tcgemm"]["prose"]
        if "fastest Tensor Core kernel" in recorded["template"]:
            return recorded
    raise AssertionError("results.ipynb has no recorded reading of the fastest Tensor Core kernel")


def test_results_reading_says_level_only_within_the_spreads():
    recorded = _fp16_reading()
    values = copy.deepcopy(recorded["values"])
    values["best"]["tflops"] = values["cublas"]["tflops"] * 1.001
    assert "level with cuBLAS" in prose.render(recorded["template"], values)
    values["best"]["tflops"] = values["cublas"]["tflops"] * 0.9
    assert "behind cuBLAS by more than" in prose.render(recorded["template"], values)
    values["best"]["tflops"] = values["cublas"]["tflops"] * 1.1
    assert "ahead of cuBLAS by more than" in prose.render(recorded["template"], values)


def test_results_reading_compares_the_tile_plans_with_their_spreads():
    recorded = _fp16_reading()
    values = copy.deepcopy(recorded["values"])
    assert [p["name"] for p in values["plans"]] == ["Kernel 4.5", "Kernel 4.6"]
    values["plans"][1]["tflops"] = values["plans"][0]["tflops"] * 1.1
    assert "4.6 is faster by 10.0%" in prose.render(recorded["template"], values)
    values["plans"][1]["tflops"] = values["plans"][0]["tflops"]
    assert "level at this size" in prose.render(recorded["template"], values)
    values["failed"] = ["Kernel 5.1"]
    assert "Kernel 5.1 failed its check" in prose.render(recorded["template"], values)
