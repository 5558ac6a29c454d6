"""Exercises checked against the hardware: the reader's answer (or the book's) compared with what the GPU
itself answers, read by a probe or by a kernel built from the answer.

Each chapter module of this folder maps exercise keys to a function that runs on the GPU and returns
(truth, against): a callable with the model's signature that gives the hardware's answer for a case, and
the words the report uses for it ("probe_mma on the NVIDIA H100"). `on_the_gpu(key, answer)` checks the
answer against it case by case, as tcgemm.practice.check does against the model.
"""
from __future__ import annotations

from typing import Callable

from tcgemm.practice import Report, exercise


def _hardware() -> dict[str, Callable]:
    from tcgemm.practice.gpu import banks, fragments, hopper, ldmatrix, pipelines, sgemm

    found = {}
    for module in (fragments, ldmatrix, banks, pipelines, sgemm, hopper):
        found.update(module.TRUTHS)
    return found


def checked_on_the_gpu(chapter: str | None = None) -> list[str]:
    """The keys of the exercises the GPU can check (of one chapter, or all)."""
    return [k for k in _hardware() if chapter is None or exercise(k).chapter == chapter]


def on_the_gpu(key: str, answer=None) -> Report:
    """`answer` (the book's solution when None) checked against what this GPU answers for exercise `key`."""
    hardware = _hardware()
    e = exercise(key)
    if key not in hardware:
        raise KeyError(f"exercise {key!r} has no hardware check; these have one: {', '.join(hardware)}")
    truth, against = hardware[key]()
    return e.check(e.solution if answer is None else answer, truth=truth, against=against)


__all__ = ["checked_on_the_gpu", "on_the_gpu"]
