"""tcgemm.engine.results: the bench's JSON schema, its check, files, and the comparison of several GPUs.

FIXTURE is a test fixture, not a result: the README's H100 table (recorded 2026-11-22) in the schema.
"""
import copy
import json
from dataclasses import asdict, fields
from datetime import datetime, timezone
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from tcgemm.engine import results as R
from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.engine.gpu.device import DeviceInfo
from tcgemm.engine.report import BenchResult, summarize
from tcgemm.style import MIN_DISPLAY_TEXT_PX, displayed_text_sizes
from tcgemm.engine.timing import DEFAULT_PLAN

FIXTURE = Path(__file__).parent / "data" / "bench_h100_readme_2026-11-22.json"
H100_INFO = DeviceInfo("NVIDIA H100 80GB HBM3", "90", "sm_90", 132, 1980.0, 2619.0, 49152, 232448, 52428800,
                       85029158912, "13.2", "13.0", "14.2.0")


@pytest.fixture
def h100():
    return R.load(FIXTURE)


@pytest.fixture
def h200(h100):
    """A second GPU made from the first: every rate 1.1x, Kernel 1.0 not run, Kernel 4.0 in another
    configuration and Kernel 4.5 failing."""
    doc = copy.deepcopy(h100)
    doc["device"]["name"] = "NVIDIA H200"
    doc["device"]["memory_bytes"] = 150_000_000_000
    for group in doc["groups"]:
        group["rows"] = [row for row in group["rows"] if row["key"] != "k1.0"]
        for row in group["rows"]:
            row["tflops"] *= 1.1
            row["time_us"] /= 1.1
    rows = {row["key"]: row for row in doc["groups"][0]["rows"]}
    rows["k4.0"]["variant"] = "BK=32, 4 stages"
    rows["k4.5"]["check"] = "FAIL"
    return R.check_document(doc)


# --- the schema ---------------------------------------------------------------------------------

def test_fixture_is_valid_and_holds_the_readme_numbers(h100):
    g16, g32 = h100["groups"]
    assert (g16["inputs"], g32["inputs"]) == ("float16", "float32")
    assert [r["key"] for r in g16["rows"]] == ["cublas", "k1.0", "k1.1", "h1", "k2.0", "k2.1", "k3.0", "k3.1",
                                               "k4.0", "k4.1", "k4.2", "k4.3", "k4.4", "k4.5"]
    assert [r["key"] for r in g32["rows"]] == ["cublas-sgemm", "s1", "s2", "s3"]
    assert g16["rows"][0]["tflops"] == 718.2 and g32["rows"][3]["pct_baseline"] == 93.1


def test_a_version_1_document_reads_as_its_fixed_counts():
    """The fixture is a tcgemm-bench/1 document (50 timed runs, at least 10 warm-up runs per kernel)."""
    raw = json.loads(FIXTURE.read_text())
    assert raw["schema"] == "tcgemm-bench/1" and raw["method"]["reps"] == 50
    doc = R.load(FIXTURE)
    plan = doc["method"]["plan"]
    assert doc["schema"] == R.SCHEMA and (plan["min_reps"], plan["max_reps"], plan["min_warmup"]) == (50, 50, 10)
    assert {row["runs"] for g in doc["groups"] for row in g["rows"]} == {50}
    assert R.check_document(doc) is doc
    with pytest.raises(R.ResultsError, match="method.reps: expected a positive integer"):
        R.check_document({**raw, "method": {**raw["method"], "reps": 0}})     # a bad /1 document: refused as such


