"""The book's prose states what the run beside it measured (tcgemm.publish.prose).

* Markdown cells and reading templates type no measured-looking number except the constants of
  tests/prose_constants.py, each with its source.
* Every recorded reading renders again, from the values recorded with it, to the recorded text, and
  its template is the one in the cell's source.
* Readings rendered from altered values say something else (numbers and verdicts follow the values).
"""
import ast
import itertools
import json
from collections import Counter
from pathlib import Path

import pytest

from tcgemm.publish import prose
from tests.prose_constants import CONSTANTS, MAX_CONSTANTS

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
NOTEBOOKS = sorted(BOOK.glob("*.ipynb"))
PAGES = sorted(BOOK.glob("*.md"))


def _load(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _say_templates(source: str) -> list[str]:
    """The literal templates of the say(...) calls in a cell's source (%%magic lines skipped)."""
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("%"))
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "say" \
                and node.args:
            out += _literal_strings(node.args[0])
    return out


def _literal_strings(node: ast.expr) -> list[str]:
    """A template argument's literal strings: the string, or both of `a if condition else b`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _literal_strings(node.body) + _literal_strings(node.orelse)
    return []


def _prose_of(path) -> list[str]:
    """Every piece of prose a page shows: markdown cells and reading templates (or the page)."""
    if path.suffix == ".md":
        return [path.read_text(encoding="utf-8")]
    texts = []
    for cell in _load(path)["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            texts.append(source)
        elif cell["cell_type"] == "code":
            texts.extend(_say_templates(source))
    return texts


# --- the helpers --------------------------------------------------------------------------------

def test_span_and_verdicts():
    assert prose.span([368.2, 340.1]) == "340 to 368"
    assert prose.span([340.1, 340.4]) == "340"
    assert prose.versus(103, 100, 0.05) == "level with"
    assert prose.versus(106, 100, 0.05) == "faster than"
    assert prose.versus(94, 100, 0.05) == "slower than"
    assert prose.pct(0.053, 1, signed=True) == "+5.3%"
    assert prose.times(1.384) == "1.38×"
    assert prose.words(["a", "b", "c"]) == "a, b and c"
    assert prose.count(1, "kernel") == "1 kernel" and prose.count(3, "kernel") == "3 kernels"


def test_render_formats_fields_and_keeps_math():
    text = prose.render(r"{t:.1f} µs, {versus(a, b, s)} cuBLAS; $2^{{10}}$, $\alpha$", dict(t=12.345, a=1, b=2, s=0.1))
    assert text == r"12.3 µs, slower than cuBLAS; $2^{10}$, $\alpha$"


def test_render_refuses_by_name():
    with pytest.raises(ValueError, match="hide helpers"):
        prose.render("{span}", {"span": 1})
    with pytest.raises(ValueError, match="does not parse"):
        prose.render("{1 +}", {})
    with pytest.raises(NameError):
        prose.render("{missing}", {})
    with pytest.raises(ValueError, match="finite"):
        prose.bundle("{x}", x=float("nan"))
    with pytest.raises(TypeError, match="must be a number"):
        prose.bundle("{x}", x=object())


def test_bundle_carries_what_it_was_computed_from():
    data, metadata = prose.bundle("{x:.0f} µs", x=3.7)
    assert data == {"text/markdown": "4 µs"}
    assert metadata == {"tcgemm": {"prose": {"template": "{x:.0f} µs", "values": {"x": 3.7}}}}


def test_scanner_finds_numbers_outside_code_math_and_fields():
    found = prose.typed_numbers("takes 340 to 368 µs at 1.5 GHz and 95%; `12 µs` $3\\%$ {t:.1f} µs; 4x4 tile")
    assert found == ["340", "368", "1.5", "95"]


# --- the book -----------------------------------------------------------------------------------

def test_constants_are_sourced_and_few():
    assert len(CONSTANTS) <= MAX_CONSTANTS
    for c in CONSTANTS:
        assert c.page and c.text and len(c.source) > 10, c


@pytest.mark.parametrize("path", NOTEBOOKS + PAGES, ids=lambda p: p.name)
def test_prose_types_no_measured_number(path):
    """A measured-looking number in a page's prose is a constant with its source, or it comes from
    the run (a reading cell's field)."""
    typed = Counter(n for text in _prose_of(path) for n in prose.typed_numbers(text))
    allowed = Counter()
    for c in CONSTANTS:
        if c.page == path.name:
            allowed.update(prose.typed_numbers(c.text))
    extra = typed - allowed
    assert not extra, (f"{path.name} types measured-looking numbers {sorted(extra.elements())}: compute them "
                       f"in a reading cell (tcgemm.publish.prose.say), or list a constant with its source in "
                       f"tests/prose_constants.py")


def test_constants_are_still_on_their_pages():
    for c in CONSTANTS:
        texts = _prose_of(BOOK / c.page)
        assert any(c.text in t for t in texts), f"{c.page} no longer says {c.text!r}: drop it from the constants"


def _readings():
    for path in NOTEBOOKS:
        for index, source, output in prose.recorded_readings(_load(path)):
            yield pytest.param(path, index, source, output, id=f"{path.stem}-cell{index}")


READINGS = list(_readings())


@pytest.mark.parametrize("path, index, source, output", READINGS)
def test_recorded_reading_renders_from_its_values(path, index, source, output):
    recorded = output["metadata"]["tcgemm"]["prose"]
    assert recorded["template"] in _say_templates(source), (
        f"{path.name} cell {index}: the template in the source is not the recorded one: record it again")
    text = "".join(output["data"]["text/markdown"])
    assert prose.render(recorded["template"], recorded["values"]) == text


FACTORS = (1.37, 0.61, 1.13, 0.83, 1.71)


def _scaled(values, factors):
    """`values` with every number multiplied by the next of `factors` (an iterator), so that ratios
    between values change too."""
    if isinstance(values, bool) or values is None or isinstance(values, str):
        return values
    if isinstance(values, (int, float)):
        return values * next(factors)  # ints too: JupyterLab saves a whole float (1980.0) as an int
    if isinstance(values, list):
        return [_scaled(v, factors) for v in values]
    return {k: _scaled(v, factors) for k, v in values.items()}


@pytest.mark.parametrize("path, index, source, output", READINGS)
def test_reading_follows_altered_values(path, index, source, output):
    """Every value scaled, by factors that differ from one value to the next: the rendered text changes,
    unless the reading quotes no number."""
    recorded = output["metadata"]["tcgemm"]["prose"]
    values = recorded["values"]
    if not any(True for _ in _numbers(values)):
        pytest.skip("this reading quotes no number")
    before = prose.render(recorded["template"], values)
    try:
        after = prose.render(recorded["template"], _scaled(values, itertools.cycle(FACTORS)))
    except (ValueError, ZeroDivisionError, TypeError, IndexError):
        return  # the reading refuses values it cannot describe (a count that is no longer whole)
    assert after != before


def _numbers(values):
    if isinstance(values, (int, float)) and not isinstance(values, bool):
        yield values
    elif isinstance(values, list):
        for v in values:
            yield from _numbers(v)
    elif isinstance(values, dict):
        for v in values.values():
            yield from _numbers(v)


# --- verdicts follow the values: chapters' readings rendered from altered recordings ----------------

def _recorded(notebook: str, opening: str) -> dict:
    """The recorded template and values of the reading in book/`notebook` whose template starts with
    `opening` (after white space)."""
    for _, _, output in prose.recorded_readings(_load(BOOK / notebook)):
        recorded = output["metadata"]["tcgemm"]["prose"]
        if recorded["template"].lstrip().startswith(opening):
            return recorded
    raise AssertionError(f"{notebook} has no recorded reading that starts {opening!r}")


def test_matmul_verdict_follows_the_rounds():
    recorded = _recorded("matmul.ipynb", "In this recording Kernel 4.7")
    values = dict(recorded["values"])
    # 4.7 steadily 20% slower than 4.6, both kernels steady from round to round: a real difference.
    values["t46"] = [300.0] * len(values["t46"])
    values["t47"] = [360.0, 361.0, 360.5][:len(values["t47"])]
    text = prose.render(recorded["template"], values)
    assert "4.7 is slower than 4.6" in text and "does not tell the two apart" not in text
    # The two kernels alternate within a wide round-to-round spread: no verdict.
    values["t46"] = [300.0, 360.0, 330.0][:len(values["t46"])]
    values["t47"] = [330.0, 300.0, 360.0][:len(values["t47"])]
    text = prose.render(recorded["template"], values)
    assert "does not tell the two apart" in text
    # Transposed operands 10% slower than a steady K-major case: the cost shows.
    values["mn"] = [90.0] * len(values["mn"])
    values["t47"] = [300.0, 300.5, 301.0][:len(values["t47"])]
    assert "costs up to 10% of the speed" in prose.render(recorded["template"], values)


def test_hopper_power_verdict_follows_the_readings():
    recorded = _recorded("hopper.ipynb", "**Reading the power**")
    values = json.loads(json.dumps(recorded["values"]))
    for g in values["G"]:
        g["capped"], g["watts"] = 0.0, 0.8 * values["limit"]
    text = prose.render(recorded["template"], values)
    assert "This GPU did not reach its power limit in this run" in text
    for g in values["G"]:
        g["capped"], g["watts"] = 1.0, values["limit"]
    text = prose.render(recorded["template"], values)
    assert "Every GEMM runs at the board's limit" in text and "did not reach its power limit" not in text
    # cuBLAS and 5.6 at the same time: level, whatever the clocks say.
    values["k56"] = dict(values["k56"], us=values["cub"]["us"])
    assert "level with it within the spread" in prose.render(recorded["template"], values)
