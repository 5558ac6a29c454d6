"""The built book in a real browser, offline: every page of the TOC (and index.html) opens in headless
Chromium, with every request to another host refused, with no JavaScript error, no failed request,
no request that left 127.0.0.1, every widget drawn and every formula typeset (the book serves its
widget embedder and MathJax itself: tcgemm.publish.offline); a page with widgets weighs at most
half of what it did when the embedder came from a CDN, and says where each widget belongs when
JavaScript is off; the bank-conflict explorer of book/bank_conflicts shows the counts
tcgemm.smem.banks computes.

And what the reader sees, at 1280 px, in the theme's light and its dark mode: no output wider than
its output area, no progress-bar text, no figure shown narrower than it was drawn for (up to the text
column, tcgemm.style.DISPLAY_COLUMN_PX), WCAG AA contrast for every text of the widgets, of the output
tables and of the code listings, no figure on a panel of another colour than the page and none whose
ink fades into it (each figure is recorded light and dark: tcgemm.dark_mode), listings and widget
controls in the mode's colours, and listing bars that say what a click does.
tests/browser/presentation.mjs measures; test_presentation_checks_catch_each_problem shows on a
made-up page that each measurement finds what it looks for. tests/browser/text_size.mjs measures the
size figure text is shown at and whether code lines fit (test_text_size_checks_catch_each_problem).

Needs Debian's chromium, Node.js and `npm ci --prefix tests/browser`; skipped without them unless
TCGEMM_REQUIRE_BROWSER=1 (CI sets it). Slow: it shares the session's book build (tests/conftest.py).
"""
import json
import os
import shutil
import subprocess
import urllib.parse
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from tcgemm.dark_mode import DARK_PAGE
from tcgemm.fragment_layouts import ldmatrix_address_lane, ldmatrix_layout
from tcgemm.layouts import row_major, xor_permuted
from tcgemm.publish.notebook import recorded_on
from tcgemm.smem import bank_cases, bank_puzzles
from tcgemm.smem.banks import analyze, bank_of, ldmatrix_tile
from tcgemm.engine.source import Listing
from tcgemm.style import DISPLAY_COLUMN_PX, MIN_DISPLAY_TEXT_PX, RECORD_DPI, TEXT_COLUMN_CHARS
from required import skip_or_fail
from test_bank_cases import CHAPTER, recorded_explorer_state

ROOT = Path(__file__).resolve().parent.parent
BROWSER_DIR = ROOT / "tests" / "browser"
CHROMIUM = os.environ.get("TCGEMM_CHROMIUM", "/usr/bin/chromium")
NODE_MAJOR = 20  # what playwright-core 1.64 asks for (its "engines")
MODES = ("light", "dark")  # check_book.mjs's order

EXPLORER_PAGE = "book/bank_conflicts.html"
# What a page with a widget may load on a first visit (bytes of every response body, uncompressed):
# half of the lightest such page when RequireJS, @jupyter-widgets/html-manager and anywidget came
# from CDNs (8.66-9.36 MB; now 2.6-3.3 MB, check_book.mjs's weight shows what).
WIDGET_PAGE_BYTES = 4_330_000
# The explorer's presets: its access menu's default, and for each choice of its layout menu the
# tcgemm.smem.banks analysis of what it shows. Keep in step with the widget (tcgemm/widgets).
EXPLORER_ACCESS = "ldmatrix-x4-A"
EXPLORER_LAYOUTS = {
    "row-major": lambda: analyze(ldmatrix_tile(row_major(32, 2), num=4)),
    "xor": lambda: analyze(ldmatrix_tile(xor_permuted(), num=4)),
}


EXPLORER_POINT_AT = (3, 8)          # check_book.mjs's EXPLORER_POINT_AT
EXPLORER_PRESET = "k1.1-fragment"  # check_book.mjs's EXPLORER_PRESET


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


def require_browser():
    missing = missing_tools()
    if missing:
        skip_or_fail("TCGEMM_REQUIRE_BROWSER", "browser test needs " + "; ".join(missing))


def check_book(html: Path, out: Path, pages: list[str], *options: str) -> dict:
    """Run check_book.mjs on these pages under html; its JSON report."""
    run = subprocess.run(
        ["node", str(BROWSER_DIR / "check_book.mjs"), str(html), str(out),
         "--column-px", str(DISPLAY_COLUMN_PX), *options, *pages],
        capture_output=True, text=True, timeout=60 + 45 * len(pages),
    )
    assert run.returncode == 0 and out.is_file(), f"check_book.mjs failed:\n{run.stdout}{run.stderr}"
    report = json.loads(out.read_text())
    assert sorted(report["pages"]) == sorted(pages), "check_book.mjs did not visit every page"
    return report


