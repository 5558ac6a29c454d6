"""Prose that states a measurement: Markdown computed from the run beside it. Pure module.

A chapter never types a number it measured. A *reading cell* (tagged ``gpu`` and ``remove-input``,
so the book shows only its output) calls

    say('''Kernel 4.7 takes {span(k47)} µs, {versus(rate, base, spread)} Kernel 4.6.''',
        k47=[340.1, 368.2], rate=403.7, base=382.9, spread=0.03)

The template is Markdown whose ``{...}`` fields are Python expressions over the values and the
helpers below, with f-string format specs (``{t:.1f}``); a literal brace is written twice, as in an
f-string, and backslashes stay as they are (LaTeX). The cell's output is the rendered Markdown (the
book renders it with MyST, JupyterLab with its Markdown renderer) and it carries the template and the
values in its metadata, under ``metadata["tcgemm"]["prose"]``. So the recorded notebook holds what
each sentence was computed from: ``tests/test_prose.py`` renders every reading again from its
recorded values and fails when the text differs, or when the template in the cell's source is not the
recorded one; it also renders readings from altered values and sees their verdicts change.

Verdicts use the measured spread: a difference no larger than the spread is "level", never "faster".
"""
from __future__ import annotations

import json
import math
from numbers import Real

METADATA_KEY = "tcgemm"
PROSE_KEY = "prose"


# --- helpers a template may call -------------------------------------------------------------

def span(values, fmt: str = ".0f", sep: str = " to ") -> str:
    """'340 to 368' for the smallest and largest of `values` as `fmt` prints them; one number when
    the two print the same."""
    values = [float(v) for v in _flat(values)]
    if not values:
        raise ValueError("span() of no values")
    low, high = format(min(values), fmt), format(max(values), fmt)
    return low if low == high else f"{low}{sep}{high}"


def spread(values) -> float:
    """(largest - smallest) / smallest of `values`, as a fraction."""
    values = [float(v) for v in _flat(values)]
    low = min(values)
    if low <= 0:
        raise ValueError(f"spread() needs positive values, got {values}")
    return (max(values) - low) / low


def change(new: float, old: float) -> float:
    """new / old - 1, as a fraction (0.05 for 5% more)."""
    return float(new) / float(old) - 1.0


def within(a: float, b: float, tolerance: float) -> bool:
    """True when a and b differ by no more than `tolerance`, a fraction of the smaller."""
    a, b = float(a), float(b)
    return abs(a - b) <= tolerance * min(abs(a), abs(b))


def versus(a: float, b: float, tolerance: float, higher: str = "faster than", lower: str = "slower than",
           level: str = "level with") -> str:
    """`higher` when a exceeds b by more than `tolerance` (a fraction of the smaller), `lower` when it
    falls short by more, else `level`. For times, pass them as (b, a) or name the words accordingly."""
    if within(a, b, tolerance):
        return level
    return higher if float(a) > float(b) else lower


def pick(condition, yes: str, no: str = "") -> str:
    """`yes` when `condition` holds, else `no`."""
    return yes if condition else no


def pct(fraction: float, digits: int = 0, signed: bool = False) -> str:
    """A fraction as a percentage: pct(0.053) is '5%', pct(0.053, 1, signed=True) is '+5.3%'."""
    return format(100.0 * float(fraction), f"{'+' if signed else ''}.{digits}f") + "%"


def times(ratio: float, digits: int = 2) -> str:
    """A ratio as a factor: times(1.384) is '1.38×'."""
    return format(float(ratio), f".{digits}f") + "×"


def words(items, last: str = "and") -> str:
    """'a, b and c'."""
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {last} " + items[-1]


def count(n: int, noun: str, plural: str | None = None) -> str:
    """'1 kernel', '3 kernels'."""
    n = int(n)
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


HELPERS = {f.__name__: f for f in (span, spread, change, within, versus, pick, pct, times, words, count)}
BUILTINS = {f.__name__: f for f in (abs, min, max, round, len, sum, sorted, all, any, zip, enumerate,
                                    range, int, float, str, format, list, dict, reversed)}


