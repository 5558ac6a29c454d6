"""The `%%gpu` cell magic of the book's notebooks: `%load_ext tcgemm.publish.magic` in the first code cell.

Every cell tagged "gpu" starts with `%%gpu`. Where a GPU is usable the magic runs the cell's body
as if the line were not there (same outputs, and an error in the body fails the cell, so `make
record` and nbval still see it); where none is, it prints one line saying what is missing and what
to do, so JupyterLab's "Run All" goes on to the CPU cells. Importing this module imports no CuPy.
"""
from __future__ import annotations

RUN_IT_YOURSELF = "see 'Run it yourself' in the book (book/run_it_yourself.md)"


class GpuCellError(Exception):
    """The body of a %%gpu cell raised; its traceback is already shown above."""

    def _render_traceback_(self):  # IPython shows this instead of a second traceback
        return [f"{type(self).__name__}: {self}"]


def skip_line(reason: str) -> str:
    """The line a %%gpu cell prints where there is no usable GPU."""
    return f"skipped: {reason}. The CPU cells still run; {RUN_IT_YOURSELF}."


def gpu(line: str, cell: str):
    """%%gpu: run this cell on the GPU, or say in one line why it cannot run here."""
    from IPython import get_ipython

    from tcgemm.gpu.device import gpu_unavailable_reason

    reason = gpu_unavailable_reason()
    if reason is not None:
        print(skip_line(reason))
        return
    result = get_ipython().run_cell(cell, store_history=False)
    if not result.success:
        error = result.error_before_exec or result.error_in_exec
        raise GpuCellError(f"{type(error).__name__}: {error}")


def load_ipython_extension(ipython):
    ipython.register_magic_function(gpu, magic_kind="cell", magic_name="gpu")
    # The book's figures are pyplot-free Figure objects: show them as PNG even in a notebook that
    # never imports pyplot (which is what would otherwise install the inline backend's formatter).
    from IPython.core.pylabtools import select_figure_formats
    select_figure_formats(ipython, {"png"})