@pytest.fixture(scope="module")
def browser_report(request, tmp_path_factory) -> dict:
    """check_book.mjs's JSON report on index.html and every TOC page of the session's build."""
    require_browser()
    built_book = request.getfixturevalue("built_book")  # only now: no build just to skip
    if built_book.returncode != 0:
        pytest.fail("the book did not build (see test_book_build.py)")
    out = tmp_path_factory.mktemp("browser") / "report.json"
    return check_book(built_book.html, out, ["index.html", *built_book.pages], "--explorer", EXPLORER_PAGE)


def findings(report: dict, kind: str, say) -> list[str]:
    """Every page's `kind` findings (presentation.mjs) in words, each once with the modes it is seen in."""
    seen: dict[str, list[str]] = {}
    for page, entry in report["pages"].items():
        if entry["finalUrl"] != page and entry["finalUrl"] in report["pages"]:
            continue  # index.html: said once, under the page it goes on to
        for mode in MODES:
            for finding in entry["presentation"].get(mode, {}).get(kind, []):  # absent: see the mode test
                seen.setdefault(f"{page}: {say(finding)}", []).append(mode)
    return [f"{text} [{', '.join(modes)}]" for text, modes in seen.items()]


def in_cell(finding: dict) -> str:
    return f"cell {finding['cell']} ({finding['source']!r})"


@pytest.mark.slow
def test_every_page_runs_offline_without_errors(browser_report):
    problems = []
    for page, seen in browser_report["pages"].items():
        for kind in ("pageErrors", "consoleErrors", "failedRequests", "unexpectedRequests"):
            problems += [f"{page}: {kind}: {item}" for item in seen[kind]]
        if seen["widgetsRendered"] != seen["widgetViews"]:
            problems.append(f"{page}: {seen['widgetsRendered']} of {seen['widgetViews']} widgets rendered")
        problems += [f"{page}: a widget placeholder is still shown: {text!r}" for text in seen["placeholders"]]
        math = seen["math"]
        if math["typeset"] != math["elements"] or math["errors"]:
            problems.append(f"{page}: MathJax typeset {math['typeset']} of {math['elements']} formulas, "
                            f"{math['errors']} with errors; left as TeX: {math['raw']}")
    assert not problems, f"in Chromium {browser_report['chromium']}:\n" + "\n".join(problems)


@pytest.mark.slow
def test_no_request_leaves_localhost(browser_report):
    """Every request of every page went to the book's own server: none was refused, none to
    another origin (the browser resolved no host name either)."""
    for page, seen in browser_report["pages"].items():
        assert seen["unexpectedRequests"] == [], f"{page} asked another host: {seen['unexpectedRequests']}"
        assert seen["origins"] == [browser_report["origin"]], f"{page} made requests to {seen['origins']}"


@pytest.mark.slow
def test_widget_pages_are_light(browser_report):
    widget_pages = {page: seen["weight"] for page, seen in browser_report["pages"].items() if seen["widgetViews"]}
    assert len(widget_pages) >= 3, f"widgets on {sorted(widget_pages)} only"
    heavy = {page: weight for page, weight in widget_pages.items() if weight["bytes"] > WIDGET_PAGE_BYTES}
    assert not heavy, f"over {WIDGET_PAGE_BYTES:,} bytes: {json.dumps(heavy, indent=1)}"


@pytest.mark.slow
def test_widgets_say_where_they_belong_without_javascript(browser_report):
    for page, seen in browser_report["pages"].items():
        if seen["widgetViews"]:
            shown = seen["withoutJavaScript"]["placeholders"]
            assert len(shown) == seen["widgetViews"], f"{page}: {seen['withoutJavaScript']}"
            assert all("JavaScript" in text and "Run it yourself" in text for text in shown), shown


@pytest.mark.slow
def test_bank_explorer_counts_match_tcgemm_banks(browser_report):
    readings = explorer(browser_report)["readings"]
    assert {r["access"] for r in readings.values()} == {EXPLORER_ACCESS}, readings
    for layout, analysis in EXPLORER_LAYOUTS.items():
        shown = {key: readings[layout][key] for key in ("conflicts", "wavefronts", "ideal", "max-way")}
        assert shown == summary_of(analysis()), f"layout {layout!r}: {readings[layout]}"
        assert shown_view(readings[layout]) == expected_view(bank_cases.settings(layout=layout), 0)
    default = readings["default"]
    if default["layout"] in EXPLORER_LAYOUTS:
        assert default == readings[default["layout"]], readings


@pytest.mark.slow
def test_bank_explorer_writes_each_layout_in_cute_notation(browser_report):
    """"edit as CuTe" on the XOR layout: the same counts from the CuTe layout the explorer wrote."""
    as_cute = explorer(browser_report)["asCute"]
    equivalent = bank_cases.cute_equivalent(bank_cases.settings(layout="xor"))
    assert (as_cute["layout"], as_cute["cute"], as_cute["cuteUnit"]) == ("cute", equivalent["cute"], equivalent["unit"])
    assert shown_view(as_cute) == expected_view(bank_cases.settings(layout="cute", **equivalent), 0)
    assert shown_view(as_cute)["outlined"] == shown_view(explorer(browser_report)["readings"]["xor"])["outlined"]


