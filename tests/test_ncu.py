"""tcgemm.engine.gpu.ncu without a GPU: its metric table, the retry logic and the readings tables with a fake
ncu, and the reader of ncu's source page."""
import math
import re
import subprocess
from pathlib import Path

import pytest

from tcgemm.engine.gpu import ncu
from tcgemm.smem.gpu.predictions import predicted_vs_measured
from tcgemm.smem.kernel_smem import OPS, predict


def test_metric_table_is_consistent():
    assert set(ncu.PREDICTED_BY) <= set(ncu.METRICS) and ncu.OPTIONAL <= set(ncu.METRICS)
    assert len(set(ncu.METRICS.values())) == len(ncu.METRICS)
    for name, (ops, quantity) in ncu.PREDICTED_BY.items():
        assert set(ops) <= set(OPS) and quantity in ("requests", "wavefronts", "conflicts"), name
    for metric in ncu.METRICS.values():
        assert re.fullmatch(r"[a-z0-9]+__[a-z0-9_]+\.(sum|max)", metric), metric


def fake_ncu(monkeypatch, missing=(), name_it=True, values=None, units=None, kernel="k"):
    """A fake _run: rejects any run that asks for a metric in `missing` (naming it in its message
    when `name_it`), else prints ncu's raw CSV with `values` (default 1.0 each) and `units` (default
    none) for one kernel named `kernel`."""
    calls = []

    def run(_ncu, metrics, key, M, N, K):
        calls.append(list(metrics))
        bad = [m for m in metrics if m in missing]
        if bad:
            said = f"==ERROR== Failed to find metric regex:^{bad[0].split('.')[0]}$" if name_it else "==ERROR== failed"
            return subprocess.CompletedProcess([], 1, stdout="", stderr=said)
        header = ",".join(f'"{c}"' for c in ["ID", "Kernel Name", *metrics])
        units_row = ",".join(['""', '""', *(f'"{(units or {}).get(m, "")}"' for m in metrics)])
        row = ",".join(['"0"', f'"{kernel}"', *(f'"{(values or {}).get(m, 1.0):,}"' for m in metrics)])
        return subprocess.CompletedProcess([], 0, stdout=f"==PROF== x\n{header}\n{units_row}\n{row}\n", stderr="")

    monkeypatch.setattr(ncu, "find_ncu", lambda: "ncu")
    monkeypatch.setattr(ncu, "_run", run)
    return calls


def test_profile_drops_the_missing_optional_metrics_it_is_told_of(monkeypatch):
    gone = ncu.METRICS["smem_ldsm_wavefronts"]
    calls = fake_ncu(monkeypatch, missing={gone})
    counters = ncu.profile("k2.0", 64, 64, 32)
    assert counters["dropped"] == ["smem_ldsm_wavefronts"] and len(calls) == 2
    assert math.isnan(counters["smem_ldsm_wavefronts"])
    assert counters["smem_ldsm_conflicts"] == 1.0   # ..._op_ldsm is not ..._op_ld: kept
    assert counters["smem_ld_wavefronts"] == 1.0 and counters["kernels"] == ["k"]


def test_profile_drops_every_optional_metric_when_not_told_which(monkeypatch):
    calls = fake_ncu(monkeypatch, missing={ncu.METRICS["gmma"]}, name_it=False)
    counters = ncu.profile("k1.0", 64, 64, 32)
    assert sorted(counters["dropped"]) == sorted(ncu.OPTIONAL) and len(calls) == 2
    assert not set(calls[1]) & {ncu.METRICS[n] for n in ncu.OPTIONAL}
    assert counters["hmma"] == 1.0


def test_profile_gives_up_when_a_required_metric_is_missing(monkeypatch):
    calls = fake_ncu(monkeypatch, missing={ncu.METRICS["hmma"]})
    with pytest.raises(ncu.NcuUnavailable, match="did not profile"):
        ncu.profile("k1.0", 64, 64, 32)
    assert len(calls) == 2   # once with everything, once without the optional metrics


def test_predicted_vs_measured_sets_each_counter_beside_its_prediction(monkeypatch):
    counts = predict("h1", 64, 64, 32, arch="sm_90")
    values = {ncu.METRICS["smem_ld_wavefronts"]: 7.0}
    fake_ncu(monkeypatch, missing={ncu.METRICS["smem_ldsm_inst_sass"]}, values=values)
    rows = {r.counter: r for r in predicted_vs_measured("h1", 64, 64, 32, arch="sm_90")}
    assert set(rows) == set(ncu.PREDICTED_BY)
    assert rows["smem_ld_wavefronts"].predicted == counts.ld.wavefronts + counts.ldsm.wavefronts
    assert rows["smem_ld_wavefronts"].measured == 7.0
    assert rows["smem_ldsm_inst"].predicted == counts.ldsm.requests
    assert rows["smem_st_conflicts"].metric == ncu.METRICS["smem_st_conflicts"]
    assert math.isnan(rows["smem_ldsm_inst_sass"].measured)


