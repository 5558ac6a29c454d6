"""Every notebook of the book is recorded on a GPU (`make record`), and testable without one.

* it carries the ``tcgemm.recorded_on`` stamp, with every key;
* every ``gpu``-tagged code cell has outputs, none of them an error;
* ``gpu`` cells are leaves: no later non-gpu cell uses a name first bound in a gpu cell
  (otherwise skipping the gpu cells where there is no GPU would break the cells after them);
* the notebook is in the table of contents;
* every recorded figure carries its PNG, not only its text repr;
* every recorded text output line fits the book's text column (tcgemm.style.TEXT_COLUMN_CHARS); HTML
  outputs (tables, listings that scroll in their box) are measured in the browser instead.
"""
import ast
import json
import re
from pathlib import Path

import pytest
from IPython.core.inputtransformer2 import TransformerManager

from tcgemm.publish import contents
from tcgemm.publish.notebook import GPU_TAG, STAMP_KEYS, recorded_on
from tcgemm.style import TEXT_COLUMN_CHARS

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
IDS = [p.stem for p in NOTEBOOKS]


def code_cells(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            source = cell["source"]
            yield index, cell, "".join(source) if isinstance(source, list) else source


def is_gpu(cell) -> bool:
    return GPU_TAG in cell.get("metadata", {}).get("tags", [])


def test_the_book_has_notebooks():
    assert NOTEBOOKS, "no notebook in book/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_has_recording_stamp(path):
    stamp = recorded_on(path)
    assert stamp is not None, f"{path.name} has no recording stamp: run `make record` on a GPU"
    missing = [k for k in STAMP_KEYS if not stamp.get(k)]
    assert not missing, f"{path.name}: stamp lacks {missing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_gpu_cells_have_outputs_without_errors(path):
    for index, cell, _ in code_cells(path):
        if not is_gpu(cell):
            continue
        outputs = cell.get("outputs", [])
        assert outputs, f"{path.name} cell {index} (tagged {GPU_TAG}) has no recorded output"
        errors = [o for o in outputs if o.get("output_type") == "error"]
        assert not errors, f"{path.name} cell {index} recorded an error: {errors[0].get('ename')}"


# --- gpu cells are leaves -------------------------------------------------------------------

def _python(source: str) -> ast.Module:
    # The %%gpu line (tcgemm.publish.magic) runs the rest as the cell's own code: look at that code.
    # Other IPython syntax (%magics, !shell) becomes plain Python calls first.
    return ast.parse(TransformerManager().transform_cell(source.removeprefix("%%gpu\n")))


def module_bindings(tree: ast.Module) -> set[str]:
    """Names a cell binds at notebook (module) level: not inside functions, classes, lambdas."""
    names = set()

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            return
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp)):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.NamedExpr):
            names.add(node.target.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return names


def used_names(tree: ast.Module) -> set[str]:
    """Names a cell reads and does not bind itself anywhere (parameters and locals excluded)."""
    loads, bound = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loads if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return loads - bound - module_bindings(tree)


def leaks(cells) -> list[str]:
    """For cells given as (index, is_gpu, source): 'cell j uses NAME of gpu cell i' findings."""
    born_in = {}
    found = []
    for index, gpu, source in cells:
        tree = _python(source)
        if not gpu:
            for name in sorted(used_names(tree)):
                if born_in.get(name) is not None:
                    found.append(f"cell {index} uses {name!r}, first bound in gpu cell {born_in[name]}")
        for name in module_bindings(tree):
            born_in.setdefault(name, index if gpu else None)
    return found


def test_leak_check_finds_a_leak():
    cells = [(0, False, "import numpy as np"), (1, True, "%%gpu\nt = run()\n%time y = 2"),
             (2, False, "print(t, np.pi)"), (3, False, "def f(t):\n    return t\ny = 3\nprint(y)")]
    assert leaks(cells) == ["cell 2 uses 't', first bound in gpu cell 1"]


def test_leak_check_allows_rebinding_a_cpu_name():
    cells = [(0, False, "a = 1"), (1, True, "a = 2\nb = 3"), (2, False, "print(a)")]
    assert leaks(cells) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_gpu_cells_are_leaves(path):
    cells = [(index, is_gpu(cell), source) for index, cell, source in code_cells(path)]
    found = leaks(cells)
    assert not found, f"{path.name}: " + "; ".join(found)


# --- table of contents ----------------------------------------------------------------------

@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_in_table_of_contents(path):
    toc = set(contents.toc_files(ROOT))
    rel = path.relative_to(ROOT).as_posix()
    assert rel in toc or rel.removesuffix(".ipynb") in toc, f"{rel} is not in _toc.yml"


def figures_without_image(path) -> list[int]:
    """Code cells that recorded a matplotlib Figure's text repr but not the picture itself."""
    bad = []
    for index, cell, _ in code_cells(path):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            text = "".join(data.get("text/plain", ""))
            if text.startswith("<Figure") and "image/png" not in data:
                bad.append(index)
    return bad


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_recorded_figures_carry_their_image(path):
    assert figures_without_image(path) == [], f"{path.name}: figures recorded without a PNG"


def _widget_classes():
    import tcgemm.widgets as widgets

    classes = [getattr(widgets, name) for name in widgets.__all__]
    return {f"{cls.__module__}.{cls.__name__}": cls for cls in classes}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_recorded_widgets_run_the_current_javascript(path):
    """The built book renders widgets from the state stored at recording time: that state must hold
    today's JavaScript and CSS, or the web book shows an older widget than the package has."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    state = nb.get("metadata", {}).get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    classes = _widget_classes()
    for model in state.get("state", {}).values():
        fields = model["state"]
        if "_esm" not in fields:
            continue
        cls = classes.get(fields.get("_anywidget_id"))
        assert cls is not None, f"{path.name}: a recorded anywidget of unknown class {fields.get('_anywidget_id')}"
        assert fields["_esm"] == cls._esm, f"{path.name}: {cls.__name__}'s JavaScript changed since recording: make record"
        assert fields["_css"] == cls._css, f"{path.name}: {cls.__name__}'s CSS changed since recording: make record"


def text_lines(output) -> list[str]:
    """The lines a text output shows: a stream, or a result with neither HTML nor a PNG."""
    if output["output_type"] == "stream":
        text = output["text"]
    elif output["output_type"] in ("execute_result", "display_data") and not (
            {"text/html", "image/png"} & output["data"].keys()):
        text = output["data"].get("text/plain", "")
    else:
        return []
    return ("".join(text) if isinstance(text, list) else text).splitlines()


def long_lines(path) -> list[str]:
    return [f"cell {index} ({cell.get('id')}): {len(line)} characters: {line[:60]!r}..."
            for index, cell, _ in code_cells(path) for output in cell.get("outputs", [])
            for line in text_lines(output) if len(line) > TEXT_COLUMN_CHARS]


def test_long_line_check_reads_text_outputs_only():
    wide = "x" * (TEXT_COLUMN_CHARS + 1)
    assert text_lines({"output_type": "stream", "text": ["ok\n", wide]}) == ["ok", wide]
    assert text_lines({"output_type": "execute_result", "data": {"text/plain": wide}}) == [wide]
    assert text_lines({"output_type": "display_data", "data": {"text/plain": wide, "text/html": "<pre>"}}) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_text_outputs_fit_the_text_column(path):
    problems = long_lines(path)
    assert not problems, (f"{path.name}: text output lines longer than {TEXT_COLUMN_CHARS} characters "
                          f"(wrap them, or print a tcgemm.table.Table):\n" + "\n".join(problems))


# --- code fits the text column --------------------------------------------------------------

# A code cell whose input the book does not show (myst-nb's tags): its lines may be long.
HIDDEN_INPUT_TAGS = {"remove-input", "remove-cell"}
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def fenced_code_lines(markdown: str) -> list[str]:
    """The lines inside the fenced code blocks (``` or ~~~, CommonMark) of a markdown text."""
    lines, fence = [], None
    for line in markdown.splitlines():
        opening = FENCE.match(line)
        if fence is None:
            fence = opening and opening.group(1)
        elif opening and opening.group(1).startswith(fence) and not line.strip().strip(fence[0]):
            fence = None
        else:
            lines.append(line)
    return lines


def shown_code_lines(path: Path) -> list[tuple[str, str]]:
    """(where, line) of every line of code the book shows from a notebook or a markdown page: the
    source of each code cell shown, and the fenced code blocks of the prose."""
    if path.suffix == ".md":
        return [("page", line) for line in fenced_code_lines(path.read_text(encoding="utf-8"))]
    found = []
    for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        where = f"cell {index} ({cell.get('id')})"
        if cell["cell_type"] == "code" and not HIDDEN_INPUT_TAGS & set(cell.get("metadata", {}).get("tags", [])):
            found += [(where, line) for line in source.splitlines()]
        elif cell["cell_type"] == "markdown":
            found += [(f"{where}, a code block", line) for line in fenced_code_lines(source)]
    return found


def test_code_line_check_reads_shown_code_only():
    assert fenced_code_lines("text\n```\ncode\n```\nmore\n~~~python\n  x = 1\n~~~\n") == ["code", "  x = 1"]
    assert fenced_code_lines("````md\n```\ninner\n```\n````\n") == ["```", "inner", "```"]


PAGES = sorted((ROOT / "book").glob("*.md"))


@pytest.mark.parametrize("path", NOTEBOOKS + PAGES, ids=[p.name for p in NOTEBOOKS + PAGES])
def test_code_lines_fit_the_text_column(path):
    """No code the book shows is wider than the text column at 1280 px (tcgemm.style.TEXT_COLUMN_CHARS
    characters): no code block scrolls sideways or cuts a line off (tests/test_browser.py measures
    the pages). Cells whose input the book removes are exempt."""
    problems = [f"{where}: {len(line)} characters: {line[:60]!r}..."
                for where, line in shown_code_lines(path) if len(line) > TEXT_COLUMN_CHARS]
    assert not problems, (f"{path.name}: code lines longer than {TEXT_COLUMN_CHARS} characters:\n"
                          + "\n".join(problems))