def explorer(browser_report) -> dict:
    found = browser_report["explorer"]
    assert found["found"] and "reason" not in found, found.get("reason")
    return found


def link_settings(link: str) -> dict:
    """The explorer settings (and phase) of a #bank-explorer: link, typed as bank_cases has them."""
    values = dict(urllib.parse.parse_qsl(link, keep_blank_values=True))
    phase = int(values.pop("phase"))
    numbers = {k: int(v) for k, v in values.items() if isinstance(bank_cases.DEFAULTS[k], int)}
    return {**bank_cases.settings(**{**values, **numbers}), "phase": phase}


def expected_view(settings: dict, phase: int) -> dict:
    """What the explorer must show for these settings at this phase, by tcgemm.smem."""
    access = bank_cases.build_access(settings)
    report = analyze(access)
    lanes = [int(lane) for lane in report.phases[phase].lanes]
    covered = bank_cases.lane_elements(settings)
    return {**summary_of(report), "phase": phase,
            "outlined": sorted({cell for lane in lanes for cell in covered[lane]}),
            "labels": sorted((*covered[lane][0], str(lane)) for lane in lanes),
            "cute": bank_cases.cute_equivalent(settings)}


def shown_view(reading: dict) -> dict:
    labels = {}
    for row, col, text in reading["labels"]:  # a cell where two lanes start shows "a,b"
        labels.update({(row, col, lane): None for lane in text.split(",")})
    return {**{k: reading[k] for k in ("conflicts", "wavefronts", "ideal", "max-way", "phase")},
            "outlined": sorted(map(tuple, reading["outlined"])), "labels": sorted(labels),
            "cute": reading["cute"] and {"cute": reading["cute"], "unit": reading["cuteUnit"]}}


@pytest.mark.slow
def test_bank_explorer_steps_through_the_phases_as_tcgemm_banks_does(browser_report):
    stepped = explorer(browser_report)["stepped"]
    settings = bank_cases.settings(access=stepped["access"], layout=stepped["layout"])
    assert stepped["phase"] == 1 and "lanes 8-15" in stepped["phaseLabel"], stepped["phaseLabel"]
    assert shown_view(stepped) == expected_view(settings, 1)


@pytest.mark.slow
def test_bank_explorer_says_where_an_element_lives(browser_report):
    found = explorer(browser_report)
    pointed, settings = found["pointed"], bank_cases.settings(layout="row-major")
    row, col = EXPLORER_POINT_AT
    address = bank_cases.build_layout(settings)(row, col)
    lanes = [(lane, p) for p, phase in enumerate(analyze(bank_cases.build_access(settings)).phases)
             for lane in phase.lanes if (row, col) in bank_cases.lane_elements(settings)[int(lane)]]
    assert (int(pointed["row"]), int(pointed["col"]), int(pointed["address"]), int(pointed["bank"])) == (
        row, col, address, bank_of(address))
    assert pointed["text"].endswith("accessed by " + ", ".join(f"lane {lane} in phase {p}" for lane, p in lanes))
    assert found["hash"] == "#bank-explorer:access=ldmatrix-x4-A&layout=row-major&elem_bytes=2&row_elems=32&phase=1"


@pytest.mark.slow
def test_bank_explorer_links_restore_what_they_show(browser_report):
    """Each link opened in a fresh page shows its settings' counts, phase, outlined elements, CuTe
    form and the words of shared memory as tcgemm.smem computes them, on a phone too."""
    links = explorer(browser_report)["links"]
    assert len(links) == 3
    for opened in links:
        assert "error" not in opened, opened
        settings = link_settings(opened["link"])
        phase = settings.pop("phase")
        shown = opened["shown"]
        assert (shown["access"], shown["layout"], shown["error"]) == (settings["access"], settings["layout"], None)
        assert shown_view(shown) == expected_view(settings, phase), opened["link"]
        layout = bank_cases.build_layout(settings)
        for address, row, col in shown["words"]:
            assert layout(row, col) // 4 * 4 == address, (opened["link"], row, col)
        for width, fits in opened["fits"].items():
            assert not fits["pageScrolls"] and fits["explorerRight"] <= fits["viewport"], (width, fits)
            assert fits["controlsOutside"] == [], (width, fits)
            for box in fits["boxes"]:
                assert box["content"] <= box["width"] + 1 or box["overflowX"] in ("auto", "scroll"), (width, box)
    # Rows of 64 bytes or less are seen whole in the book's column.
    for opened in links[:2]:
        assert all(b["content"] <= b["width"] + 1 for b in opened["fits"]["desktop"]["boxes"]), opened["fits"]


