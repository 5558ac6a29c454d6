"""A results table that shows itself as an HTML <table> in notebooks and in the book, and as aligned
plain text in a terminal (`print`, `str`). Pure module.

Cells keep their values (numbers stay numbers); a column's `fmt` (a format spec such as ".1f" or ",")
turns numbers into text, None and NaN show as "n/a". Columns of numbers are right-aligned, others
left-aligned, unless a column says otherwise. The HTML carries no colours: it inherits the page's,
so it reads in light and dark themes, and long headers and names wrap to fit the text column.

The HTML never breaks a word: text wraps only at spaces, and a word longer than LONG_WORD characters
(an ncu metric, a PTX instruction) also after its '.' and '_' separators, and a compound after its
hyphen ("column-<wbr>major"); a word a browser would otherwise break elsewhere, at a hyphen or a slash
("fp16 -> fp32", "4.9e-06", "K-major", "PASS/FAIL"), is kept whole.

Checks stay out of the way without being hidden: a column marked `verdict` holds check results
("PASS ...", "FAIL: ...", "exact", "skipped ..."), and where the HTML folds them away, in a column
marked `detail` or in a table made with `collapse=True`, it shows one line that sums them up (every
FAIL named in it) and keeps them in a <details> block, closed until the reader opens it. The plain
text, `records()` and `column()` always hold every column and row.
"""
from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from numbers import Real

CSS_CLASS = "tcgemm-table"
MISSING = "n/a"
LONG_WORD = 24         # characters: a longer word may wrap after its '.' and '_' separators in HTML
MAX_LISTED = 3         # failed checks the one-line verdict quotes (then "and N more")

# Where a long word may wrap (<wbr>): after a '.', after a run of '_' (l1tex__data_..., CU_TENSOR_...).
_SEPARATOR = re.compile(r"(?<=\.)(?=.)|(?<=_)(?=[^_])")
# Where any word may wrap: after the hyphen of a compound of words of 3 letters or more (column-major,
# bit-exact), as in prose; never inside "->", "e-06", "K-major" or "16-byte".
_COMPOUND = re.compile(r"(?<=[^\W\d_]{3}-)(?=[^\W\d_]{3})")
# Characters that give a browser no break opportunity inside a word; a word with any other (a hyphen, a
# slash, '%', '|', a dash, '×', ...) is kept whole by a no-wrap span.
_UNBREAKABLE = re.compile(r"[\w.,:;'\"()<>&=+*#@$^~`]*")


@dataclass(frozen=True)
class Column:
    name: str
    fmt: str = ""                 # format spec for numbers, e.g. ".1f", ",.0f", "+.1f"
    align: str | None = None      # "left" or "right"; None: right for a column of numbers
    unit: str = ""                # appended to formatted numbers, e.g. "%"
    detail: bool = False          # HTML: shown only in the table's collapsed block, beside the rows' labels
    verdict: bool = False         # its values are check results: HTML sums them up in one line where folded

    def __post_init__(self):
        if self.align not in (None, "left", "right"):
            raise ValueError(f"align must be 'left', 'right' or None, got {self.align!r}")


class Verdict(str):
    """A check's verdict as a table shows it: a str equal to its text (so `records()`, `column()` and
    comparisons read it as that text), carrying the numbers behind it for the table's one-line summary:
    the relative error and its tolerance (None where there is none), and whether it was bit-exact."""

    def __new__(cls, text: str, error: float | None = None, tolerance: float | None = None,
                exact: bool = False):
        self = super().__new__(cls, text)
        self.error, self.tolerance, self.exact = error, tolerance, exact
        return self

    @classmethod
    def of(cls, result, text: str | None = None) -> "Verdict":
        """The verdict of a tcgemm.engine.accuracy result (a Check: relative Frobenius error and its tolerance; an
        ExactCheck: bit-exact), shown as `text` (default: the result's own str)."""
        text = str(result) if text is None else text
        if hasattr(result, "mismatches"):
            return cls(text, exact=bool(result.passed))
        error = getattr(result, "rel_fro", None)
        error = None if error is None or math.isnan(error) else float(error)
        return cls(text, error, getattr(result, "tol_fro", None))


