"""Read the recording stamp of a book notebook. Pure module: standard library only.

``make record`` (``python -m tcgemm.publish.record``) writes, into each notebook it executes on a GPU,
``metadata["tcgemm"]["recorded_on"]`` = {device, compute_capability, cuda_runtime, cuda_driver,
cupy, date}. The book shows those recorded outputs; a notebook cell can show its own stamp with
``print(stamp_text("this_notebook.ipynb"))``.
"""
from __future__ import annotations

import json
from pathlib import Path

GPU_TAG = "gpu"
"""Cell tag of the code cells that need a GPU: skipped by the tests where there is none."""

STAMP_KEYS = ("device", "compute_capability", "cuda_runtime", "cuda_driver", "cupy", "date")


def recorded_on(path) -> dict | None:
    """The ``recorded_on`` stamp of the notebook at ``path``, or None when it was never recorded."""
    with open(Path(path), encoding="utf-8") as f:
        metadata = json.load(f).get("metadata", {})
    stamp = metadata.get("tcgemm", {}).get("recorded_on")
    return dict(stamp) if stamp else None


def stamp_text(path) -> str:
    """Two lines saying on what machine the outputs of the notebook at ``path`` were recorded."""
    stamp = recorded_on(path)
    if stamp is None:
        return f"Outputs of {Path(path).name} not recorded yet:\nrun `make record` on a GPU machine."
    return "Outputs recorded on " + describe_stamp(stamp, sep=",\n")


def describe_stamp(stamp: dict, sep: str = ", ") -> str:
    """The machine and date of a ``recorded_on`` stamp, in words; ``sep`` between the device and
    the software."""
    cc = str(stamp.get("compute_capability", "?"))
    arch = "sm_" + cc.replace(".", "")
    return (
        f"{stamp.get('device', '?')} ({arch}){sep}"
        f"CUDA {stamp.get('cuda_runtime', '?')} runtime / {stamp.get('cuda_driver', '?')} driver, "
        f"CuPy {stamp.get('cupy', '?')}, {str(stamp.get('date', '?'))[:10]}"
    )
