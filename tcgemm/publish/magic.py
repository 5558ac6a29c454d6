"""The `%%gpu` cell magic of the book's notebooks: `%load_ext tcgemm.publish.magic` in the first code cell.

Every cell tagged "gpu" starts with `%%gpu`. Where a GPU is usable the magic runs the cell's body
as if the line were not there (same outputs, and an error in the body fails the cell, so `make
record` and nbval still see it); where none is, it prints one line saying what is missing and what
to do, so JupyterLab's "Run All" goes on to the CPU cells. `%%gpu sm_90` runs the body only on a GPU
of that architecture or a later one (the Hopper chapter's TMA and wgmma), and otherwise says so in
one line. The `%%kernel` magic is the kernel workbench (tcgemm.practice.workbench). Importing this module
imports no CuPy.
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


def too_old(needed: str, arch: str) -> str | None:
    """Why a cell that needs architecture `needed` ("sm_90") cannot run on a GPU of `arch`, or None."""
    for name in (needed, arch):
        if not (name.startswith("sm_") and name[3:].isdigit()):
            raise ValueError(f"an architecture looks like 'sm_90', got {name!r}")
    if int(arch[3:]) >= int(needed[3:]):
        return None
    return f"this cell needs a GPU of {needed} or later, and this one is {arch}"


def gpu(line: str, cell: str):
    """%%gpu [sm_XY]: run this cell on the GPU (of sm_XY or later), or say in one line why it cannot
    run here."""
    from IPython import get_ipython

    from tcgemm.engine.gpu.device import gpu_unavailable_reason

    reason = gpu_unavailable_reason()
    if reason is None and line.strip():
        from tcgemm.engine.gpu.compile import current_arch
        reason = too_old(line.strip(), current_arch())
    if reason is not None:
        print(skip_line(reason))
        return
    result = get_ipython().run_cell(cell, store_history=False)
    if not result.success:
        error = result.error_before_exec or result.error_in_exec
        raise GpuCellError(f"{type(error).__name__}: {error}")


def kernel(line: str, cell: str):
    """%%kernel like=k3.1 [against=KEY] [size=M[xNxK]] [arch=sm_XY] [rounds=R]: the cell's CUDA source in
    place of a book kernel's, compiled, its SASS summed up, and with a GPU checked and timed beside that
    kernel and cuBLAS (the workbench: tcgemm.practice.workbench). Its errors at the cell's line numbers, the
    %%kernel line being line 1."""
    from tcgemm.practice.gpu.workbench import run

    return run(line, cell, line_offset=1)


def load_ipython_extension(ipython):
    ipython.register_magic_function(gpu, magic_kind="cell", magic_name="gpu")
    ipython.register_magic_function(kernel, magic_kind="cell", magic_name="kernel")
    # The book's figures are pyplot-free Figure objects: show them as PNG even in a notebook that
    # never imports pyplot (which is what would otherwise install the inline backend's formatter).
    from IPython.core.pylabtools import select_figure_formats
    select_figure_formats(ipython, {"png"})
    # And record each one's dark variant for the book's dark mode.
    from tcgemm.publish.dark_png import add_dark_figures
    add_dark_figures(ipython.display_formatter)
