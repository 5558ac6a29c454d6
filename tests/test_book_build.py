"""The book builds (Jupyter Book 1.x, Sphinx warnings as errors) and every TOC page is in the HTML.

Slow (tens of seconds): deselect with ``-m "not slow"``; ``make test`` runs it.
"""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def jupyter_book() -> str:
    here = Path(sys.executable).parent / "jupyter-book"
    found = str(here) if here.exists() else shutil.which("jupyter-book")
    assert found, "jupyter-book is not installed (pip install -r requirements.txt)"
    return found


def toc_pages() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [toc["root"]]
    for chapter in toc.get("chapters", []):
        pages.append(chapter["file"])
    for part in toc.get("parts", []):
        pages += [chapter["file"] for chapter in part.get("chapters", [])]
    return [p.removesuffix(".ipynb").removesuffix(".md") for p in pages]


@pytest.mark.slow
def test_book_builds_without_warnings(tmp_path):
    run = subprocess.run(
        [jupyter_book(), "build", str(ROOT), "--path-output", str(tmp_path),
         "--warningiserror", "--keep-going", "--all"],
        capture_output=True, text=True, timeout=900,
    )
    log = run.stdout + run.stderr
    assert run.returncode == 0, f"jupyter-book build failed:\n{log[-6000:]}"
    assert "WARNING" not in log, log[-6000:]
    html = tmp_path / "_build" / "html"
    missing = [page for page in toc_pages() if not (html / f"{page}.html").is_file()]
    assert not missing, f"no HTML for {missing} in {html}"
