"""Exercises: a function the reader writes, checked against the book's models. Pure package.

Each chapter's exercises live in a module of this folder named after the chapter (fragments, ldmatrix,
banks, pipelines, sgemm, hopper); `EXERCISES` gathers them by key. `check(key, answer)` (or an
Exercise's own `check`) calls the reader's function on every case the model knows and reports the first
cases where the two disagree: where (a lane, a register, an element), what the model expects, what the
answer gave, and a hint where the mistake is a typical one. `solution(key)` shows the book's own answer,
its source and its check. tcgemm.practice.gpu checks an answer against the hardware as well.
"""
from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass

from tcgemm.practice.exercise import Exercise, Mismatch, Report


def _gather() -> dict[str, Exercise]:
    from tcgemm.practice import banks, fragments, hopper, ldmatrix, pipelines, sgemm

    found = {}
    for module in (fragments, ldmatrix, banks, pipelines, sgemm, hopper):
        for exercise in module.EXERCISES:
            if exercise.key in found:
                raise ValueError(f"two exercises are called {exercise.key!r}")
            found[exercise.key] = exercise
    return found


def exercises(chapter: str | None = None) -> list[Exercise]:
    """Every exercise, or one chapter's (its notebook's name: "mma_fragments", "hopper", ...), in order."""
    every = list(_gather().values())
    return every if chapter is None else [e for e in every if e.chapter == chapter]


def exercise(key: str) -> Exercise:
    found = _gather()
    if key not in found:
        raise KeyError(f"no exercise {key!r}; the exercises are: {', '.join(found)}")
    return found[key]


def check(key: str, answer) -> Report:
    """The reader's `answer` to exercise `key`, checked against the model (see Exercise.check)."""
    return exercise(key).check(answer)


@dataclass(frozen=True)
class Solution:
    key: str
    source: str
    report: Report

    def __str__(self) -> str:
        return f"{self.source}\n{self.report}"

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        return f"```python\n{self.source}```\n\n{self.report._repr_markdown_()}"


def solution(key: str) -> Solution:
    """The book's answer to exercise `key`: its source, and its check against the model."""
    e = exercise(key)
    return Solution(key, textwrap.dedent(inspect.getsource(e.solution)), e.check(e.solution))


__all__ = ["Exercise", "Mismatch", "Report", "Solution", "check", "exercise", "exercises", "solution"]