@pytest.mark.slow
def test_bank_explorer_shows_what_nsight_compute_measured(browser_report):
    """The kernel preset's table holds the counts the chapter recorded for that kernel (the ones its
    ncu tables show: tests/test_bank_cases.py), and names the recording's GPU."""
    shown = explorer(browser_report)["preset"]
    preset = bank_cases.PRESETS[EXPLORER_PRESET]
    assert shown["preset"] == EXPLORER_PRESET
    assert shown_view(shown) == expected_view(preset["settings"], 0)
    measured = recorded_explorer_state(json.loads(CHAPTER.read_text(encoding="utf-8"))).get("measured")
    if not measured:
        assert shown["measured"] == [] and "no Nsight Compute counts" in shown["measuredText"]
        return
    counts = measured["kernels"][preset["kernel"]]
    assert shown["measured"] == [[c, counts[c]["measured"]] for c in bank_cases.MEASURED_COUNTERS[preset["op"]]
                                 if c in counts and counts[c]["measured"] is not None]
    assert recorded_on(CHAPTER)["device"] in shown["measuredText"]


def shown_settings(puzzle: dict) -> dict:
    """The explorer settings the puzzle panel judged (its verdict's data-settings)."""
    return bank_cases.settings(**puzzle["settings"])


@pytest.mark.slow
def test_bank_explorer_judges_its_puzzles_as_bank_puzzles_does(browser_report):
    """check_book.mjs's puzzle (EXPLORER_PUZZLE) chosen, answered with padding, its solution shown, and a
    link to it solved: each verdict, word for word, is tcgemm.smem.bank_puzzles' on the settings shown."""
    tried = explorer(browser_report).get("puzzle")
    if tried and not tried["found"]:
        pytest.skip(tried["reason"])  # the chapter's recorded explorer predates its puzzles
    assert tried and "reason" not in tried, tried
    assert "error" not in tried["link"], tried["link"]
    readings = {k: tried[k]["puzzle"] for k in ("chosen", "padded", "solved")} | {"link": tried["link"]["shown"]["puzzle"]}
    for step, shown in readings.items():
        verdict = bank_puzzles.puzzle_solved(shown["name"], shown_settings(shown))
        assert (shown["solved"], shown["problems"]) == (str(verdict.solved).lower(), list(verdict.problems)), step
    name, opened = readings["chosen"]["name"], shown_settings(readings["chosen"])
    start = bank_puzzles.start_settings(name)
    assert all(opened[k] == start[k] for k in ("access", "layout", "elem_bytes", "row_elems")), opened
    assert [r["solved"] for r in readings.values()] == ["false", "false", "true", "true"]
    assert readings["padded"]["problems"][0].startswith("the 16-byte stores: ")
    assert tried["hash"].startswith(f"#bank-explorer:puzzle={name}&")
    assert tried["menu"] == list(bank_puzzles.PUZZLES), "the book's puzzle menu is not in order of difficulty"
    for width, fits in tried["link"]["fits"].items():
        assert not fits["pageScrolls"] and fits["controlsOutside"] == [], (width, fits)


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


@pytest.mark.slow
def test_every_page_is_seen_in_light_and_dark_mode_at_the_figures_column(browser_report):
    """The theme switched with the reader's colour scheme, and its text column is the width the
    figures are drawn for (tcgemm.style.DISPLAY_COLUMN_PX)."""
    problems = []
    for page, entry in browser_report["pages"].items():
        for mode in MODES:
            shown = entry["presentation"].get(mode)
            if shown is None:
                problems.append(f"{page}: not measured in {mode} mode (see pageErrors)")
            elif shown["theme"] != mode:
                problems.append(f"{page}: html[data-theme] is {shown['theme']!r} when the reader asks for {mode}")
            elif shown["column"] != DISPLAY_COLUMN_PX:
                problems.append(f"{page} ({mode}): the text column is {shown['column']} px at "
                                f"{browser_report['viewport']['width']} px, DISPLAY_COLUMN_PX says {DISPLAY_COLUMN_PX}")
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_results_fit_their_output_area(browser_report):
    problems = findings(browser_report, "overflows", lambda f: (
        f"{in_cell(f)}: {'table in ' if f['kind'] == 'table' else ''}{f['element']} is {f['width']} px wide, "
        f"its output area {f['container']} px: {f['text']!r}"))
    assert not problems, f"{len(problems)} outputs wider than the text column:\n" + "\n".join(problems)


