import math

import pytest

from tcgemm.engine.report import BenchResult, bench_table, summarize, table_rows


def result(name, seconds, passed=True, key=""):
    return BenchResult(name, 4096, 4096, 4096, summarize([seconds] * 3), passed, key=key)


def test_summarize_median_and_quartiles():
    t = summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (t.median, t.q1, t.q3, t.minimum, t.maximum, t.runs) == (3.0, 2.0, 4.0, 1.0, 5.0, 5)
    assert t.spread == pytest.approx(2.0 / 3.0)


@pytest.mark.parametrize("bad", [[], [1.0, 0.0], [float("nan")]])
def test_summarize_refuses_bad_times(bad):
    with pytest.raises(ValueError):
        summarize(bad)


def test_rows_reproduce_the_seed_table():
    # The seed's RTX 4090 numbers: cuBLAS 895 us, Kernel 1.0 4680 us, peak 165.2 TFLOP/s.
    rows = table_rows([result("cuBLAS", 895e-6), result("Kernel 1.0", 4680e-6)], "cuBLAS", 165.2)
    assert rows[0]["tflops"] == pytest.approx(153.6, abs=0.05)
    assert rows[0]["pct_peak"] == pytest.approx(93.0, abs=0.05)
    assert rows[1]["tflops"] == pytest.approx(29.4, abs=0.05)
    assert rows[1]["pct_baseline"] == pytest.approx(19.1, abs=0.05)
    assert rows[1]["pct_peak"] == pytest.approx(17.8, abs=0.05)


def test_table_text_and_unknown_peak():
    table = bench_table([result("cuBLAS", 1e-3), result("k", 2e-3, passed=False)], "cuBLAS", None,
                        baseline_label="cuBLAS")
    assert [c.name for c in table.columns] == ["Kernel", "µs", "±", "TFLOP/s", "% cuBLAS", "Check"]
    lines = str(table).splitlines()
    assert lines[0].split()[:2] == ["Kernel", "µs"]
    assert "50.0" in lines[3] and "FAIL" in lines[3] and "2000" in lines[3]
    assert table.column("% cuBLAS") == [pytest.approx(100.0), pytest.approx(50.0)]


def test_ceiling_column_only_when_a_ceiling_is_given():
    results = [result("cuBLAS", 1e-3), result("k", 2e-3)]
    plain = bench_table(results, "cuBLAS", 100.0)
    assert [c.name for c in plain.columns][4:] == ["% baseline", "% peak", "Check"]
    table = bench_table(results, "cuBLAS", 100.0, ceiling_tflops=274.9)
    assert "% mma.sync" in str(table).splitlines()[0]
    rows = table_rows(results, "cuBLAS", 100.0, 274.9)
    assert rows[0]["pct_ceiling"] == pytest.approx(100 * rows[0]["tflops"] / 274.9)
    assert f"{rows[1]['pct_ceiling']:.1f}" in str(table).splitlines()[3]
    assert "% mma.sync" in table._repr_html_()


def test_stall_table_orders_opcodes_and_reasons_by_share():
    from tcgemm.engine.report import stall_table
    table = stall_table({"STG": {"lg": 30, "wait": 10}, "HMMA": {"math": 40, "wait": 15, "selected": 5},
                         "LDSM": {"barrier": 0}}, top=2)
    assert table.column("Opcode") == ["HMMA", "STG"]
    assert table.column("% of samples") == [pytest.approx(60.0), pytest.approx(40.0)]
    assert table.rows[0][2] == "math 40.0%, wait 15.0%, selected 5.0%" and table.rows[1][2] == "lg 30.0%, wait 10.0%"
    empty = stall_table({})
    assert not empty.rows and empty.notes == ("no samples",)


def test_peak_table_bounds():
    from tcgemm.hw import known_peaks
    from tcgemm.engine.report import peak_table
    table = peak_table(4096, 4096, 4096)
    assert table.column("GPU") == [p.label for p in known_peaks()]
    h100 = table.column("GPU").index("H100 SXM5")
    assert table.rows[h100][2] == pytest.approx(2 * 4096 ** 3 / 989.4e12 * 1e6)   # 139 us


