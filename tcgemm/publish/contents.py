"""The book's pages in reading order, as `_toc.yml` lists them, each with its title. Pure module.

The introduction's list of what the book covers is computed from `pages()` (a cell of
book/intro.ipynb), and README.md's list of chapters is checked against `chapters()`
(tests/test_generated_lists.py), so neither can fall behind the table of contents. A page's title
is its first Markdown heading (`# ...`): the first line of a notebook's first Markdown cell, or of a
Markdown page.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from tcgemm import ROOT

NOT_CHAPTERS = ("book/run_it_yourself", "book/results")
"""Pages of _toc.yml that are not chapters: how to run the book, and the results of several GPUs."""


@dataclass(frozen=True)
class Page:
    file: str       # as _toc.yml names it, e.g. "book/mma_fragments"
    title: str      # its first heading, without the "# "

    @property
    def name(self) -> str:
        """The file's stem: "mma_fragments"."""
        return self.file.rsplit("/", 1)[-1]

    @property
    def chapter(self) -> bool:
        return self.file not in NOT_CHAPTERS


def _toc_entries(entry) -> list[str]:
    """The files of a _toc.yml node, in order (jb-book: root, chapters, parts, sections)."""
    if isinstance(entry, list):
        return [f for item in entry for f in _toc_entries(item)]
    if not isinstance(entry, dict):
        return []
    files = [str(entry[k]) for k in ("root", "file") if k in entry]
    for key in ("chapters", "parts", "sections"):
        files += _toc_entries(entry.get(key, []))
    return files


def toc_files(root: str | Path = ROOT) -> list[str]:
    """Every file of `root`/_toc.yml in reading order, the root (the introduction) first."""
    import yaml   # here: only reading the table of contents needs it

    return _toc_entries(yaml.safe_load((Path(root) / "_toc.yml").read_text(encoding="utf-8")))


def title(path: str | Path) -> str:
    """The first heading of a notebook (its first Markdown cell) or a Markdown page."""
    path = Path(path)
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = next("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    else:
        text = path.read_text(encoding="utf-8")
    heading = next((line for line in text.splitlines() if line.startswith("# ")), None)
    if heading is None:
        raise ValueError(f"{path} has no '# ' heading to take its title from")
    return heading[2:].strip()


def _page_path(root: Path, file: str) -> Path:
    for suffix in (".ipynb", ".md"):
        if (root / (file + suffix)).is_file():
            return root / (file + suffix)
    raise FileNotFoundError(f"_toc.yml names {file}, but there is no {file}.ipynb or {file}.md under {root}")


def pages(root: str | Path = ROOT) -> list[Page]:
    """The pages after the introduction, in reading order, with their titles."""
    root = Path(root)
    return [Page(f, title(_page_path(root, f))) for f in toc_files(root)[1:]]


def chapters(root: str | Path = ROOT) -> list[Page]:
    """The pages that are chapters (all but NOT_CHAPTERS), in reading order."""
    return [p for p in pages(root) if p.chapter]


_README_ITEM = re.compile(r"^\d+\. \*\*(.+?)\*\*", re.M)


def readme_chapters(readme: str) -> list[str]:
    """The chapter names of README.md's numbered list under "## Chapters" (each item starts
    `1. **Title**`), in order."""
    match = re.search(r"^## Chapters\n(.*?)(?=^## )", readme, re.M | re.S)
    if match is None:
        raise ValueError("README.md has no '## Chapters' section followed by another '## ' section")
    return _README_ITEM.findall(match.group(1))
