"""tcgemm.publish.notebook (reading the stamp) and tcgemm.publish.record's stamp, on made-up files in tmp_path."""
import json
from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from tcgemm.engine.gpu.device import gpu_available
from tcgemm.publish.notebook import STAMP_KEYS, recorded_on, stamp_text
from tcgemm.style import TEXT_COLUMN_CHARS
from tcgemm.publish.record import main, stamp_from

STAMP = {
    "device": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "cuda_runtime": "13.0",
    "cuda_driver": "13.0", "cupy": "14.2.0", "date": "2026-11-22T10:00:00+00:00",
}


def write_nb(path, metadata):
    path.write_text(json.dumps({"cells": [], "metadata": metadata, "nbformat": 4,
                                "nbformat_minor": 5}))
    return path


def test_recorded_on_reads_the_stamp(tmp_path):
    nb = write_nb(tmp_path / "a.ipynb", {"tcgemm": {"recorded_on": STAMP}})
    assert recorded_on(nb) == STAMP


def test_recorded_on_is_none_without_stamp(tmp_path):
    assert recorded_on(write_nb(tmp_path / "a.ipynb", {})) is None
    assert recorded_on(write_nb(tmp_path / "b.ipynb", {"tcgemm": {}})) is None


def test_stamp_text(tmp_path):
    nb = write_nb(tmp_path / "a.ipynb", {"tcgemm": {"recorded_on": STAMP}})
    assert stamp_text(nb) == ("Outputs recorded on NVIDIA H100 80GB HBM3 (sm_90),\nCUDA 13.0 runtime"
                              " / 13.0 driver, CuPy 14.2.0, 2026-11-22")


def test_stamp_text_without_stamp(tmp_path):
    text = stamp_text(write_nb(tmp_path / "mma_fragments.ipynb", {}))
    assert "not recorded" in text and "make record" in text
    assert max(len(line) for line in text.splitlines()) <= TEXT_COLUMN_CHARS


def test_stamp_from_device_info():
    info = SimpleNamespace(name="NVIDIA H100 80GB HBM3", compute_capability="90",
                           cuda_runtime="13.0", cuda_driver="13.0", cupy_version="14.2.0")
    when = datetime(2026, 11, 22, 10, 0, tzinfo=timezone.utc)
    stamp = stamp_from(info, now=when)
    assert tuple(stamp) == STAMP_KEYS
    assert stamp == STAMP
    assert stamp_from(SimpleNamespace(**{**vars(info), "compute_capability": "120"}),
                      now=when)["compute_capability"] == "12.0"


def test_record_refuses_missing_notebook(tmp_path, capsys):
    assert main([str(tmp_path / "nope.ipynb")]) == 2
    assert "no such notebook" in capsys.readouterr().err


@pytest.mark.skipif(gpu_available(), reason="this checks the refusal where there is no GPU")
def test_record_refuses_without_gpu_and_leaves_the_file(tmp_path, capsys):
    nb = write_nb(tmp_path / "a.ipynb", {})
    before = nb.read_bytes()
    assert main([str(nb)]) == 1
    assert "GPU" in capsys.readouterr().err
    assert nb.read_bytes() == before


@pytest.mark.gpu
def test_record_names_the_failing_cell_and_leaves_the_file(tmp_path, capsys):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell("x = 1"), new_code_cell("raise ValueError('boom')")],
                      metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                               "language": "python"}})
    path = tmp_path / "bad.ipynb"
    nbformat.write(nb, str(path))
    before = path.read_bytes()
    assert main([str(path)]) == 1
    err = capsys.readouterr().err
    assert "bad.ipynb" in err and "cell 1" in err and "boom" in err
    assert path.read_bytes() == before


@pytest.mark.gpu
def test_record_stamps_then_executes(tmp_path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    source = "from tcgemm.publish.notebook import recorded_on\nprint(recorded_on('ok.ipynb')['device'])"
    nb = new_notebook(cells=[new_code_cell(source)],
                      metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                               "language": "python"}})
    path = tmp_path / "ok.ipynb"
    nbformat.write(nb, str(path))
    assert main([str(path)]) == 0
    done = nbformat.read(str(path), as_version=4)
    stamp = done.metadata["tcgemm"]["recorded_on"]
    assert tuple(stamp) == STAMP_KEYS
    assert done.cells[0].outputs[0]["text"].strip() == stamp["device"]
