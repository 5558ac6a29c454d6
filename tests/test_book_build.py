"""The book builds (Jupyter Book 1.x, Sphinx warnings as errors) and every TOC page is in the HTML.

Slow (tens of seconds): deselect with ``-m "not slow"``; ``make test`` runs it. The build is the
session's ``built_book`` (tests/conftest.py), shared with test_browser.py.
"""
import pytest


@pytest.mark.slow
def test_book_builds_without_warnings(built_book):
    assert built_book.returncode == 0, f"jupyter-book build failed:\n{built_book.log[-6000:]}"
    assert "WARNING" not in built_book.log, built_book.log[-6000:]
    missing = [page for page in built_book.pages if not (built_book.html / page).is_file()]
    assert not missing, f"no HTML for {missing} in {built_book.html}"