@pytest.mark.slow
def test_outputs_show_no_progress_bars(browser_report):
    problems = findings(browser_report, "progress", lambda f: (
        f"{in_cell(f)}: {f['lines']} progress line(s), such as {f['first']}"))
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_figures_are_shown_at_the_scale_they_are_drawn_for(browser_report):
    """Shown at least min(natural width, DISPLAY_COLUMN_PX) wide (to 1 px): with the figure test of
    tests/test_figure_legibility.py, no figure text below its minimum size as displayed."""
    problems = findings(browser_report, "smallFigures", lambda f: (
        f"{in_cell(f)}: {f['src']} ({f['natural']} px) is shown {f['width']} px wide, at least {f['needed']} needed"))
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_widget_and_table_text_contrast_passes_wcag_aa_in_both_modes(browser_report):
    """Every text of every widget (as recorded and after use) and of every output table, against
    what it is drawn on."""
    problems = findings(browser_report, "contrast", lambda f: (
        f"{f['widget']} ({f['state']}): {f['count']} x {f['element']} such as {f['text']!r}: "
        f"{f['color']} on {f['background']} (background of {f['backgroundOf']}) is {f['ratio']}:1, "
        f"WCAG AA needs {f['needed']}:1"))
    for page, entry in browser_report["pages"].items():
        for mode in MODES:
            if entry["widgetViews"] and not entry["presentation"].get(mode, {}).get("textsChecked"):
                problems.append(f"{page}: {entry['widgetViews']} widget(s) but no widget text measured [{mode}]")
    assert not problems, "\n".join(problems)


def toc_entries(report: dict):
    """(page, entry) of every page visited, index.html left out where it went on to a TOC page."""
    for page, entry in report["pages"].items():
        if entry["finalUrl"] != page and entry["finalUrl"] in report["pages"]:
            continue
        yield page, entry


@pytest.mark.slow
def test_figures_sit_on_the_page_in_both_modes(browser_report):
    """Each figure is recorded light and dark (tcgemm.dark_mode) and the theme shows the one of its
    mode (tcgemm.publish.dark_figures): as shown, no figure has edges of another colour than the page
    (the theme's light panel in dark mode), and the strongest ink of each (its text, axes, outlines)
    passes WCAG AA against its background, in both modes."""
    problems = findings(browser_report, "figures", lambda f: f"cell {f['cell']}: {f['src']}: " + (
        f["problem"] if "problem" in f else "; ".join(
            ([f"on a panel: its edge {f['edge']} on the page's {f['page']} is {f['edgeRatio']}:1"] if f["panel"] else [])
            + ([f"its strongest ink is {f['ink']}:1 against its edge, WCAG AA needs 4.5:1"] if f["faint"] else []))))
    checked = {mode: sum(entry["presentation"].get(mode, {}).get("figuresChecked", 0)
                         for _, entry in toc_entries(browser_report)) for mode in MODES}
    assert checked["light"] > 0 and checked["light"] == checked["dark"], \
        f"figures shown: {checked} (each figure once in each mode)"
    dark_pages = {entry["presentation"]["dark"]["page"] for _, entry in toc_entries(browser_report)
                  if "dark" in entry["presentation"]}
    assert dark_pages == {"#" + "".join(f"{round(c * 255):02x}" for c in DARK_PAGE)}, \
        f"the dark page is {dark_pages}: tcgemm.dark_mode.DARK_PAGE must be the theme's"
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_listings_and_widget_controls_follow_the_theme(browser_report):
    """The code listings (their bars, frames and code) and the widgets' controls are drawn in the
    mode's colours, on no panel of the other mode's (and a <select> in the mode's colour-scheme, its
    drop-down list included); each listing's bar says "click to show", and once open "click to hide"."""
    problems = findings(browser_report, "panels", lambda f: (
        f"cell {f['cell']}: {f['count']} x {f['element']} ({f['text']!r}): {'; '.join(f['problems'])}"))
    listings = [(page, listing) for page, entry in toc_entries(browser_report) for listing in entry["listings"]]
    assert listings, "no code listing on any page"
    for page, listing in listings:
        if not (listing["opened"] and listing["closed"].endswith("(click to show)")
                and listing["open"].endswith("(click to hide)") and "click to show" not in listing["open"]):
            problems.append(f"{page}: a listing's bar says {listing['closed']!r}, and once clicked "
                            f"{listing['open']!r} ({'open' if listing['opened'] else 'still closed'})")
    assert not problems, "\n".join(problems)


# A made-up page with one of each problem (and a harmless twin of each): the theme's mode switch
# mimicked, a 688 px column, four outputs too wide (one a <pre> in a <details> that does not scroll;
# a listing beside it that scrolls in its box fits; one in a widget, beside a grid that scrolls in
# its box), two progress lines, a figure shown at 30%, widget
# and table text that fails in dark mode only, faded text that fails in both, and a disabled button
# (exempt from contrast, but a light box on the dark page); a figure in two variants, one light
# figure alone (a panel in dark mode), one whose ink fades into the dark page; a light <select> in a
# widget (a panel in dark mode, in the light colour-scheme), and a code listing (tcgemm.engine.source).
def png_uri(background, ink, size=(120, 40)) -> str:
    """A PNG as a data: URI: a picture of ``background`` (RGBA) with a bar of ``ink`` in its middle."""
    import base64
    import io

    from PIL import Image, ImageDraw

    image = Image.new("RGBA", size, background)
    ImageDraw.Draw(image).rectangle((20, 15, 100, 25), fill=ink)
    data = io.BytesIO()
    image.save(data, format="PNG")
    return "data:image/png;base64," + base64.b64encode(data.getvalue()).decode()


