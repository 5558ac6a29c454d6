"""Record the outputs of book notebooks on a GPU machine: ``python -m tcgemm.publish.record NOTEBOOK...``.

For each notebook, in order:
  1. stamp ``metadata["tcgemm"]["recorded_on"]`` with the GPU, CUDA and CuPy versions and the date,
     and save the notebook (so a cell can read and show the stamp of the run that is recording it);
  2. execute it top to bottom with nbclient (kernel python3, cwd = the notebook's folder,
     widget state stored so the book can render ipywidgets, every figure recorded with its dark
     variant: tcgemm.publish.dark_png);
  3. write the executed notebook back, in the form JupyterLab keeps (tcgemm.publish.lab_form: the
     kernelspec JupyterLab writes, integral floats as ints), so that it opens unmodified in `make lab`.
If a cell raises, the notebook file is put back as it was (no stamp without the outputs it vouches
for) and the command exits non-zero, naming the notebook and the cell.
"""
from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from tcgemm.publish.lab_form import jupyterlab_form
from tcgemm.publish.notebook import describe_stamp

KERNEL_NAME = "python3"
DARK_FIGURES_EXTENSION = "tcgemm.publish.dark_png"
CELL_TIMEOUT_S = 600


class RecordError(RuntimeError):
    """A notebook could not be recorded; the message says which one and why."""


def stamp_from(info, now: datetime | None = None) -> dict:
    """The ``recorded_on`` dict for a ``tcgemm.engine.gpu.device.DeviceInfo``."""
    cc = str(info.compute_capability)
    now = now or datetime.now(timezone.utc)
    stamp = {
        "device": info.name,
        "compute_capability": f"{cc[:-1]}.{cc[-1]}",
        "cuda_runtime": info.cuda_runtime,
        "cuda_driver": info.cuda_driver,
        "cupy": info.cupy_version,
        "date": now.astimezone(timezone.utc).isoformat(timespec="seconds"),
    }
    return stamp


def current_stamp() -> dict:
    """Stamp of this machine's GPU; RecordError when there is none (recording is GPU-only)."""
    from tcgemm.errors import NoGPUError
    from tcgemm.engine.gpu.device import device_info

    try:
        info = device_info()
    except NoGPUError as exc:
        raise RecordError(
            f"make record runs the notebooks on a GPU and stamps them with it, but: {exc}"
        ) from exc
    return stamp_from(info)


def _describe(nb, index: int | None) -> str:
    if index is None:
        return "before its first cell"
    code = nb.cells[index].source.removeprefix("%%gpu\n")  # name the cell by its own first line
    first = (code.strip().splitlines() or [""])[0]
    return f"cell {index} (first line: {first!r})"


def record_notebook(path: Path, stamp: dict) -> float:
    """Stamp, execute and save one notebook. Returns the wall time of the execution in seconds."""
    import nbformat
    from nbclient import NotebookClient

    original = path.read_bytes()
    nb = nbformat.reads(original.decode("utf-8"), as_version=4)
    nb.metadata.setdefault("tcgemm", {})["recorded_on"] = stamp
    nbformat.write(jupyterlab_form(nb), str(path))

    started = {"index": None}

    def on_cell_start(cell, cell_index):
        started["index"] = cell_index

    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        kernel_name=KERNEL_NAME,
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=True,
        record_timing=False,  # no per-cell timestamps: smaller diffs between recordings
        on_cell_start=on_cell_start,
        # Every figure recorded with its dark variant, for the book's dark mode (tcgemm.dark_mode),
        # in the notebooks that load no tcgemm extension too.
        extra_arguments=[f"--InteractiveShellApp.extra_extensions={DARK_FIGURES_EXTENSION}"],
    )
    t0 = time.perf_counter()
    try:
        client.execute()
    except Exception as exc:
        path.write_bytes(original)
        where = _describe(nb, started["index"])
        detail = f"{getattr(exc, 'ename', type(exc).__name__)}: {getattr(exc, 'evalue', exc)}"
        raise RecordError(f"{path}: {where} failed: {detail}\n"
                          f"{path} was left as it was before recording.") from exc
    seconds = time.perf_counter() - t0
    nbformat.write(jupyterlab_form(nb), str(path))  # language_info: the recording kernel's (nbclient)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tcgemm.publish.record",
        description="Execute book notebooks on this machine's GPU and save their outputs, stamped.",
    )
    parser.add_argument("notebooks", nargs="+", type=Path, metavar="NOTEBOOK")
    args = parser.parse_args(argv)

    missing = [str(p) for p in args.notebooks if not p.is_file()]
    if missing:
        print(f"record: no such notebook: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        stamp = current_stamp()
        print(f"record: {describe_stamp(stamp)}", flush=True)
        for path in args.notebooks:
            seconds = record_notebook(path.resolve(), stamp)
            print(f"record: {path}  {seconds:.1f} s", flush=True)
    except RecordError as exc:
        print(f"record: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
