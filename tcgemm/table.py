"""A results table that shows itself as an HTML <table> in notebooks and in the book, and as aligned
plain text in a terminal (`print`, `str`). Pure module.

Cells keep their values (numbers stay numbers); a column's `fmt` (a format spec such as ".1f" or ",")
turns numbers into text, None and NaN show as "n/a". Columns of numbers are right-aligned, others
left-aligned, unless a column says otherwise. The HTML carries no colours: it inherits the page's,
so it reads in light and dark themes, and long headers and names wrap to fit the text column.
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass
from numbers import Real

CSS_CLASS = "tcgemm-table"
MISSING = "n/a"
LONG_WORD = 24         # characters: a column with a longer word may break inside words in HTML


@dataclass(frozen=True)
class Column:
    name: str
    fmt: str = ""                 # format spec for numbers, e.g. ".1f", ",.0f", "+.1f"
    align: str | None = None      # "left" or "right"; None: right for a column of numbers
    unit: str = ""                # appended to formatted numbers, e.g. "%"

    def __post_init__(self):
        if self.align not in (None, "left", "right"):
            raise ValueError(f"align must be 'left', 'right' or None, got {self.align!r}")


def _is_number(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


class Table:
    """Rows of values under named columns, with an optional caption (above) and notes (below)."""

    def __init__(self, columns, rows, caption: str = "", notes=()):
        self.columns = tuple(c if isinstance(c, Column) else Column(str(c)) for c in columns)
        self.rows = tuple(tuple(row) for row in rows)
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(f"row {i} has {len(row)} cells for {len(self.columns)} columns: {row!r}")
        self.caption = caption
        self.notes = (notes,) if isinstance(notes, str) else tuple(notes)

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

    def _repr_html_(self) -> str:
        align = self.alignments()
        texts = self.text_rows()
        # Headers wrap between words; numbers never break; other text breaks between words, and a
        # column with a very long word (a metric name) may also break inside words to fit.
        longest = [max((len(w) for cells in texts for w in cells[i].split()), default=0)
                   for i in range(len(self.columns))]
        wrap = ["white-space:nowrap" if a == "right" else
                "overflow-wrap:anywhere" if n > LONG_WORD else "" for a, n in zip(align, longest)]
        pad = "padding:0.25em 0.4em;"
        head = "".join(f'<th style="{pad}text-align:{a};vertical-align:bottom;font-weight:bold;'
                       f'border-bottom:1px solid currentColor">{html.escape(c.name)}</th>'
                       for c, a in zip(self.columns, align))
        body = "".join(
            "<tr>" + "".join(f'<td style="{pad}text-align:{a};vertical-align:top;{w}">{html.escape(cell)}</td>'
                             for cell, a, w in zip(cells, align, wrap)) + "</tr>"
            for cells in texts)
        caption = (f'<caption style="caption-side:top;text-align:left;padding-bottom:0.3em;color:inherit">'
                   f'{html.escape(self.caption)}</caption>' if self.caption else "")
        notes = "".join(f'<p class="{CSS_CLASS}-note" style="margin:0.3em 0 0;font-size:0.875em">'
                        f'{html.escape(n)}</p>' for n in self.notes)
        # table-layout and margin override JupyterLab's defaults for tables (fixed layout, centred).
        table = (f'<table class="{CSS_CLASS}" style="border-collapse:collapse;table-layout:auto;margin:0;'
                 f'max-width:100%;font-size:0.875em;font-variant-numeric:tabular-nums;color:inherit;'
                 f'background:transparent">'
                 f"{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        return f'<div class="{CSS_CLASS}-wrap">{table}{notes}</div>'