PROBLEM_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
  body { margin: 0; font: 13px sans-serif; }
  html[data-theme="dark"] body { background: #14181e; color: #ced6dd; }
  article.bd-article { width: 688px; padding: 0 32px; }
  pre { overflow: auto; }
  .dim { color: #222; } html[data-theme="dark"] .dim { color: #333; }
  .faded { opacity: 0.3; }
  button { color: #ccc; background: #eee; }
  html[data-theme="light"] { color-scheme: light; } html[data-theme="dark"] { color-scheme: dark; }
  html[data-theme="light"] .only-dark, html[data-theme="dark"] .only-light { display: none; }
</style><script>
  const dark = matchMedia("(prefers-color-scheme: dark)");
  const set = () => { document.documentElement.dataset.theme = dark.matches ? "dark" : "light"; };
  set(); dark.addEventListener("change", set);
</script></head><body><article class="bd-article">
<div class="cell"><div class="cell_input"><pre>print(wide)</pre></div>
  <div class="cell_output"><pre>{wide}</pre><pre>short line</pre></div></div>
<div class="cell"><div class="cell_input"><pre>show_kernel(key)</pre></div>
  <div class="cell_output"><details open><summary>listing</summary>
  <pre style="overflow-x: auto; max-width: 100%">{wide}</pre></details></div></div>
<div class="cell"><div class="cell_input"><pre>unscrolled(key)</pre></div>
  <div class="cell_output"><details open><summary>not scrolling</summary>
  <pre style="overflow: visible">{wide}</pre></details></div></div>
<div class="cell"><div class="cell_input"><pre>wide_table</pre></div>
  <div class="cell_output"><div><table><tr><td style="min-width: 900px">wide</td></tr></table></div>
  <table><tr><td class="dim">narrow</td></tr></table></div></div>
<div class="cell"><div class="cell_input"><pre>bench()</pre></div>
  <div class="cell_output"><pre>[######......]  6/12  a kernel\r 50%|#####     | 5/10 [00:01&lt;00:01]\nresult [1, 2]</pre></div></div>
<div class="cell"><div class="cell_input"><pre>figure()</pre></div>
  <div class="cell_output"><img src="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='1000' height='50'/%3E" style="width: 300px">
  <img src="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='200' height='50'/%3E"></div></div>
<div class="cell"><div class="cell_input"><pre>Widget()</pre></div>
  <div class="cell_output"><div class="widget-subarea"><div class="tcgemm-widget tcgemm-made-up">
  <span class="dim">dim in dark</span> <span class="faded">faded</span> <span>fine</span>
  <button disabled>off</button><div style="overflow-x: auto"><div style="width: 900px; height: 1px"></div></div>
  <select style="background: #fff; color: #000; color-scheme: light"><option>light select</option></select>
  <div style="width: 800px; height: 1px"></div></div></div></div></div>
<div class="cell"><div class="cell_input"><pre>figure_pair()</pre></div>
  <div class="cell_output"><img class="only-light" src="{light}"><img class="only-dark" src="{dark}"></div></div>
<div class="cell"><div class="cell_input"><pre>light_only()</pre></div>
  <div class="cell_output"><img src="{light}"></div></div>
<div class="cell"><div class="cell_input"><pre>faint()</pre></div>
  <div class="cell_output"><img class="only-dark" src="{faint}"></div></div>
<div class="cell"><div class="cell_input"><pre>show_kernel("x")</pre></div>
  <div class="cell_output"><div class="output text_html">{listing}</div></div></div>
</article></body></html>
""".replace("{wide}", "x" * 200).replace("{light}", png_uri((255, 255, 255, 255), (0, 0, 0, 255))).replace(
    "{dark}", png_uri((0, 0, 0, 0), (240, 240, 240, 255))).replace("{faint}", png_uri((0, 0, 0, 0), (51, 51, 51, 255))).replace(
    "{listing}", Listing("x.cu", "int x;")._repr_html_())


def test_presentation_checks_catch_each_problem(tmp_path):
    require_browser()
    (tmp_path / "page.html").write_text(PROBLEM_PAGE)
    report = check_book(tmp_path, tmp_path / "report.json", ["page.html"])
    entry = report["pages"]["page.html"]
    assert not entry["pageErrors"], entry["pageErrors"]
    for mode in MODES:
        shown = entry["presentation"][mode]
        assert shown["theme"] == mode and shown["column"] == 688
        assert [(f["cell"], f["kind"], f["element"]) for f in shown["overflows"]] == [
            (1, "output", "pre"), (3, "output", "div.cell_output"), (4, "output", "div.cell_output"),
            (4, "table", "div"), (7, "output", "div.cell_output")], \
            shown["overflows"]
        assert shown["overflows"][0]["width"] > 688 >= shown["overflows"][0]["container"]
        assert shown["overflows"][-1]["width"] < 900  # the widget's 800 px text, not its scrolling grid
        assert [(f["cell"], f["lines"]) for f in shown["progress"]] == [(5, 2)], shown["progress"]
        assert [(f["cell"], f["natural"], f["width"], f["needed"]) for f in shown["smallFigures"]] == [
            (6, 1000, 300, DISPLAY_COLUMN_PX)], shown["smallFigures"]
        failing = {f["text"]: f for f in shown["contrast"]}
        assert sorted(failing) == (["dim in dark", "faded", "narrow"] if mode == "dark" else ["faded"]), \
            shown["contrast"]
        assert failing["faded"]["ratio"] < 3 and failing["faded"]["widget"] == "tcgemm-made-up"
        # widget, tables, as recorded and after use; the listing's bar, then its bar and code
        assert shown["textsChecked"] == 2 * (4 + 2) + 2 + 2
        dark = mode == "dark"
        assert shown["figuresChecked"] == (5 if dark else 4)  # cell 6's two, cell 8's one, cell 9, cell 10 in dark
        assert sorted((f["cell"], f["panel"], f["faint"]) for f in shown["figures"]) == (
            [(9, True, False), (10, False, True)] if dark else []), shown["figures"]
        assert sorted((f["cell"], f["element"]) for f in shown["panels"]) == (
            [(7, "button"), (7, "select")] if dark else []), shown["panels"]
        if dark:
            assert any("color-scheme light" in p for f in shown["panels"] for p in f["problems"]), shown["panels"]
    assert entry["listings"] == [{"closed": "x.cu, 1 lines (click to show)", "open": "x.cu, 1 lines (click to hide)",
                                  "opened": True}]


# --- the size of what the reader reads: figure text and code lines (tests/browser/text_size.mjs) ---

def text_sizes(html: Path, out: Path, pages: list[str]) -> dict:
    """Run text_size.mjs on these pages under html; its JSON report."""
    run = subprocess.run(["node", str(BROWSER_DIR / "text_size.mjs"), str(html), str(out), *pages],
                         capture_output=True, text=True, timeout=60 + 20 * len(pages))
    assert run.returncode == 0 and out.is_file(), f"text_size.mjs failed:\n{run.stdout}{run.stderr}"
    report = json.loads(out.read_text())
    assert sorted(report["pages"]) == sorted(pages), "text_size.mjs did not visit every page"
    return report


def text_size_problems(report: dict, figures: dict) -> list[str]:
    """What text_size.mjs measured, judged. figures: an image's file name -> its smallest text
    (tests/test_figure_legibility.FigureText). A figure's smallest text is shown at its size in the
    PNG times the scale the page shows the PNG at (shown width / natural width): that is what the
    reader sees, whatever the PNG holds, so a page (CSS, a narrower column) that shrinks a figure
    fails here. The sizes are the registry's drawing's, so the PNG of a figure drawn without a GPU
    must be that drawing (its width, to 2 px), not one recorded from older code. A code cell's <pre>
    must hold TEXT_COLUMN_CHARS characters, and no <pre> may be wider than its box (a scrollbar, or
    a line cut off)."""
    seen: dict[str, list[str]] = {}
    for page, entry in report["pages"].items():
        if entry["error"]:
            seen.setdefault(f"{page}: not measured: {entry['error']}", [])
            continue
        for mode in MODES:
            shown = entry[mode]
            say = lambda text: seen.setdefault(f"{page}: {text}", []).append(mode)  # noqa: E731
            if shown["theme"] != mode:
                say(f"the theme is {shown['theme']!r}, not {mode!r}")
            for img in shown["images"]:
                known = figures.get(img["src"])
                where = f"cell {img['cell']} ({img['source']!r})"
                if known is None:
                    say(f"{where}: {img['src']} is no recorded figure of tests/test_figure_legibility.py")
                    continue
                if known.drawn_width is not None and abs(img["natural"] - known.drawn_width) > 2:
                    say(f"{where}: {known.where}'s PNG is {img['natural']} px wide, its figure code draws "
                        f"{known.drawn_width}: recorded from older code (make record)")
                px = known.png_px * img["width"] / img["natural"]
                if px < known.floor - 0.005:
                    say(f"{where}: {known.where}'s smallest text, {known.png_px:.1f} px in the PNG, is shown at "
                        f"{px:.1f} px ({img['width']:.0f} of {img['natural']} px wide); at least "
                        f"{known.floor} px needed")
            for pre in shown["pres"]:
                where = f"{pre['where']} of cell {pre['cell']} ({pre['source']!r})" if pre["cell"] else "prose"
                if pre["scrollWidth"] > pre["clientWidth"]:
                    say(f"{where}: a <pre> {pre['scrollWidth']} px wide in {pre['clientWidth']} px "
                        f"(its longest line, {pre['chars']} characters: {pre['longest'][:60]!r})")
                if pre["where"] != "prose" and pre["room"] < TEXT_COLUMN_CHARS:
                    say(f"{where}: its <pre> holds {pre['room']} characters of {pre['charPx']:.2f} px, "
                        f"tcgemm.style.TEXT_COLUMN_CHARS says {TEXT_COLUMN_CHARS}")
    return [f"{text} [{', '.join(modes)}]" for text, modes in seen.items()]


@pytest.fixture(scope="module")
def text_size_report(request, tmp_path_factory) -> dict:
    """text_size.mjs's report on every TOC page of the session's build."""
    require_browser()
    built_book = request.getfixturevalue("built_book")
    if built_book.returncode != 0:
        pytest.fail("the book did not build (see test_book_build.py)")
    return text_sizes(built_book.html, tmp_path_factory.mktemp("text-size") / "report.json", built_book.pages)


@pytest.mark.slow
def test_figure_text_and_code_lines_are_readable_as_shown(text_size_report):
    """At 1280 px, in light and dark mode: every figure's smallest text shown at MIN_DISPLAY_TEXT_PX
    or more (a figure of tests/test_figure_legibility.NARROWER at its floor), from the size in the
    PNG and the scale the page shows it at; no <pre> scrolls sideways or cuts a line off; each code
    cell's <pre> holds TEXT_COLUMN_CHARS characters (tests/test_notebooks_recorded.py keeps code and
    text outputs to that)."""
    from test_figure_legibility import figure_texts

    figures = figure_texts()
    # each figure's PNG in light mode and its dark variant (tcgemm.dark_mode) in dark mode
    shown = sum(len(entry.get(mode, {}).get("images", [])) for entry in text_size_report["pages"].values()
                for mode in MODES)
    assert shown >= len(figures), f"{shown} figures measured in both modes, {len(figures)} PNGs recorded"
    problems = text_size_problems(text_size_report, figures)
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)


# A made-up page: a figure 500 px wide whose smallest text is 12.5 px in its PNG, shown whole and
# shrunk to 300 px (7.5 px, below MIN_DISPLAY_TEXT_PX); an image no registry knows; a code cell
# with a line too long for its <pre>, an output that fits, and a long listing folded in a closed
# <details> (not shown, so not measured).
TEXT_SIZE_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
  body { margin: 0; } article { width: 700px; }
  pre { overflow: auto; padding: 0 16px; font: 14px monospace; }
</style><script>
  const dark = matchMedia("(prefers-color-scheme: dark)");
  const set = () => { document.documentElement.dataset.theme = dark.matches ? "dark" : "light"; };
  set(); dark.addEventListener("change", set);
</script></head><body><article class="bd-article">
<div class="cell"><div class="cell_input"><pre>figure()</pre></div>
  <div class="cell_output"><img src="figure.png"><img src="figure.png" style="width: 300px"></div></div>
<div class="cell"><div class="cell_input"><pre>other()</pre></div>
  <div class="cell_output"><img src="other.png"></div></div>
<div class="cell"><div class="cell_input"><pre>{long}</pre></div>
  <div class="cell_output"><pre>short</pre>
  <details><summary>listing</summary><pre>{long}</pre></details></div></div>
</article></body></html>
""".replace("{long}", "x = 1  # " + "y" * 120)


def test_text_size_checks_catch_each_problem(tmp_path):
    require_browser()
    from test_figure_legibility import FigureText

    for name, width in (("figure.png", 500), ("other.png", 200)):
        fig = Figure(figsize=(width / RECORD_DPI, 1), dpi=RECORD_DPI)
        fig.text(0.5, 0.5, "nine points", fontsize=9, ha="center")
        fig.savefig(tmp_path / name)
    (tmp_path / "page.html").write_text(TEXT_SIZE_PAGE)
    report = text_sizes(tmp_path, tmp_path / "report.json", ["page.html"])
    figures = {"figure.png": FigureText(("made-up", "cell"), 9 * RECORD_DPI / 72, MIN_DISPLAY_TEXT_PX)}
    for mode in MODES:
        images = report["pages"]["page.html"][mode]["images"]
        assert [(i["cell"], i["src"], i["natural"], round(i["width"])) for i in images] == [
            (1, "figure.png", 500, 500), (1, "figure.png", 500, 300), (2, "other.png", 200, 200)]
        pres = report["pages"]["page.html"][mode]["pres"]
        assert [(p["where"], p["cell"], p["scrollWidth"] > p["clientWidth"]) for p in pres] == [
            ("input", 1, False), ("input", 2, False), ("input", 3, True), ("output", 3, False)]
    problems = text_size_problems(report, figures)
    assert len(problems) == 3, problems
    assert "shown at 7.5 px (300 of 500 px wide); at least 9.0 px needed [light, dark]" in problems[0]
    assert "other.png is no recorded figure" in problems[1]
    assert problems[2].startswith("page.html: input of cell 3 ('x = 1  # yyy") and "129 characters" in problems[2]