def test_checks_table_names_failures_and_tolerances():
    import numpy as np
    from tcgemm.engine.accuracy import compare_outputs
    from tcgemm.engine.report import checks_table
    ref = np.linspace(1, 2, 64).reshape(8, 8)
    good, fp16, bad = compare_outputs(ref + 1e-7, ref), compare_outputs(ref + 1e-3, ref, "float16"), compare_outputs(ref + 1, ref)
    table = checks_table([("Kernel 1.0", (256, 512, 128), good), ("HGEMM", (64, 64, 64), fp16),
                          ("Kernel 1.0", (64, 64, 32), bad)])
    assert table.column("M×N×K") == ["256×512×128", "64×64×64", "64×64×32"]
    assert table.column("Check")[:2] == ["PASS", "PASS"] and table.column("Check")[2].startswith("FAIL: Frobenius")
    # one note for every tolerance, the tolerances themselves beside each check's errors
    assert len(table.notes) == 1 and "PASS when" in table.notes[0]
    assert table.column("Tolerance") == [1e-4, 1e-2, 1e-4] and table.column("Max tolerance")[1] == 2e-2
    # in HTML: one verdict line naming the failure, the table folded away
    assert table.collapse and table.verdict().startswith("1 of 3 checks FAIL: Kernel 1.0, 64×64×32: FAIL: Frob")
    assert table.verdict().endswith("The other 2 PASS.")
    html = table._repr_html_()
    assert "<details" in html and "<details open" not in html and "<strong>FAIL</strong>" in html


def comparison(ceiling=None):
    from types import SimpleNamespace
    from tcgemm.engine.gpu.bench import Comparison
    from tcgemm.hw import peak_for
    results = (result("cuBLAS (cublasGemmEx)", 1e-3, key="cublas"), result("Kernel A", 4e-3, key="ka"),
               result("Kernel B", 2e-3, key="kb"), result("Kernel C", 1.6e-3, key="kc"))
    return Comparison("NVIDIA H100 80GB HBM3", "float16", 4096, 4096, 4096, results, peak_for("H100 SXM"),
                      ceiling and SimpleNamespace(tflops=ceiling))


def test_comparison_table_and_speedups():
    c = comparison(ceiling=700.0)
    table = c.table
    assert [col.name for col in table.columns] == ["Kernel", "µs", "±", "TFLOP/s", "% cuBLAS", "% peak",
                                                   "% mma.sync", "Check"]
    assert table.caption.startswith("NVIDIA H100 80GB HBM3, C = A @ B at 4096³")
    assert any("989.4 TFLOP/s (H100 SXM5, datasheet)" in n for n in table.notes)
    assert any("700.0 TFLOP/s" in n for n in table.notes)
    assert c.result("kb").name == "Kernel B" and [r.key for r in c.kernels] == ["ka", "kb", "kc"]
    with pytest.raises(KeyError, match="'kz'"):
        c.result("kz")
    steps = c.speedups()
    assert steps.column("Kernel") == ["Kernel B", "Kernel C"]
    assert steps.column("Speedup over the kernel above") == [pytest.approx(2.0), pytest.approx(1.25)]
    against_a = c.speedups("ka")
    assert against_a.column("Speedup over Kernel A") == [pytest.approx(1.0), pytest.approx(2.0), pytest.approx(2.5)]
    assert "% mma.sync" not in [col.name for col in comparison().table.columns]


def test_comparison_notes_how_many_runs_were_timed():
    from dataclasses import replace
    c = comparison()
    assert c.table.notes[0].startswith("µs: median of 3 timed runs per kernel after a warm-up, L2 flushed")
    runs = [replace(r, timing=summarize([1e-3] * n)) for r, n in zip(c.results, (20, 3125, 20, 50))]
    assert replace(c, results=tuple(runs)).table.notes[0].startswith("µs: median of 20 to 3125 timed runs")


