"""The built book in a real browser, offline: every page of the TOC (and index.html) opens in headless
Chromium with no JavaScript error, no failed request and no request to the internet (the CDN files
the pages load are served from tests/browser/node_modules, pinned there); the bank-conflict explorer
of book/bank_conflicts shows the counts tcgemm.smem.banks computes.

Needs Debian's chromium, Node.js and `npm ci --prefix tests/browser`; skipped without them unless
TCGEMM_REQUIRE_BROWSER=1 (CI sets it). Slow: it shares the session's book build (tests/conftest.py).
"""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tcgemm.fragments.layouts import ldmatrix_address_lane, ldmatrix_layout
from tcgemm.smem.banks import analyze, ldmatrix_tile, row_major, xor_permuted

ROOT = Path(__file__).resolve().parent.parent
BROWSER_DIR = ROOT / "tests" / "browser"
CHROMIUM = os.environ.get("TCGEMM_CHROMIUM", "/usr/bin/chromium")
NODE_MAJOR = 20  # what playwright-core 1.64 asks for (its "engines")

EXPLORER_PAGE = "book/bank_conflicts.html"
# The explorer's presets: its access menu's default, and for each choice of its layout menu the
# tcgemm.smem.banks analysis of what it shows. Keep in step with the widget (tcgemm/widgets).
EXPLORER_ACCESS = "ldmatrix-x4-A"
EXPLORER_LAYOUTS = {
    "row-major": lambda: analyze(ldmatrix_tile(row_major(32, 2), num=4)),
    "xor": lambda: analyze(ldmatrix_tile(xor_permuted(), num=4)),
}


def summary_of(report) -> dict:
    """What the explorer's .tcgemm-summary should carry (data-* attributes) for a banks.Report."""
    return {"conflicts": report.conflicts, "wavefronts": report.wavefronts,
            "ideal": report.ideal, "max-way": report.ways}


def missing_tools() -> list[str]:
    missing = []
    if not os.access(CHROMIUM, os.X_OK):
        missing.append(f"Chromium at {CHROMIUM} (apt-get install chromium)")
    node = shutil.which("node")
    if not node:
        missing.append("Node.js (apt-get install nodejs npm)")
    else:
        version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
        if int(version.lstrip("v").split(".")[0]) < NODE_MAJOR:
            missing.append(f"Node.js {NODE_MAJOR} or later, not {version}")
    dependencies = json.loads((BROWSER_DIR / "package.json").read_text())["dependencies"]
    absent = [name for name in dependencies if not (BROWSER_DIR / "node_modules" / name).is_dir()]
    if absent:
        missing.append(f"{', '.join(absent)} in tests/browser/node_modules (npm ci --prefix tests/browser)")
    return missing


@pytest.fixture(scope="module")
def browser_report(request, tmp_path_factory) -> dict:
    """check_book.mjs's JSON report on index.html and every TOC page of the session's build."""
    missing = missing_tools()
    if missing:
        message = "browser test needs " + "; ".join(missing)
        if os.environ.get("TCGEMM_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{message} (TCGEMM_REQUIRE_BROWSER=1)")
        pytest.skip(message)
    built_book = request.getfixturevalue("built_book")  # only now: no build just to skip
    if built_book.returncode != 0:
        pytest.fail("the book did not build (see test_book_build.py)")
    out = tmp_path_factory.mktemp("browser") / "report.json"
    pages = ["index.html", *built_book.pages]
    run = subprocess.run(
        ["node", str(BROWSER_DIR / "check_book.mjs"), str(built_book.html), str(out),
         "--explorer", EXPLORER_PAGE, *pages],
        capture_output=True, text=True, timeout=60 + 45 * len(pages),
    )
    assert run.returncode == 0 and out.is_file(), f"check_book.mjs failed:\n{run.stdout}{run.stderr}"
    report = json.loads(out.read_text())
    assert sorted(report["pages"]) == sorted(pages), "check_book.mjs did not visit every page"
    return report


@pytest.mark.slow
def test_every_page_runs_offline_without_errors(browser_report):
    problems = []
    for page, seen in browser_report["pages"].items():
        for kind in ("pageErrors", "consoleErrors", "failedRequests", "unexpectedRequests"):
            problems += [f"{page}: {kind}: {item}" for item in seen[kind]]
        if seen["widgetsRendered"] != seen["widgetViews"]:
            problems.append(f"{page}: {seen['widgetsRendered']} of {seen['widgetViews']} widgets rendered")
    served = "\n".join(f"  {url} <- node_modules/{file}" for url, file in browser_report["served"].items())
    assert not problems, (f"in Chromium {browser_report['chromium']}:\n" + "\n".join(problems)
                          + f"\nserved from tests/browser/node_modules:\n{served}")


@pytest.mark.slow
def test_bank_explorer_counts_match_tcgemm_banks(browser_report):
    explorer = browser_report["explorer"]
    assert explorer["found"] and "reason" not in explorer, explorer.get("reason")
    readings = explorer["readings"]
    assert {r["access"] for r in readings.values()} == {EXPLORER_ACCESS}, readings
    for layout, analysis in EXPLORER_LAYOUTS.items():
        shown = {key: readings[layout][key] for key in ("conflicts", "wavefronts", "ideal", "max-way")}
        assert shown == summary_of(analysis()), f"layout {layout!r}: {readings[layout]}"
    default = readings["default"]
    if default["layout"] in EXPLORER_LAYOUTS:
        assert default == readings[default["layout"]], readings


@pytest.mark.slow
def test_lane_picker_lights_up_what_the_layout_says(browser_report):
    """On the ldmatrix page, clicking lane 9 of the default .x4 shows its address row and elements."""
    picker = browser_report["pages"]["book/ldmatrix.html"]["lanePicker"]
    assert picker is not None, "no lane picker on book/ldmatrix.html"
    layout = ldmatrix_layout(4)
    row = list(ldmatrix_address_lane(4)).index(9)
    assert picker["chosen"] == "9"
    assert f"Lane 9 gives the address of row {row % 8} of matrix {row // 8}." in picker["info"], picker
    assert picker["received"] == layout.elements_per_lane