def test_stall_samples_by_opcode_reads_ncus_source_page():
    """Six rows of a real `ncu --page source --csv` export (Kernel 4.2 on the H100), summed by opcode."""
    text = (Path(__file__).parent / "data" / "ncu_source_page.csv").read_text()
    by_op = ncu.stall_samples_by_opcode(text)
    assert set(by_op) == {"LDSM", "HMMA", "LDGSTS", "STG"}
    assert by_op["STG"] == {"lg": 128 + 37, "not_selected": 2}
    assert by_op["LDGSTS"] == {"dispatch": 133, "selected": 23, "wait": 17}   # "@P0" predicate skipped
    assert by_op["HMMA"]["math"] == 184 + 366 and by_op["HMMA"]["short_sb"] == 128
    assert by_op["LDSM"] == {"barrier": 37, "not_selected": 1}


def test_chapter_readings_are_well_formed():
    for readings in (ncu.TENSOR_PIPE, ncu.ISSUE, ncu.MMA_AND_LOADS, ncu.DATA_PATH, ncu.WGMMA_PATH, ncu.L2_BYTES):
        labels = [r.label for r in readings]
        assert len(set(labels)) == len(labels) and len({r.metric for r in readings}) == len(readings)
        for r in readings:
            assert re.fullmatch(r"[a-z0-9]+__[a-z0-9_]+(\.[a-z0-9_]+)+", r.metric), r.metric
            assert r.scale > 0 and format(1.5, r.fmt)
    assert ncu.stall_readings(("barrier",))[0].metric == \
        "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"


def test_read_scales_each_value_and_reads_a_missing_metric_as_nan(monkeypatch):
    lost = ncu.stall_readings(("lg_throttle",))[0]
    calls = fake_ncu(monkeypatch, missing={lost.metric}, values={ncu.SM_CLOCK.metric: 1.755e9})
    got = ncu.read("k4.5", ncu.TENSOR_PIPE, 256, 256, 256)
    assert list(got) == [r.label for r in ncu.TENSOR_PIPE] and len(calls) == 2
    assert got[ncu.SM_CLOCK.label] == pytest.approx(1.755) and math.isnan(got[lost.label])
    table = ncu.readings_table({"k4.5": got, "s2": got}, ncu.TENSOR_PIPE, caption="x")
    assert [c.name for c in table.columns] == ["counter", "k4.5", "s2"]
    assert table.rows[1] == (ncu.SM_CLOCK.label, "1.75", "1.75")   # 1.755 -> .2f
    assert table.column("k4.5")[[r.label for r in ncu.TENSOR_PIPE].index(lost.label)] is None
    assert "n/a" in str(table) and table.alignments()[1:] == ["right", "right"]



@pytest.mark.parametrize("unit, shown", [("Kbyte/block", "213.2 KB"), ("byte/block", "0.2 KB")])
def test_launch_table_names_the_kernel_and_reads_shared_memory_in_its_unit(monkeypatch, unit, shown):
    smem = ncu.LAUNCH["dynamic shared memory per block"]
    fake_ncu(monkeypatch, values={smem: 213.16, ncu.LAUNCH["grid (blocks)"]: 132.0},
             units={smem: unit}, kernel="nvjet_sm90_hss_128x256_64x4_2x1_v_bz_coopA_TNN")
    table = ncu.launch_table(["cublas"], 64, 64, 64)
    column = dict((row[0], row[1]) for row in table.rows)
    assert column["kernel"] == "nvjet_sm90_hss_128x256_64x4_2x1_v_bz_coopA_TNN"
    assert column["grid (blocks)"] == "132" and column["dynamic shared memory per block"] == shown


def test_against_ceiling_text_splits_the_rate_into_clock_and_busy_pipe():
    from tcgemm.engine.gpu.ncu import CEILING, SM_CLOCK, TENSOR_PIPE, against_ceiling_text
    from tcgemm.style import TEXT_COLUMN_CHARS

    busy, clock = TENSOR_PIPE[0].label, SM_CLOCK.label
    values = {CEILING: {busy: 100.0, clock: 2.0}, "k5.0": {busy: 75.0, clock: 1.8}}
    text = against_ceiling_text(values, "k5.0")
    assert "clock 0.900 x tensor pipe busy 0.750 = 0.675" in text.replace("\n", " ")
    assert "would reach 0.900" in text.replace("\n", " ")
    assert max(len(line) for line in text.splitlines()) <= TEXT_COLUMN_CHARS