# --- rendering -------------------------------------------------------------------------------

def _flat(values):
    if isinstance(values, (list, tuple)):
        for v in values:
            yield from _flat(v)
    else:
        yield values


def plain(value):
    """`value` as JSON-serialisable data (numpy scalars and arrays become floats, ints and lists),
    refused by name when it cannot be one."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, Real):
        if isinstance(value, int) or (hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iu"):
            return int(value)
        number = float(value)
        if math.isnan(number) or math.isinf(number):
            raise ValueError(f"a reading's value must be finite, got {number}")
        return number
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if hasattr(value, "tolist"):
        return plain(value.tolist())
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    raise TypeError(f"a reading's value must be a number, string, list or dict, got {type(value).__name__}")


def render(template: str, values: dict) -> str:
    """The Markdown of `template` with its fields computed from `values` (see the module's doc)."""
    if '"""' in template:
        raise ValueError('a reading template cannot contain """')
    clash = sorted(set(values) & (set(HELPERS) | set(BUILTINS)))
    if clash:
        raise ValueError(f"value names {clash} hide helpers of the same name")
    namespace = {**HELPERS, **BUILTINS, **values}
    try:
        code = compile('rf"""' + template + '"""', "<reading template>", "eval")
    except SyntaxError as e:
        raise ValueError(f"reading template does not parse: {e.msg} (near {e.text!r})") from None
    return eval(code, {"__builtins__": {}, **namespace}).strip()  # noqa: S307 (the book's own template)


def bundle(template: str, **values) -> tuple[dict, dict]:
    """The (data, metadata) of the output a reading cell shows: its Markdown, and what it came from."""
    values = plain(values)
    text = render(template, values)
    json.dumps(values)  # fails here, not at save time
    return {"text/markdown": text}, {METADATA_KEY: {PROSE_KEY: {"template": template, "values": values}}}


def say(template: str, **values) -> None:
    """Show `template` rendered from `values` as the cell's Markdown output (see the module's doc)."""
    from IPython.display import publish_display_data

    data, metadata = bundle(template, **values)
    publish_display_data(data=data, metadata=metadata)


def recorded_readings(notebook: dict):
    """(cell index, cell source, output) for every reading output of a notebook loaded as JSON."""
    for i, cell in enumerate(notebook.get("cells", [])):
        for output in cell.get("outputs", []):
            meta = output.get("metadata", {}).get(METADATA_KEY, {})
            if PROSE_KEY in meta:
                yield i, "".join(cell.get("source", "")), output


# --- the prose test's scanner ------------------------------------------------------------------

import re  # noqa: E402

MEASURED_UNITS = ("µs", "us", "ms", "ns", "TFLOP/s", "TFLOPS", "TOP/s", "GB/s", "TB/s", "GHz", "MHz",
                  "W", "%", "×", "x")
_N = r"[-+−]?\d[\d,]*(?:\.\d+)?"
_NUMBER = re.compile(rf"(?<![\w.]){_N}(?:\s?(?:-|–|to|and|or|/)\s?{_N})*\s?"
                     r"(?:(?:µs|us|ms|ns|TFLOP/s|TFLOPS|TOP/s|GB/s|TB/s|GHz|MHz|%|×)(?![\w/])|(?:W|x)\b)")
_ONE = re.compile(_N)
_HIDDEN = [re.compile(p, re.S) for p in (r"```.*?```", r"\$\$.*?\$\$", r"`[^`\n]*`", r"\$[^$\n]*\$",
                                          r"\{[^{}\n]*\}", r"<!--.*?-->")]


def typed_numbers(markdown: str) -> list[str]:
    """The measured-looking numbers typed in `markdown` (a number followed by a unit of time, rate,
    clock, power, a percentage or a factor), outside code, math, template fields and comments."""
    for pattern in _HIDDEN:
        markdown = pattern.sub(" ", markdown)
    return [n.group(0) for m in _NUMBER.finditer(markdown) for n in _ONE.finditer(m.group(0))]