def _is_number(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _outcome(value) -> str | None:
    """'pass', 'fail' or 'skipped' for a verdict cell; None for an empty one. Anything that neither
    passes nor says it was skipped counts as a failure: a verdict line never hides one."""
    text = "" if value is None else str(value).strip()
    if not text or text == MISSING:
        return None
    if "FAIL" in text.upper():
        return "fail"
    if text.startswith(("PASS", "exact")):
        return "pass"
    if text.lower().startswith("skipped"):
        return "skipped"
    return "fail"


def _word_html(word: str) -> str:
    """One word (no spaces), escaped: whole, or in pieces joined by <wbr>: after the hyphen of a compound,
    and when longer than LONG_WORD after its separators."""
    pieces = _SEPARATOR.split(word) if len(word) > LONG_WORD else [word]
    pieces = [q for p in pieces for q in _COMPOUND.split(p)]
    return "<wbr>".join(html.escape(p) if len(p) < 2 or _UNBREAKABLE.fullmatch(p)
                        else f'<span style="white-space:nowrap">{html.escape(p)}</span>' for p in pieces)


def _text_html(text: str, whole_words: bool = True) -> str:
    """Text that wraps only between words, and inside a long word only after its separators. With
    whole_words False (prose: captions, notes), only long words are treated."""
    if not whole_words:
        return "".join(_word_html(part) if part and not part.isspace() and len(part) > LONG_WORD
                       else html.escape(part) for part in re.split(r"(\s+)", text))
    return "".join(html.escape(part) if not part or part.isspace() else _word_html(part)
                   for part in re.split(r"(\s+)", text))


class Table:
    """Rows of values under named columns, with an optional caption (above) and notes (below).
    collapse: the HTML shows, under the caption, one line summing up the verdict columns, and the
    table itself only in a collapsed block (a table of checks). Notes that repeat are shown once."""

    def __init__(self, columns, rows, caption: str = "", notes=(), collapse: bool = False):
        self.columns = tuple(c if isinstance(c, Column) else Column(str(c)) for c in columns)
        self.rows = tuple(tuple(row) for row in rows)
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(f"row {i} has {len(row)} cells for {len(self.columns)} columns: {row!r}")
        self.caption = caption
        self.notes = tuple(dict.fromkeys((notes,) if isinstance(notes, str) else notes))
        self.collapse = collapse

    @staticmethod
    def cell_text(value, column: Column) -> str:
        if value is None or (_is_number(value) and math.isnan(value)):
            return MISSING
        if _is_number(value):
            return format(value, column.fmt) + column.unit
        return str(value)

    def text_rows(self) -> list[list[str]]:
        """Every cell as the text both forms show."""
        return [[self.cell_text(v, c) for v, c in zip(row, self.columns)] for row in self.rows]

    def alignments(self) -> list[str]:
        """'right' for a column whose cells are all numbers or missing (and not all missing)."""
        out = []
        for i, column in enumerate(self.columns):
            if column.align:
                out.append(column.align)
                continue
            values = [row[i] for row in self.rows if row[i] is not None]
            out.append("right" if values and all(_is_number(v) for v in values) else "left")
        return out

    def column(self, name: str) -> list:
        """The values of the column called `name`."""
        names = [c.name for c in self.columns]
        if name not in names:
            raise KeyError(f"no column {name!r}; columns: {names}")
        i = names.index(name)
        return [row[i] for row in self.rows]

    def records(self) -> list[dict]:
        """Each row as a dict from column name to value (what a reading cell quotes)."""
        names = [c.name for c in self.columns]
        return [dict(zip(names, row)) for row in self.rows]

    # ---- the verdict line ------------------------------------------------------------------------

    def _row_label(self, row) -> str:
        """A row named by its label cells (columns that are neither verdicts, details nor formatted
        numbers): text as it is, a number after its column's name ("Run 2", "α 1")."""
        parts = []
        for value, column in zip(row, self.columns):
            if column.verdict or column.detail or column.fmt or column.unit or value is None or value == "":
                continue
            parts.append(f"{column.name} {value}" if _is_number(value) else str(value))
        return ", ".join(parts)

    def verdict(self) -> str:
        """One line that sums up the verdict columns: how many checks PASS, the largest relative error
        and its tolerance (from Verdict values), how many were bit-exact; or which ones FAIL. '' for a
        table without a verdict column."""
        columns = [i for i, c in enumerate(self.columns) if c.verdict]
        if not columns:
            return ""
        cells = [(row, self.columns[i], row[i], _outcome(row[i])) for row in self.rows for i in columns]
        cells = [cell for cell in cells if cell[3] is not None]
        if not cells:
            return "No checks."
        passed = [value for _, _, value, outcome in cells if outcome == "pass"]
        failed = [(row, column, value) for row, column, value, outcome in cells if outcome == "fail"]
        skipped = sum(outcome == "skipped" for *_, outcome in cells)
        n = len(cells)
        checks = "check" if n == 1 else "checks"
        if failed:
            def where(row, column):
                label = self._row_label(row)
                return f"{label} ({column.name})" if len(columns) > 1 else label
            listed = [f"{where(row, column)}: {value}" for row, column, value in failed[:MAX_LISTED]]
            more = len(failed) - MAX_LISTED
            line = (f"{len(failed)} of {n} {checks} FAIL: " + "; ".join(listed)
                    + (f"; and {more} more" if more > 0 else ""))
            rest = [f"{len(passed)} PASS" if passed else "", f"{skipped} skipped" if skipped else ""]
            rest = [r for r in rest if r]
            return line + (f". The other {' and '.join(rest)}." if rest else ".")
        line = ("The one check: PASS" if n == 1 else f"All {n} checks PASS" if not skipped else
                f"{len(passed)} of {n} {checks} PASS, {skipped} skipped")
        measured = [v for v in passed if getattr(v, "error", None) is not None]
        exact = [v for v in passed if getattr(v, "exact", False) or "exact" in str(v).lower()]
        if measured:
            largest = max(measured, key=lambda v: v.error)
            line += f"; largest relative error {largest.error:.1e}"
            if largest.tolerance:
                line += f" (tolerance {largest.tolerance:.0e})"
                with_tolerance = [v for v in measured if v.tolerance]
                nearest = max(with_tolerance, key=lambda v: v.error / v.tolerance)
                if nearest.error / nearest.tolerance > largest.error / largest.tolerance:
                    line += (f"; nearest its tolerance: {nearest.error:.1e} "
                             f"(tolerance {nearest.tolerance:.0e})")
        if exact:
            line += (", bit-exact" if len(exact) == len(passed) and not measured
                     else f"; {len(exact)} bit-exact")
        return line + "."

    def _hides_verdicts(self) -> bool:
        return any(c.verdict and (c.detail or self.collapse) for c in self.columns)

    # ---- the two forms -----------------------------------------------------------------------------

    def __str__(self) -> str:
        header = [c.name for c in self.columns]
        body = self.text_rows()
        widths = [max(len(cell) for cell in cells) for cells in zip(header, *body)]
        align = self.alignments()

        def line(cells):
            return "  ".join(cell.rjust(w) if a == "right" else cell.ljust(w)
                             for cell, w, a in zip(cells, widths, align)).rstrip()

        lines = [self.caption] if self.caption else []
        lines += [line(header), line(["-" * w for w in widths]), *(line(cells) for cells in body)]
        lines += list(self.notes)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))

    def _table_html(self, indices, caption: str = "") -> str:
        """The <table> of the columns at `indices`. Headers and text wrap only between words (and a long
        word after its separators); numbers never wrap."""
        align = self.alignments()
        texts = self.text_rows()
        pad = "padding:0.25em 0.4em;"
        head = "".join(f'<th style="{pad}text-align:{align[i]};vertical-align:bottom;font-weight:bold;'
                       f'border-bottom:1px solid currentColor">{_text_html(self.columns[i].name)}</th>'
                       for i in indices)

        def cell(i, text):
            if align[i] == "right":
                return (f'<td style="{pad}text-align:right;vertical-align:top;white-space:nowrap">'
                        f'{html.escape(text)}</td>')
            return f'<td style="{pad}text-align:left;vertical-align:top;">{_text_html(text)}</td>'
        body = "".join("<tr>" + "".join(cell(i, cells[i]) for i in indices) + "</tr>" for cells in texts)
        caption = (f'<caption style="caption-side:top;text-align:left;padding-bottom:0.3em;color:inherit">'
                   f'{_text_html(caption, whole_words=False)}</caption>' if caption else "")
        # table-layout and margin override JupyterLab's defaults for tables (fixed layout, centred).
        return (f'<table class="{CSS_CLASS}" style="border-collapse:collapse;table-layout:auto;margin:0;'
                f'max-width:100%;font-size:0.875em;font-variant-numeric:tabular-nums;color:inherit;'
                f'background:transparent">'
                f"{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")

    def _details_html(self, summary: str, table: str) -> str:
        return (f'<details class="{CSS_CLASS}-details" style="margin:0.3em 0 0">'
                f'<summary style="cursor:pointer;font-size:0.875em">{html.escape(summary)}</summary>'
                f"{table}</details>")

    def _repr_html_(self) -> str:
        small = "margin:0.3em 0 0;font-size:0.875em"
        detail = [i for i, c in enumerate(self.columns) if c.detail]
        rows = f"{len(self.rows)} row" + ("" if len(self.rows) == 1 else "s")
        parts = []
        if self.collapse:
            if self.caption:
                parts.append(f'<p class="{CSS_CLASS}-caption" style="margin:0;font-size:0.875em">'
                             f'{_text_html(self.caption, whole_words=False)}</p>')
        else:
            parts.append(self._table_html([i for i, c in enumerate(self.columns) if not c.detail], self.caption))
        if self._hides_verdicts():
            line = _text_html(self.verdict(), whole_words=False).replace("FAIL", "<strong>FAIL</strong>")
            parts.append(f'<p class="{CSS_CLASS}-verdict" style="{small}">{line}</p>')
        if self.collapse:
            parts.append(self._details_html(f"The table ({rows})", self._table_html(range(len(self.columns)))))
        elif detail:
            labels = [i for i, c in enumerate(self.columns)
                      if not c.detail and not c.verdict and not c.fmt and not c.unit]
            names = ", ".join(self.columns[i].name for i in detail)
            parts.append(self._details_html(f"{names}, row by row ({rows})", self._table_html(labels + detail)))
        notes = "".join(f'<p class="{CSS_CLASS}-note" style="{small}">{_text_html(n, whole_words=False)}</p>'
                        for n in self.notes)
        return f'<div class="{CSS_CLASS}-wrap">{"".join(parts)}{notes}</div>'