def test_bar_chart_is_one_figure_outside_pyplot():
    import matplotlib.pyplot as plt
    from tcgemm.engine.report import bar_chart
    before = plt.get_fignums()
    c = comparison()
    fig = c.figure()
    assert plt.get_fignums() == before       # pyplot would show it a second time at the end of a cell
    ax = fig.axes[0]
    assert ax.get_title() == "NVIDIA H100 80GB HBM3, 4096³\nTensor Cores: fp16 in, fp32 accumulate"
    label = next(t for t in ax.texts if "datasheet peak" in t.get_text())
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    assert not label.get_window_extent(renderer).overlaps(ax.title.get_window_extent(renderer))
    assert all(t.get_fontsize() >= 8 for t in ax.texts)
    without_peak = bar_chart(list(c.results)).axes[0].texts
    assert len(without_peak) == len(c.results) and not any("datasheet" in t.get_text() for t in without_peak)


def test_sweep_table_shows_skipped_shapes_as_missing():
    from tcgemm.engine.report import sweep_table
    rows = [{"family": "square", "label": "512x512x512", "kernel_tflops": 50.0, "cublas_tflops": 100.0,
             "skipped": False, "passed": True},
            {"family": "odd", "label": "77x8192x4096", "kernel_tflops": float("nan"), "cublas_tflops": 80.0,
             "skipped": True, "passed": True}]
    table = sweep_table(rows, "Kernel 4.5")
    assert table.column("% cuBLAS")[0] == pytest.approx(50.0) and table.column("Check") == ["PASS", "skipped"]
    assert str(table).splitlines()[3].split() == ["odd", "77×8192×4096", "n/a", "80.0", "n/a", "skipped"]


def test_prediction_table_puts_missing_metrics_in_a_note():
    from collections import namedtuple
    from tcgemm.engine.report import prediction_table
    Row = namedtuple("Row", "counter metric predicted measured")
    table = prediction_table([Row("a", "l1tex__a.sum", 1024, 1100.0), Row("b", "smsp__b.sum", 5, float("nan"))],
                             "Kernel 2.0 at 4096³")
    assert table.rows == (("l1tex__a.sum", 1024, 1100.0, 76.0),)
    assert str(table).splitlines()[3].split() == ["l1tex__a.sum", "1,024", "1,100", "+76"]
    assert table.notes == ("Not available on this GPU: smsp__b.sum",)


def test_occupancy_table_rows():
    from types import SimpleNamespace
    from tcgemm.engine.catalog import GEMM_KERNELS
    from tcgemm.pipelines.occupancy import occupancy
    from tcgemm.engine.report import occupancy_table
    spec = GEMM_KERNELS["k3.0"]
    model = occupancy("sm_90", 128, 96, 40 * 1024)
    table = occupancy_table([SimpleNamespace(spec=spec, registers=96, model=model, driver_blocks_per_sm=5)])
    assert table.rows[0] == (spec.title, spec.variant, 128, 96, 40.0, model.blocks_per_sm, model.warps_per_sm,
                             model.limiter, 5)
    assert "sm_90" in table.notes[0] and not occupancy_table([]).rows
    # the driver API that tcgemm.pipelines.gpu.occupancy calls (CuPy's driver.occupancyMaxActiveBlocksPerMultiprocessor)
    assert table.notes[0].endswith("driver: cuOccupancyMaxActiveBlocksPerMultiprocessor")


def test_smem_traffic_table_is_the_prediction_per_mma():
    from tcgemm.smem.tables import smem_traffic_table
    from tcgemm.smem.kernel_smem import predict
    table = smem_traffic_table(["k3.1", "k4.0"], 4096, 4096, 4096, arch="sm_90")
    assert table.caption == "Shared memory at 4096³, sm_90 configuration"
    (k31, k40) = table.rows
    # Kernel 4.0's 64 x 64 warp tile reads 128 bytes per mma where Kernel 3.1's 64 x 32 reads 192,
    # with no bank conflicts; the copy column is the predicted store bytes over the launch's mma count
    assert k31[0].startswith("Kernel 3.1") and k31[1:3] == (192, 0) and k40[1:3] == (128, 0)
    stores = predict("k4.0", 4096, 4096, 4096, arch="sm_90").st.wavefronts * 128
    assert k40[3] == stores / (256 * 512 * 256)


