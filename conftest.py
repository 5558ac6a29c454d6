"""Test-suite wiring shared by tests/ and the notebooks of book/ (run through nbval).

Without a CUDA GPU:
  * tests marked ``@pytest.mark.gpu`` are skipped, with the reason (no driver, a driver too old
    for the installed CUDA wheels, no CuPy, ...);
  * notebook cells tagged ``gpu`` are skipped; every other cell runs and its outputs are
    compared with the recorded ones (the GPU cells are leaves, see tests/test_notebooks_recorded.py).
With a GPU everything runs, but the outputs of ``gpu`` cells are not compared (timings change from
run to run), as if the cells were tagged ``nbval-ignore-output``.
"""
from pathlib import Path

import pytest

from tcgemm.publish.notebook import GPU_TAG

ROOT = Path(__file__).resolve().parent
SANITIZE_FILE = ROOT / "tests" / "nbval_sanitize.cfg"


def pytest_configure(config):
    # nbval opens the sanitize file relative to the working directory: give it an absolute path.
    if hasattr(config.option, "nbval_sanitize_with") and not config.option.nbval_sanitize_with:
        config.option.nbval_sanitize_with = str(SANITIZE_FILE)


def _notebook_cell_type():
    try:
        from nbval.plugin import IPyNbCell
    except ImportError:  # nbval not installed: there are no notebook items
        return None
    return IPyNbCell


def _skip_dark_figures(items, cell_type) -> None:
    """nbval compares no PNG (it skips image/png), and so not the dark variant of a figure either
    (tcgemm.dark_mode.DARK_MIME): a picture is drawn a little differently from machine to machine."""
    files = {id(i.parent): i.parent for i in items if cell_type is not None and isinstance(i, cell_type)}
    if files:
        from tcgemm.dark_mode import DARK_MIME

        for notebook in files.values():
            if DARK_MIME not in notebook.skip_compare:
                notebook.skip_compare = (*notebook.skip_compare, DARK_MIME)


def _is_gpu_cell(item, cell_type) -> bool:
    if cell_type is None or not isinstance(item, cell_type):
        return False
    tags = item.cell.metadata.get("tags", [])
    return isinstance(tags, list) and GPU_TAG in tags


def pytest_collection_modifyitems(config, items):
    cell_type = _notebook_cell_type()
    _skip_dark_figures(items, cell_type)
    gpu_items = [i for i in items if i.get_closest_marker("gpu") or _is_gpu_cell(i, cell_type)]
    if not gpu_items:
        return
    from tcgemm.engine.gpu.device import gpu_unavailable_reason

    why_not = gpu_unavailable_reason()
    have_gpu = why_not is None
    for item in gpu_items:
        notebook_cell = _is_gpu_cell(item, cell_type)
        if have_gpu:
            if notebook_cell:
                item.options["check"] = False  # what nbval-ignore-output sets
        elif notebook_cell:
            item.add_marker(pytest.mark.skip(
                reason=f"{Path(str(item.fspath)).name} {item.name} is tagged '{GPU_TAG}': {why_not}"))
        else:
            item.add_marker(pytest.mark.skip(reason=why_not))
