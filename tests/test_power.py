"""The reading of a kernel run back to back (tcgemm.hopper.power): settled times, NVML's samples, the table;
NVML missing named as such. No GPU."""
from __future__ import annotations

import numpy as np
import pytest

from tcgemm.hopper.power import POWER_CAP, SLOWDOWN, Sample, Sustained, reason_names, sustained_figure, sustained_table


def series(label="k", fast_us=150.0, slow_us=200.0, switch_s=0.3, seconds=1.0, flop=1e9, reasons=POWER_CAP,
           settle_s=0.5, flushed=True):
    """Launches at fast_us until switch_s, then at slow_us; a sample every 20 ms with `reasons`."""
    times, t = [], 0.0
    while t < seconds:
        d = (fast_us if t < switch_s else slow_us) * 1e-6
        times.append(d)
        t += d
    launch = np.array(times)
    samples = tuple(Sample(s, 1980.0 if s < switch_s else 1500.0, 300.0 if s < switch_s else 690.0, 50.0,
                           0 if s < switch_s else reasons) for s in np.arange(0, seconds, 0.02))
    return Sustained(label, launch, np.cumsum(launch), samples, settle_s, 700.0, flop, flushed)


def test_reason_names():
    assert reason_names(0) == ()
    assert reason_names(POWER_CAP) == ("power cap",)
    assert reason_names(0x24) == ("power cap", "thermal slowdown (software)")
    with pytest.raises(ValueError, match="non-negative"):
        reason_names(-1)


def test_only_what_comes_after_settling_counts():
    s = series()
    assert s.time_us() == pytest.approx(200.0)
    assert s.tflops() == pytest.approx(1e9 / 200e-6 / 1e12)
    assert s.clock_mhz() == 1500.0 and s.power_w() == 690.0
    assert s.share(POWER_CAP) == 1.0 and s.share(SLOWDOWN) == 0.0 and not s.slowed()
    early = series(settle_s=0.0)
    assert early.time_us() == pytest.approx(200.0)             # most launches are slow ones anyway
    assert early.share(POWER_CAP) < 1.0                          # ... but the early samples count now


def test_bad_series_are_named():
    with pytest.raises(ValueError, match="run it longer"):
        series(seconds=0.4, settle_s=0.5)
    with pytest.raises(ValueError, match="equal-length"):
        Sustained("k", np.ones(3), np.ones(4), (), 0.0)
    with pytest.raises(ValueError, match="positive"):
        Sustained("k", np.array([1.0, -1.0]), np.array([1.0, 2.0]), (), 0.0)
    with pytest.raises(ValueError, match="settle_s"):
        Sustained("k", np.ones(2), np.array([1.0, 2.0]), (), -1.0)


def test_table_compares_against_the_reference_and_flags_slowdowns():
    runs = [series("cuBLAS", slow_us=200.0), series("5.6", slow_us=210.0),
            series("probe", flop=5e9, flushed=False), series("hot", reasons=0x20)]
    t = sustained_table(runs, reference="cuBLAS", caption="c")
    pct = t.column("% of cuBLAS")
    assert pct[0] == pytest.approx(100.0) and pct[1] == pytest.approx(100 * 200 / 210)
    assert pct[2] is None                                         # other work: no % of a GEMM
    assert t.column("samples at the power cap, %")[:3] == [100.0, 100.0, 100.0]
    assert t.column("samples slowed by heat or the board, %")[3] == 100.0
    assert "probe without" in t.notes[0]
    assert len(t.notes) == 2 and "hot" in t.notes[1] and "not this GPU's usual" in t.notes[1]
    assert len(sustained_table(runs[:2]).notes) == 1
    with pytest.raises(ValueError, match="not one of the runs"):
        sustained_table(runs, reference="nope")


def test_missing_nvml_is_named():
    from tcgemm.hopper.gpu.power import Nvml, NvmlError
    with pytest.raises(NvmlError, match="NVML .* could not be loaded"):
        Nvml("0000:00:00.0", library="libnvidia-ml-that-is-not-there.so.1")


def test_figure_draws_clock_and_power_of_each_run():
    fig = sustained_figure([series("cuBLAS"), series("probe", flushed=False)])
    clock_ax, power_ax = fig.axes
    assert [line.get_label() for line in clock_ax.get_lines()] == ["cuBLAS", "probe"]
    assert any(line.get_linestyle() == "--" for line in power_ax.get_lines())     # the limit
