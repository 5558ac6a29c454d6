"""An exercise and the report of its check. Pure module.

An Exercise knows its cases (the arguments the reader's function is called with, each with a label
saying where it is: "lane 5", "row 3, column 12"), the model's answer for each, and optionally hints:
functions that recognise a typical wrong answer and say what it is. Checking calls the answer on every
case, compares it with the model's, and keeps the first few disagreements.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

SHOWN = 3          # disagreements a report lists
WIDTH = 77         # the book's text column, tcgemm.style.TEXT_COLUMN_CHARS (style imports matplotlib)
UNANSWERED = "not answered yet: the function returns None on every case"


@dataclass(frozen=True)
class Mismatch:
    where: str
    expected: Any
    got: Any

    def __str__(self) -> str:
        return f"{self.where}: expected {self.expected!r}, got {self.got!r}"


@dataclass(frozen=True)
class Report:
    title: str
    checked: int
    wrong: int
    first: tuple[Mismatch, ...] = ()
    hint: str = ""
    error: str = ""
    against: str = "the model"    # what the answer was compared with

    @property
    def passed(self) -> bool:
        return not self.wrong and not self.error

    def lines(self) -> tuple[str, list[str]]:
        """The verdict, and the lines under it: the first disagreements and the hint."""
        if self.error:
            return f"FAIL {self.title}: {self.error}", []
        if self.passed:
            return f"PASS {self.title}: all {self.checked} cases agree with {self.against}", []
        items = [str(m) for m in self.first] + ([f"hint: {self.hint}"] if self.hint else [])
        return f"FAIL {self.title}: {self.wrong} of {self.checked} cases differ from {self.against}; the first:", items

    @property
    def text(self) -> str:
        """The report unwrapped: the verdict, then each item on a line of its own."""
        head, items = self.lines()
        return "\n".join([head] + [f"  {item}" for item in items])

    def __str__(self) -> str:
        """The report wrapped to the book's text column."""
        head, items = self.lines()
        out = textwrap.wrap(head, WIDTH, subsequent_indent="  ")
        for item in items:
            out += textwrap.wrap(item, WIDTH, initial_indent="  ", subsequent_indent="    ")
        return "\n".join(out)

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        head, items = self.lines()
        return "\n".join([head, ""] + [f"- {item}" for item in items]) if items else head


Case = tuple[tuple, str]          # (arguments, where)


@dataclass(frozen=True)
class Exercise:
    key: str                      # "<chapter module>.<name>", e.g. "fragments.a_owner"
    chapter: str                  # the notebook it belongs to (book/<chapter>.ipynb)
    title: str
    task: str                     # what the reader's function takes and returns (Markdown)
    cases: Callable[[], Iterable[Case]]
    model: Callable[..., Any]     # the model's answer for a case's arguments
    solution: Callable[..., Any]  # the book's own answer, written as a reader would
    hints: tuple[tuple[Callable[..., Any], str], ...] = field(default=())   # (a typical wrong answer, what it is)
    same: Callable[[Any, Any], bool] = staticmethod(lambda a, b: a == b)

    def check(self, answer, truth: Callable[..., Any] | None = None, against: str = "the model") -> Report:
        """Call `answer` on every case; the report lists the first SHOWN disagreements with the model (or
        with `truth`, e.g. what the hardware answered, named by `against`), and names the mistake where
        the wrong answers match one of `hints` on every case they get wrong."""
        if not callable(answer):
            return Report(self.title, 0, 0, error=f"the answer must be a function, got {type(answer).__name__}")
        truth = self.model if truth is None else truth
        cases = list(self.cases())
        wrong, first = 0, []
        got_by_case = []
        for args, where in cases:
            try:
                got = _plain(answer(*args))
            except Exception as exc:     # the reader's code: say what it raised, and where
                return Report(self.title, len(cases), 1, error=f"{where}: the answer raised "
                                                                    f"{type(exc).__name__}: {exc}", against=against)
            expected = _plain(truth(*args))
            got_by_case.append((args, got))
            if not self.same(got, expected):
                wrong += 1
                if len(first) < SHOWN:
                    first.append(Mismatch(where, expected, got))
        if wrong == len(cases) and all(got is None for _, got in got_by_case):
            return Report(self.title, len(cases), wrong, error=UNANSWERED, against=against)
        return Report(self.title, len(cases), wrong, tuple(first), self._hint(got_by_case) if wrong else "",
                      against=against)

    def _hint(self, got_by_case) -> str:
        for typical, what in self.hints:
            if all(self.same(got, _plain(typical(*args))) for args, got in got_by_case):
                return what
        return ""


def _plain(value):
    """Numbers, tuples and lists as plain Python (numpy scalars and arrays too), to compare and to show."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    return value
