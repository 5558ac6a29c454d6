"""The %%gpu cell magic: without a usable GPU a gpu cell prints one line and "Run All" goes on; with
one, the body runs as a plain cell would (its value displayed, its error failing the cell). And every
gpu-tagged cell of the book starts with it."""
import json
import re

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from tcgemm import ROOT
from tcgemm.engine.gpu.device import gpu_unavailable_reason
from tcgemm.publish.magic import skip_line, too_old
from tcgemm.publish.notebook import GPU_TAG

LOAD = "%load_ext tcgemm.publish.magic"
# Stands in for a usable GPU inside the kernel (the magic looks the function up at each call).
PRETEND_GPU = "import tcgemm.engine.gpu.device as device\ndevice.gpu_unavailable_reason = lambda: None"
BOOK = sorted((ROOT / "book").glob("*.ipynb"))


def _run(*sources, allow_errors=False):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=allow_errors,
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    return nb.cells


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


@pytest.mark.skipif(gpu_unavailable_reason() is None, reason="a GPU is usable here: the cell would run")
def test_without_gpu_a_gpu_cell_prints_one_line_and_run_all_goes_on():
    cells = _run(LOAD, "%%gpu\nprint('ran on the GPU')\n", "print(6 * 7)")
    gpu_cell, cpu_cell = cells[1], cells[2]
    assert [o.output_type for o in gpu_cell.outputs] == ["stream"]
    assert _text(gpu_cell) == skip_line(gpu_unavailable_reason()) + "\n"
    assert _text(gpu_cell).count("\n") == 1 and "ran on the GPU" not in _text(gpu_cell)
    assert _text(cpu_cell) == "42\n"


def test_with_a_gpu_the_body_runs_like_a_plain_cell():
    cells = _run(LOAD, PRETEND_GPU, "%%gpu\nprint('body ran')\nvalue = 6 * 7\nvalue", "print(value + 1)")
    assert _text(cells[2]) == "body ran\n"
    results = [o for o in cells[2].outputs if o.output_type == "execute_result"]
    assert [r["data"]["text/plain"] for r in results] == ["42"]
    assert _text(cells[3]) == "43\n"


def test_a_cell_for_a_newer_gpu_says_so_in_one_line():
    """`%%gpu sm_90` (the Hopper chapter) runs its body on sm_90 and later; before, it prints one line."""
    older = PRETEND_GPU + "\nimport tcgemm.engine.gpu.compile as compile\ncompile.current_arch = lambda: 'sm_86'"
    cells = _run(LOAD, older, "%%gpu sm_90\nprint('ran')\n", "%%gpu sm_80\nprint('ran')\n")
    assert _text(cells[2]) == skip_line("this cell needs a GPU of sm_90 or later, and this one is sm_86") + "\n"
    assert _text(cells[3]) == "ran\n"
    assert too_old("sm_90", "sm_90") is None and too_old("sm_89", "sm_90") is None
    with pytest.raises(ValueError, match="looks like 'sm_90', got 'hopper'"):
        too_old("hopper", "sm_90")


def test_with_a_gpu_an_error_in_the_body_fails_the_cell_once():
    with pytest.raises(CellExecutionError, match="ZeroDivisionError"):
        _run(LOAD, PRETEND_GPU, "%%gpu\n1 / 0\n")
    cells = _run(LOAD, PRETEND_GPU, "%%gpu\n1 / 0\n", allow_errors=True)
    errors = [o for o in cells[2].outputs if o.output_type == "error"]
    assert [e.ename for e in errors] == ["ZeroDivisionError", "GpuCellError"]
    assert errors[1].traceback == ["GpuCellError: ZeroDivisionError: division by zero"]


def test_record_saves_a_magic_cell_and_refuses_its_error(tmp_path):
    from tcgemm.publish.record import RecordError, record_notebook

    path = tmp_path / "magic.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in (LOAD, PRETEND_GPU, "%%gpu\nprint('on the GPU')")]
    nbformat.write(nb, str(path))
    record_notebook(path, {"device": "test"})
    recorded = nbformat.read(str(path), as_version=4)
    assert _text(recorded.cells[2]) == "on the GPU\n"
    recorded.cells[2].source = "%%gpu\nraise RuntimeError('kernel failed')"
    nbformat.write(recorded, str(path))
    before = path.read_bytes()
    failed = r"""cell 2 \(first line: "raise RuntimeError\('kernel failed'\)"\) failed: GpuCellError: RuntimeError"""
    with pytest.raises(RecordError, match=failed):
        record_notebook(path, {"device": "test"})
    assert path.read_bytes() == before


def _code_cells(path):
    return [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("path", BOOK, ids=[p.name for p in BOOK])
def test_every_gpu_cell_starts_with_the_magic(path):
    cells = _code_cells(path)
    gpu_cells = [c for c in cells if GPU_TAG in c["metadata"].get("tags", [])]
    bare = [c["id"] for c in gpu_cells if not re.match(r"%%gpu( sm_\d+)?\n", "".join(c["source"]))]
    assert not bare, f"{path.name}: gpu-tagged cells {bare} do not start with %%gpu"
    if gpu_cells:
        first = "".join(cells[0]["source"]).splitlines()[0]
        assert first == LOAD, f"{path.name}: the first code cell must load the magic ({LOAD})"