def test_device_fields_are_the_device_info_fields():
    assert list(R.DEVICE) == [f.name for f in fields(DeviceInfo)]


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(schema="tcgemm-bench/3"),
     "schema: expected 'tcgemm-bench/2' (or 'tcgemm-bench/1'), got 'tcgemm-bench/3'"),
    (lambda d: d.pop("schema"), "schema: expected 'tcgemm-bench/2' (or 'tcgemm-bench/1'), got None"),
    (lambda d: d["method"]["plan"].pop("window_s"), "method.plan.window_s: missing"),
    (lambda d: d["groups"][0]["rows"][1].update(runs=0), "groups[0].rows[1].runs: expected a positive integer"),
    (lambda d: d["device"].pop("sm_count"), "device.sm_count: missing"),
    (lambda d: d["device"].update(sm_count=True), "device.sm_count: expected a positive integer, got True"),
    (lambda d: d.update(date="2026-11-22T10:00:00+01:00"), "date: expected an ISO 8601 date in UTC"),
    (lambda d: d.update(date="yesterday"), "date: expected an ISO 8601 date in UTC"),
    (lambda d: d["shape"].update(K=0), "shape.K: expected a positive integer, got 0"),
    (lambda d: d["method"].update(l2_flush="yes"), "method.l2_flush: expected true or false, got 'yes'"),
    (lambda d: d.update(groups=[]), "groups: expected a non-empty list, got []"),
    (lambda d: d["groups"][1].update(peak_tflops=-1), "groups[1].peak_tflops: expected a positive number or null"),
    (lambda d: d["groups"][0]["rows"][3].update(tflops="fast"),
     "groups[0].rows[3].tflops: expected a positive number, got 'fast'"),
    (lambda d: d["groups"][0]["rows"][3].update(tflops=float("nan")), "groups[0].rows[3].tflops: expected a positive"),
    (lambda d: d["groups"][0]["rows"][2].update(check="ok"), "groups[0].rows[2].check: expected \"PASS\" or \"FAIL\""),
    (lambda d: d["groups"][0]["ceiling"].pop("tflops"), "groups[0].ceiling.tflops: missing"),
    (lambda d: d["groups"][1].update(baseline="cublas"), "groups[1].baseline: 'cublas' is not the key of any"),
    (lambda d: d["groups"][0]["rows"][1].update(key="k1.1"), "groups[0].rows: key 'k1.1' appears 2 times"),
    (lambda d: d["groups"][1].update(inputs="float16"), "groups: inputs 'float16' appear 2 times"),
])
def test_validation_names_the_bad_field(h100, edit, message):
    edit(h100)
    with pytest.raises(R.ResultsError, match="not a valid tcgemm-bench/2 document") as caught:
        R.check_document(h100, "x.json")
    assert message in str(caught.value)
    assert str(caught.value).startswith("x.json ")


def test_validation_lists_every_problem(h100):
    h100["device"]["arch"] = ""
    h100["groups"][0]["rows"][0]["time_us"] = 0
    problems = str(pytest.raises(R.ResultsError, R.check_document, h100).value).splitlines()[1:]
    assert [p.split(":")[0].strip() for p in problems] == ["device.arch", "groups[0].rows[0].time_us"]


def test_not_an_object():
    with pytest.raises(R.ResultsError, match="expected a JSON object, got list"):
        R.check_document([])


def test_pct_peak_may_be_null_for_a_gpu_without_datasheet_peak(h100):
    h100["groups"][0]["peak_tflops"] = None
    for row in h100["groups"][0]["rows"]:
        row["pct_peak"] = None
    assert R.check_document(h100) is h100


# --- building a document from bench results ---------------------------------------------------

def result(key, name, seconds, passed=True):
    return BenchResult(name, 4096, 4096, 4096, summarize([seconds * 0.99, seconds, seconds * 1.01]), passed, key=key)


def test_document_from_bench_results_round_trips(tmp_path):
    k40 = GEMM_KERNELS["k4.0"]
    fp16 = [result("cublas", "cuBLAS (cublasGemmEx)", 200e-6),
            result("k4.0", f"{k40.title} (BK=64, 4 stages)", 400e-6),
            result("k1.0", GEMM_KERNELS["k1.0"].title, 8000e-6, passed=False)]
    group = R.bench_group("float16", "Tensor Cores", "cublas", fp16, 989.4, "mma.sync", 640.0)
    device = H100_INFO.as_dict()
    when = datetime(2026, 11, 22, 10, 31, 7, tzinfo=timezone.utc)
    doc = R.document(device, 4096, 4096, 4096, DEFAULT_PLAN, [group], date=when)
    assert doc["date"] == "2026-11-22T10:31:07+00:00" and doc["device"]["sm_count"] == 132
    cublas, k4, k1 = doc["groups"][0]["rows"]
    assert (k4["key"], k4["title"], k4["variant"]) == ("k4.0", k40.title, "BK=64, 4 stages")
    assert (cublas["title"], cublas["variant"], k1["variant"]) == ("cuBLAS (cublasGemmEx)", "", "")
    assert k4["time_us"] == pytest.approx(400.0)
    assert k4["tflops"] == pytest.approx(2 * 4096**3 / 400e-6 / 1e12)
    assert k4["pct_baseline"] == pytest.approx(50.0) and cublas["pct_baseline"] == pytest.approx(100.0)
    assert k4["pct_ceiling"] == pytest.approx(100 * k4["tflops"] / 640.0)
    assert k4["iqr_pct"] == pytest.approx(1.0)     # quartiles of 0.99t, t, 1.01t: 0.995t and 1.005t
    assert k1["check"] == "FAIL" and k1["runs"] == 3
    assert doc["method"]["plan"] == asdict(DEFAULT_PLAN)
    path = R.write(doc, R.json_path(f"{tmp_path}/results/", doc["device"]["name"]))
    assert path == tmp_path / "results" / "nvidia-h100-80gb-hbm3.json"
    assert R.load(path) == doc
    assert R.load_all(tmp_path / "results") == [doc]


