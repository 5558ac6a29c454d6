"""Fixtures shared by the tests: one build of the book per test session (test_book_build.py checks
the build itself, test_browser.py opens its pages in Chromium)."""
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tcgemm.publish import contents

ROOT = Path(__file__).resolve().parent.parent
BUILD_TIMEOUT_S = 900


@dataclass(frozen=True)
class BookBuild:
    returncode: int
    log: str      # jupyter-book's stdout and stderr
    html: Path    # the HTML root (index.html, book/*.html)
    pages: list[str]  # the TOC's pages, root first, as paths under html: "book/intro.html"


def jupyter_book() -> str:
    here = Path(sys.executable).parent / "jupyter-book"
    found = str(here) if here.exists() else shutil.which("jupyter-book")
    assert found, "jupyter-book is not installed (pip install -r requirements.txt)"
    return found


def toc_pages() -> list[str]:
    return [p.removesuffix(".ipynb").removesuffix(".md") + ".html" for p in contents.toc_files(ROOT)]


@pytest.fixture(scope="session")
def built_book(tmp_path_factory) -> BookBuild:
    """The book built from scratch into a temporary folder (Sphinx warnings as errors), once."""
    out = tmp_path_factory.mktemp("book")
    run = subprocess.run(
        [jupyter_book(), "build", str(ROOT), "--path-output", str(out),
         "--warningiserror", "--keep-going", "--all"],
        capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
    )
    return BookBuild(run.returncode, run.stdout + run.stderr, out / "_build" / "html", toc_pages())