def _sweep_rows(percents, labels=None):
    labels = labels or [f"{i + 1}x4096x4096" for i in range(len(percents))]
    return [{"family": "small M", "label": label, "kernel_tflops": p, "cublas_tflops": 100.0,
             "skipped": math.isnan(p), "passed": True} for p, label in zip(percents, labels)]


def test_sweep_summary_is_the_geometric_mean_and_the_lowest_shape():
    from tcgemm.engine.report import sweep_summary
    summary = sweep_summary(_sweep_rows([25.0, 100.0, float("nan"), 64.0]))
    assert summary.geomean == pytest.approx((25 * 100 * 64) ** (1 / 3))     # 54.3, not the mean 63
    assert (summary.lowest, summary.lowest_label, summary.shapes) == (25.0, "1x4096x4096", 3)
    assert str(summary) == "geometric mean over 3 shapes: 54.3% of cuBLAS; lowest 25.0% at 1×4096×4096"
    with pytest.raises(ValueError, match="no shape the kernel ran"):
        sweep_summary(_sweep_rows([float("nan")]))


def test_sweep_table_notes_its_summary():
    from tcgemm.engine.report import sweep_table
    table = sweep_table(_sweep_rows([50.0, 200.0]), "Kernel 4.6")
    assert table.notes == ("Kernel 4.6: geometric mean over 2 shapes: 100.0% of cuBLAS; lowest 50.0% "
                           "at 1×4096×4096",)
    assert sweep_table(_sweep_rows([float("nan")])).notes == ()


def test_sweep_comparison_table_side_by_side():
    from tcgemm.engine.report import sweep_comparison_table
    table = sweep_comparison_table({"Kernel 4.5": _sweep_rows([20.0, 80.0]), "Kernel 4.6": _sweep_rows([60.0, 90.0])})
    assert [c.name for c in table.columns][2:] == ["Kernel 4.5: % cuBLAS", "Kernel 4.6: % cuBLAS"]
    assert table.rows[0] == ("small M", "1×4096×4096", 20.0, 60.0)
    assert table.notes[1] == "Kernel 4.6: geometric mean over 2 shapes: 73.5% of cuBLAS; lowest 60.0% at 1×4096×4096"
    with pytest.raises(ValueError, match="same shapes"):
        sweep_comparison_table({"a": _sweep_rows([1.0]), "b": _sweep_rows([1.0], labels=["16x4096x4096"])})


def test_sweep_shapes_are_the_chapters():
    from tcgemm.engine.report import SWEEP_SHAPES
    assert [len(v) for v in SWEEP_SHAPES.values()] == [7, 4, 4]
    assert (1, 4096, 4096) in SWEEP_SHAPES["small M"] and (3000, 3000, 3000) in SWEEP_SHAPES["square"]


def test_tiles_and_plans_tables_read_the_model():
    from tcgemm.engine.plan import H100_SXM, TILES, plan
    from tcgemm.engine.report import plans_table, tiles_table
    tiles = tiles_table(H100_SXM)
    assert tiles.column("Tile") == [t.name for t in TILES] and tiles.column("Blocks per SM")[0] == 1
    plans = plans_table([(1, 4096, 4096), (8192, 8192, 8192)], H100_SXM)
    chosen = plan(1, 4096, 4096, H100_SXM)
    assert plans.rows[0][:3] == ("1×4096×4096", chosen.tile.name, chosen.splits)
    assert plans.rows[0][6] == pytest.approx(chosen.choice.seconds * 1e6)
    assert plans.rows[0][7] == pytest.approx(16 / 132)           # one 128x256 tile: 16 blocks on 132 SMs
    assert plans.rows[0][8] > 4 * plans.rows[0][6]
    assert plans.rows[1][7] == pytest.approx(64 * 32 / 132)
    assert plans.rows[1][0] == "8192³"