def test_bench_group_needs_its_baseline():
    with pytest.raises(R.ResultsError, match="no 'cublas' result"):
        R.bench_group("float16", "Tensor Cores", "cublas", [result("k1.0", "Kernel 1.0: naive mma", 1e-3)],
                      None, "mma.sync", 640.0)


def test_a_bad_document_is_not_written(tmp_path, h100):
    h100["shape"]["M"] = -1
    with pytest.raises(R.ResultsError, match="shape.M"):
        R.write(h100, tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("name, expected", [
    ("NVIDIA H100 80GB HBM3", "nvidia-h100-80gb-hbm3"), ("NVIDIA GeForce RTX 4090", "nvidia-geforce-rtx-4090"),
    ("NVIDIA A100-SXM4-40GB", "nvidia-a100-sxm4-40gb"), ("  H200 (NVL) ", "h200-nvl"),
])
def test_slug(name, expected):
    assert R.slug(name) == expected


def test_slug_of_nothing():
    with pytest.raises(R.ResultsError, match="file name"):
        R.slug("***")


def test_json_path(tmp_path):
    assert R.json_path(tmp_path, "NVIDIA H200") == tmp_path / "nvidia-h200.json"      # an existing folder
    assert R.json_path("new/", "NVIDIA H200") == Path("new/nvidia-h200.json")          # a folder to make
    assert R.json_path("mine.json", "NVIDIA H200") == Path("mine.json")


def test_load_names_the_file(tmp_path, h100):
    (tmp_path / "a.json").write_text("{not json")
    with pytest.raises(R.ResultsError, match=r"a.json is not JSON"):
        R.load_all(tmp_path)
    h100["groups"][0]["rows"][0]["check"] = "maybe"
    (tmp_path / "a.json").write_text(json.dumps(h100))
    with pytest.raises(R.ResultsError, match=r"a.json is not a valid .*\n  groups\[0\].rows\[0\].check"):
        R.load_all(tmp_path)


def test_load_all_without_the_folder(tmp_path):
    with pytest.raises(R.ResultsError, match="no results folder"):
        R.load_all(tmp_path / "results")


# --- comparing GPUs -----------------------------------------------------------------------------

def test_table_of_two_gpus(h100, h200):
    table = R.comparison_table([h100, h200])
    assert [c.name for c in table.columns] == ["Kernel", "NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    rows = {row[0]: row[1:] for row in table.rows}
    assert len(rows) == 18       # 14 fp16 rows (cuBLAS first), 4 fp32 rows
    assert rows["cuBLAS (cublasGemmEx)"] == ("718.2 (100%)", "790.0 (100%)")
    assert rows[GEMM_KERNELS["k4.4"].title] == ("441.3 (61%)", "485.4 (61%)")
    assert rows[GEMM_KERNELS["k1.0"].title] == ("17.8 (2%)", None)          # not run on the H200
    assert rows[GEMM_KERNELS["k4.5"].title][1].endswith(" FAIL")
    assert rows[GEMM_KERNELS["s3"].title] == ("48.2 (93%)", "53.0 (93%)")    # % of cuBLAS SGEMM
    assert table.notes == ("Kernel 4.0 ran as BK=64, 4 stages on NVIDIA H100 80GB HBM3; "
                           "BK=32, 4 stages on NVIDIA H200.",)
    assert "4096×4096×4096" in table.caption
    html = table._repr_html_()
    assert html.count("<tr>") == 19 and "NVIDIA H200" in html and "n/a" in html


def test_table_names_the_shape_per_gpu_when_shapes_differ(h100, h200):
    h200["shape"]["K"] = 8192
    columns = [c.name for c in R.comparison_table([h100, h200]).columns]
    assert columns[1:] == ["NVIDIA H100 80GB HBM3, 4096×4096×4096", "NVIDIA H200, 4096×4096×8192"]


def test_two_runs_of_one_gpu_are_told_apart_by_date(h100):
    later = copy.deepcopy(h100)
    later["date"] = "2026-12-01T00:00:00+00:00"
    assert R.gpu_labels([h100, later]) == ["NVIDIA H100 80GB HBM3 (2026-11-22)", "NVIDIA H100 80GB HBM3 (2026-12-01)"]


def bars(fig):
    """(panel, y label, bar width) of every bar, y labels read from the tick at the bar's centre."""
    found = []
    for ax in fig.axes:
        labels = {round(loc): label.get_text() for loc, label in zip(ax.get_yticks(), ax.get_yticklabels())}
        for patch in ax.patches:
            y = patch.get_y() + patch.get_height() / 2
            found.append((ax.get_xlabel(), labels.get(round(y)), patch.get_width(), patch.get_hatch()))
    return found


def test_figure_of_two_gpus(h100, h200):
    fig = R.comparison_figure([h100, h200])
    assert isinstance(fig, Figure)
    found = bars(fig)
    tf = [(label, w) for panel, label, w, _ in found if panel == "TFLOP/s"]
    assert len(tf) == 18 + 17                          # Kernel 1.0 has no bar for the H200
    assert ("Kernel 4.4", 441.3) in tf and ("cuBLAS SGEMM", 51.8) in tf
    assert ("Kernel 4.4", pytest.approx(485.43)) in tf
    hatched = [(label, w) for panel, label, w, hatch in found if hatch and panel == "TFLOP/s"]
    assert hatched == [("Kernel 4.5", pytest.approx(461.23))]
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]


def test_figure_is_legible_in_the_text_column(h100, h200):
    display = displayed_text_sizes(R.comparison_figure([h100, h200]))
    assert display.scale == 1.0, f"recorded {display.width_px} px wide, shrunk to fit the column"
    assert display.smallest.px >= MIN_DISPLAY_TEXT_PX


# --- the book page's logic: results/ empty, one GPU, two GPUs -----------------------------------

def test_page_with_no_results(tmp_path):
    docs = R.load_all(tmp_path)
    assert docs == []
    assert R.describe(docs).startswith("No results yet: results/ holds no JSON file.")
    assert max(len(line) for line in R.describe(docs).splitlines()) <= 80      # an output box, unwrapped
    assert "python -m tcgemm bench --json results/" in R.describe(docs)
    assert R.comparison_table(docs) is None and R.comparison_figure(docs) is None


def test_page_with_one_gpu(tmp_path, h100):
    R.write(h100, tmp_path / "nvidia-h100-80gb-hbm3.json")
    docs = R.load_all(tmp_path)
    assert R.describe(docs).splitlines() == ["Results from 1 GPU, M×N×K = 4096×4096×4096:",
                                             "  NVIDIA H100 80GB HBM3: sm_90, 132 SMs, CUDA 13.2, 2026-11-22"]
    assert len(R.comparison_table(docs).columns) == 2
    assert len(bars(R.comparison_figure(docs))) == 2 * 18


def test_page_with_two_gpus_in_file_order(tmp_path, h100, h200):
    R.write(h200, tmp_path / "b.json")
    R.write(h100, tmp_path / "a.json")
    docs = R.load_all(tmp_path)
    assert [d["device"]["name"] for d in docs] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    assert R.describe(docs).splitlines()[0] == "Results from 2 GPUs, M×N×K = 4096×4096×4096:"
    docs[1]["shape"]["K"] = 8192
    assert R.describe(docs).splitlines() == [
        "Results from 2 GPUs:", "  NVIDIA H100 80GB HBM3: sm_90, 132 SMs, CUDA 13.2, 2026-11-22; M×N×K = 4096×4096×4096",
        "  NVIDIA H200: sm_90, 132 SMs, CUDA 13.2, 2026-11-22; M×N×K = 4096×4096×8192"]


def test_the_results_folder_holds_only_valid_documents():
    """What the book page loads: every file in results/ (none is a test fixture)."""
    folder = Path(__file__).resolve().parent.parent / "results"
    for doc in R.load_all(folder):
        assert "fixture_note" not in doc


# --- the command: python -m tcgemm bench --json --------------------------------------------------

def test_bench_command_writes_the_document(tmp_path, monkeypatch, capsys):
    """cmd_bench with the GPU parts replaced: the document it writes, named after the GPU."""
    from types import SimpleNamespace

    import tcgemm.engine.gpu.bench as gpu_bench
    import tcgemm.engine.gpu.device as gpu_device
    from tcgemm.__main__ import main
    from tcgemm.hw import peak_for

    info = H100_INFO

    def compare(keys, M, N, K, reps, warmup, ceiling, log):
        dtype = GEMM_KERNELS[keys[0]].in_dtype
        group = gpu_bench.GROUPS[dtype]
        runs = [result(group.baseline, group.baseline, 1e-3)] + [
            result(k, f"{GEMM_KERNELS[k].title} (a variant)", 2e-3) for k in keys]
        return gpu_bench.Comparison(info.name, dtype, M, N, K, tuple(runs), peak_for(info.name),
                                    SimpleNamespace(tflops=600.0))

    monkeypatch.setattr(gpu_bench, "compare_timings", compare)
    monkeypatch.setattr(gpu_device, "device_info", lambda: info)
    assert main(["bench", "--kernels", "k4.0", "s1", "--reps", "7", "--json", f"{tmp_path}/results/"]) == 0
    path = tmp_path / "results" / "nvidia-h100-80gb-hbm3.json"
    assert f"wrote {path} (tcgemm-bench/2)" in capsys.readouterr().out
    doc = R.load(path)
    plan = doc["method"]["plan"]
    assert doc["device"] == info.as_dict() and (plan["min_reps"], plan["max_reps"]) == (7, 7)
    assert doc["shape"]["K"] == 4096
    assert [(g["inputs"], g["baseline"], [r["key"] for r in g["rows"]]) for g in doc["groups"]] == [
        ("float16", "cublas", ["cublas", "k4.0"]), ("float32", "cublas-sgemm", ["cublas-sgemm", "s1"])]
    k40 = doc["groups"][0]["rows"][1]
    assert (k40["variant"], k40["pct_baseline"], k40["pct_ceiling"]) == ("a variant", 50.0, pytest.approx(
        100 * k40["tflops"] / 600.0))
    assert doc["groups"][0]["peak_tflops"] == 989.4 and doc["groups"][1]["peak_tflops"] == 66.9


def test_bench_rounds_times_each_group_in_rounds_and_refuses_one_round(monkeypatch, capsys):
    """--rounds N: after each group's table, time_in_rounds for that group's kernels with N rounds."""
    from types import SimpleNamespace

    import tcgemm.engine.gpu.bench as gpu_bench
    import tcgemm.engine.gpu.device as gpu_device
    from tcgemm.__main__ import main

    calls = []
    def compare(keys, M, N, K, reps, warmup, ceiling, log):
        group = gpu_bench.GROUPS[GEMM_KERNELS[keys[0]].in_dtype]
        runs = (result(group.baseline, group.baseline, 1e-3), result(keys[0], GEMM_KERNELS[keys[0]].title, 2e-3))
        return SimpleNamespace(results=runs, table="table", peak_tflops=None, ceiling_tflops=None)

    monkeypatch.setattr(gpu_bench, "compare_timings", compare)
    monkeypatch.setattr(gpu_bench, "time_in_rounds", lambda keys, M, N, K, rounds, reps, log: calls.append(
        (keys, M, rounds, reps)) or f"rounds of {keys}")
    monkeypatch.setattr(gpu_device, "device_info", lambda: H100_INFO)
    assert main(["bench", "--kernels", "k4.0", "s1", "--size", "1024", "--rounds", "5", "--reps", "9"]) == 0
    assert calls == [(["k4.0"], 1024, 5, 9), (["s1"], 1024, 5, 9)]
    assert "rounds of ['k4.0']" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["bench", "--rounds", "1"])
    assert "at least 2" in capsys.readouterr().err
