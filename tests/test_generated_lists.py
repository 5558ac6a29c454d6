"""Lists of the book's pages and kernels that are typed in more than one place agree with their source:
the table of contents (_toc.yml, through tcgemm.publish.contents) and the kernel catalog (tcgemm.engine.catalog).

* The introduction's list of pages is computed from _toc.yml by a CPU cell: its recorded output names
  the pages of _toc.yml, in order, with their titles (nbval re-runs the cell and compares as well).
* README.md's numbered list of chapters names the chapters of _toc.yml, in order, by their titles.
* The recorded output of `python -m tcgemm info` in the introduction lists every kernel source of the
  catalog, in the catalog's order.
* README.md's bench output is the run of results/nvidia-h100-80gb-hbm3.json, which its text names.
"""
import json
import re

import pytest

from tcgemm.engine.catalog import all_sources
from tcgemm.publish import contents
from tcgemm.publish.prose import METADATA_KEY, PROSE_KEY

from tests.test_prose import BOOK, ROOT

INTRO = BOOK / "intro.ipynb"


def _intro():
    return json.loads(INTRO.read_text(encoding="utf-8"))


def _code_cell(notebook: dict, marker: str) -> dict:
    found = [c for c in notebook["cells"] if c["cell_type"] == "code" and marker in "".join(c["source"])]
    assert len(found) == 1, f"intro.ipynb: expected one code cell containing {marker!r}, found {len(found)}"
    return found[0]


# --- tcgemm.publish.contents ---------------------------------------------------------------------

def test_pages_follow_the_table_of_contents():
    files = contents.toc_files(ROOT)
    assert files[0] == "book/intro"
    assert [p.file for p in contents.pages(ROOT)] == files[1:]
    assert all(f in files for f in contents.NOT_CHAPTERS)
    assert [p.name for p in contents.chapters(ROOT)] == [
        p.name for p in contents.pages(ROOT) if p.file not in contents.NOT_CHAPTERS]


def test_titles_are_first_headings(tmp_path):
    (tmp_path / "page.md").write_text("Some words\n# The title\n\n## Later\n", encoding="utf-8")
    assert contents.title(tmp_path / "page.md") == "The title"
    notebook = {"cells": [{"cell_type": "code", "source": ["# a comment\n"]},
                          {"cell_type": "markdown", "source": ["# Notebook title\n", "\n", "text"]}]}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    assert contents.title(tmp_path / "nb.ipynb") == "Notebook title"
    (tmp_path / "none.md").write_text("no heading\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no '# ' heading"):
        contents.title(tmp_path / "none.md")


def test_readme_chapters_reads_the_numbered_list():
    text = "# X\n\n## Chapters\n\n1. **One**: a\n   more\n2. **Two: b `c`**: d\n\n## Use it\n\n1. **No**: e\n"
    assert contents.readme_chapters(text) == ["One", "Two: b `c`"]
    with pytest.raises(ValueError, match="Chapters"):
        contents.readme_chapters("# X\n")


# --- the lists ------------------------------------------------------------------------------------

def test_intro_lists_the_pages_of_the_table_of_contents():
    cell = _code_cell(_intro(), "contents import pages")
    readings = [o for o in cell.get("outputs", []) if PROSE_KEY in o.get("metadata", {}).get(METADATA_KEY, {})]
    assert len(readings) == 1, "intro.ipynb: the list of pages has no recorded output: run the cell"
    recorded = readings[0]["metadata"][METADATA_KEY][PROSE_KEY]["values"]["pages"]
    expected = [[p.title, p.chapter] for p in contents.pages(ROOT)]
    assert [[title, chapter] for title, _, chapter in recorded] == expected, (
        "intro.ipynb's list of pages is not the table of contents': run its cell again")


def test_readme_lists_the_chapters_of_the_table_of_contents():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert contents.readme_chapters(readme) == [p.title for p in contents.chapters(ROOT)], (
        "README.md's '## Chapters' list: one item per chapter of _toc.yml, in order, named by the "
        "chapter's title (`N. **title**: ...`)")


def _recorded_info_sources(cell: dict) -> list[str]:
    text = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []) if o.get("output_type") == "stream")
    return re.findall(r"^compile\s+kernels/(\S+?):", text, re.M)


def test_recorded_info_lists_every_kernel_of_the_catalog():
    cell = _code_cell(_intro(), 'main(["info"])')
    assert _recorded_info_sources(cell) == all_sources(), (
        "intro.ipynb: the recorded `python -m tcgemm info` output does not list the catalog's kernel "
        "sources (tcgemm.engine.catalog.all_sources): record the notebook again")
    results = [o for o in cell.get("outputs", []) if o.get("output_type") == "execute_result"]
    assert not results, "intro.ipynb: the info cell shows a value after its listing (its return code?)"


def test_readme_results_are_the_h100_file():
    """README.md's bench output is the run kept in results/ (its text names the file): each row's
    TFLOP/s and % of cuBLAS as the file has them."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    path = "results/nvidia-h100-80gb-hbm3.json"
    assert f"`{path}`" in readme
    doc = json.loads((ROOT / path).read_text(encoding="utf-8"))
    section = readme[readme.index("## Results\n"):]
    block = section[section.index("```\n") + 4:]
    block = block[:block.index("```")]
    checked = 0
    for group in doc["groups"]:
        for row in group["rows"]:
            name = f"{row['title']} ({row['variant']})" if row["variant"] else row["title"]
            line = next((l for l in block.splitlines() if l.startswith(name + "  ")), None)
            assert line is not None, f"README.md's bench output has no row {name!r}"
            fields = line[len(name):].split()
            assert fields[2] == f"{row['tflops']:.1f}" and fields[3] == f"{row['pct_baseline']:.1f}", (
                f"README.md's row {name!r} is not {path}'s: {fields}")
            checked += 1
    assert checked >= 30
