"""tcgemm.numerics.gpu.data_types.table without a GPU: each type's errors beside its check, and the tolerance."""
from types import SimpleNamespace

import pytest

from tcgemm.engine.report import summarize


def test_the_table_shows_each_error_and_the_tolerance(monkeypatch):
    import tcgemm.numerics.gpu.data_types as dt
    monkeypatch.setattr(dt, "device_info", lambda: SimpleNamespace(name="Some GPU"))
    t = summarize([1e-4])
    rows = [dt.TypeResult("fp16 -> fp32", 2 * 4096**3, t, "PASS", t, "PASS", 650.0, 2.1e-7, 3.4e-7, 9.8e-5),
            dt.TypeResult("int8 -> int32", 2 * 4096**3, t, "exact", t, "exact", 1300.0, 0.0, 0.0, None),
            dt.TypeResult("e4m3 -> fp32", 2 * 4096**3, t, "PASS", t, "FAIL", 430.0, 1.0e-8, 2.3e-4, 9.8e-5),
            dt.TypeResult("e5m2 -> fp32", 2 * 4096**3, t, "PASS", None, "", 430.0, 4.0e-8, None, 9.8e-5)]
    table = dt.table(rows)
    assert table.column("Error") == ["2.1e-07 / 3.4e-07", "0 / 0", "1.0e-08 / 2.3e-04", "4.0e-08 / n/a"]
    assert table.column("Check") == ["PASS/PASS", "exact/exact", "PASS/FAIL", "PASS/n/a"]
    assert "the check's tolerance for it: 9.8e-05 (fp32 accumulator, K = 4096)." in table.notes[1]


def test_an_exact_check_has_no_error_unless_it_failed():
    import tcgemm.numerics.gpu.data_types as dt
    from tcgemm.engine.accuracy import compare_outputs, compare_exact
    import numpy as np
    ok = compare_exact(np.array([1, 2], dtype=np.int32), np.array([1, 2], dtype=np.int32))
    wrong = compare_exact(np.array([1, 3], dtype=np.int32), np.array([1, 2], dtype=np.int32))
    assert dt._error(ok) == 0.0 and dt._error(wrong) is None and dt._error(None) is None
    close = compare_outputs(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-7]), "float32", 64)
    assert dt._error(close) == pytest.approx(close.rel_fro) and close.rel_fro > 0
