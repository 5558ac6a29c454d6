"""Every figure the book's notebooks draw is legible at the width the book shows it, and says in its
alt text what it shows.

FIGURES lists each figure-drawing cell of the notebooks with the call it makes; the test checks that the
list matches the notebooks, rebuilds each figure with the same arguments (for GPU cells, from made-up
timings of the same kernels) and measures its smallest text as displayed in the book's text column
(tcgemm.style.displayed_text_sizes): at least MIN_DISPLAY_TEXT_PX, or the floor NARROWER gives it with
its reason.

The browser checks the other half, on the built book (tests/test_browser.py with
tests/browser/text_size.mjs): each <img> of a code cell's output is the PNG a cell recorded (the
book names it by its sha256), whose smallest text is the registry figure's (figure_texts, in PNG
pixels at the PNG's own dpi); shown at `width` of its `natural` pixels, that text is
smallest × width / natural CSS px, which must reach the same floor. A page that shrinks a figure
(CSS, a narrower column) fails there, whatever matplotlib said.
"""
import ast
import base64
import hashlib
import io
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from tcgemm.engine.catalog import GEMM_KERNELS  # noqa: E402
from tcgemm.numerics import draw_numerics  # noqa: E402
from tcgemm.dark_mode import DARK_MIME  # noqa: E402
from tcgemm.fragments import draw, wmma  # noqa: E402
from tcgemm.hopper import draw_wgmma  # noqa: E402
from tcgemm.hopper.split_waves import split_figure  # noqa: E402
from tcgemm import canonical, fragment_layouts, layouts  # noqa: E402
from tcgemm.pipelines import ablation, draw_pipeline  # noqa: E402
from tcgemm.engine.gpu.bench import CUBLAS, CUBLAS_SGEMM, GROUPS, Comparison  # noqa: E402  (imports no CuPy)
from tcgemm.hw import peak_for  # noqa: E402
from tcgemm.engine.report import SWEEP_SHAPES, BenchResult, summarize, sweep_figure  # noqa: E402
from tcgemm.engine.results import comparison_figure, load, load_all  # noqa: E402
from tcgemm.numerics.rounding import MMA_TYPES  # noqa: E402
from tcgemm.sgemm import draw_regbank, draw_sgemm, regbank  # noqa: E402
from tcgemm.smem import banks, draw_banks  # noqa: E402
from tcgemm.hopper.power import Sample, Sustained, sustained_figure  # noqa: E402
from tcgemm.hopper.timeline import FIRST_TILE_SLOT, TRACE_SLOTS, TileTimeline  # noqa: E402
from tcgemm.style import (  # noqa: E402
    COLUMN_WIDTH_IN, DISPLAY_COLUMN_PX, MIN_DISPLAY_TEXT_PX, RECORD_DPI, displayed_text_sizes, new_figure,
)

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
# A call that draws a figure, as the notebooks spell it.
DRAWING_CALL = re.compile(r"\b(\w+_figure|bar_chart|fragment_grid|lane_legend|figure)\(")

H100 = "NVIDIA H100 80GB HBM3"


def compared_keys(source: str) -> list[str]:
    """The kernel keys of the cell's tcgemm.engine.gpu.bench.compare_timings(...) call: a list literal, or a name
    the cell assigns a list literal to."""
    tree = ast.parse("\n".join(line for line in source.splitlines() if not line.startswith("%")))
    (call,) = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "compare_timings"]
    arg = call.args[0]
    if isinstance(arg, ast.Name):
        (arg,) = [n.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
                  and any(getattr(t, "id", "") == arg.id for t in n.targets)]
    return ast.literal_eval(arg)


def timeline_figure(blocks: int, tiles: int, short: int):
    """TileTimeline.figure of a made-up launch: `blocks` blocks of `tiles` tiles (`short` of one fewer),
    each tile 2 µs of wait, 47 µs of main loop and 3.5 µs of store."""
    stamps = np.zeros((blocks, TRACE_SLOTS), np.int64)
    for b in range(blocks):
        t = 1_000_000 + 37 * b % 300
        stamps[b, :2] = t, b
        for i in range(tiles - (b >= blocks - short)):
            for j, step in enumerate((2_000, 47_000, 3_500)):
                t += step
                stamps[b, FIRST_TILE_SLOT + 3 * i + j] = t
        stamps[b, -1] = t + 500
    return TileTimeline(stamps, "Kernel 5.6, 4096x4096x4096").figure()


def power_figure():
    """sustained_figure of made-up runs of the cell's five kernels: the clock from 1980 MHz down to
    1590-1790 MHz at the 700 W limit after 0.3 s, the probe at 1980 MHz and 520 W throughout."""
    runs = []
    for i, (label, mhz, watts) in enumerate([("cuBLAS", 1590, 700), ("Kernel 5.0", 1790, 705), ("Kernel 5.6", 1580, 695),
                                             ("Kernel 5.7", 1575, 690), ("mma.sync ceiling probe", 1980, 520)]):
        t = np.arange(0, 1.5, 0.02)
        samples = tuple(Sample(x, 1980.0 if x < 0.3 else mhz, 300.0 if x < 0.3 else watts, 50.0, 0 if x < 0.3 else 4)
                        for x in t)
        launch = np.full(6000, 2.5e-4)
        runs.append(Sustained(label, launch, np.cumsum(launch), samples, 0.5, 700.0, 1e11, i < 4))
    return sustained_figure(runs)


def bench_figure(where) -> object:
    """The bar chart of the cell's compare(...) on an H100, from made-up timings of the same kernels,
    named as tcgemm.engine.gpu.bench names them (a tuned kernel with its configuration)."""
    keys = compared_keys("".join(CELLS[where]["source"]))
    (dtype,) = {GEMM_KERNELS[k].in_dtype for k in keys}
    results = [BenchResult(name=CUBLAS if dtype == "float16" else CUBLAS_SGEMM, M=4096, N=4096, K=4096,
                           timing=summarize([2e-4]), passed=True, key=GROUPS[dtype].baseline)]
    for i, key in enumerate(keys):
        spec = GEMM_KERNELS[key]
        name = f"{spec.title} ({spec.variant})" if spec.configs else spec.title
        results.append(BenchResult(name=name, M=4096, N=4096, K=4096, timing=summarize([1e-3 / (i + 1)]),
                                   passed=True, key=key))
    return Comparison(device=H100, dtype=dtype, M=4096, N=4096, K=4096, results=tuple(results),
                      peak=peak_for(H100)).figure()


def sweep_rows() -> list[dict]:
    """The pipelines chapter's size sweep, labelled as tcgemm.engine.gpu.bench.size_sweep labels it."""
    return [{"family": family, "label": f"{M}x{N}x{K}", "kernel_tflops": 300.0 + i, "cublas_tflops": 600.0 - i}
            for family, mnks in SWEEP_SHAPES.items() for i, (M, N, K) in enumerate(mnks)]


def matmul_sweep_figure():
    """The matmul chapter's sweep figure (tcgemm.engine.sweep.sweep_figure) of made-up rows: every shape
    and pair of types of the sweep, at 40% to 104% of cuBLAS."""
    from tcgemm.engine.sweep import SHAPES, TYPES, SweepRow, sweep_figure
    rows = [SweepRow(M, N, K, *types, "k5.9", 100.0, 40 + (i * 7 + j * 13) % 65, 150.0, None, "PASS")
            for j, types in enumerate(TYPES) for i, (M, N, K) in enumerate(SHAPES)]
    return sweep_figure(rows, "NVIDIA H100 80GB HBM3: tcgemm.matmul against cuBLAS")


def _bank_map():
    plain, permuted = layouts.row_major(32, 2), layouts.xor_permuted()
    return draw_banks.bank_map_figure({
        "row-major": (plain, banks.ldmatrix_tile(plain, num=4)),
        "XOR-permuted": (permuted, banks.ldmatrix_tile(permuted, num=4)),
    })


# (notebook, cell id) -> (the drawing call the cell makes, a function that draws the same figure)
FIGURES = {
    ("bank_conflicts", "e39b31ad"): ("draw_banks.bank_map_figure(", _bank_map),
    ("bank_conflicts", "af27ba19"): ("draw_banks.permutation_figure(permuted, rows=16)",
                                     lambda: draw_banks.permutation_figure(layouts.xor_permuted(), rows=16)),
    ("bank_conflicts", "aad36a3c"): ("fp16.figure()", lambda: bench_figure(("bank_conflicts", "aad36a3c"))),
    ("ldmatrix", "828007e0"): ("draw.ldmatrix_figure(1)", lambda: draw.ldmatrix_figure(1)),
    ("ldmatrix", "1df19590"): ("draw.ldmatrix_figure(2)", lambda: draw.ldmatrix_figure(2)),
    ("ldmatrix", "a1be8ec3"): ("draw.ldmatrix_figure(4)", lambda: draw.ldmatrix_figure(4)),
    ("ldmatrix", "d7cd327e"): ("draw.ldmatrix_figure(2, trans=True)", lambda: draw.ldmatrix_figure(2, trans=True)),
    ("mma_fragments", "06f48705"): ('draw.mma_product_figure("m16n8k16", "f16", "f32")',
                                    lambda: draw.mma_product_figure("m16n8k16", "f16", "f32")),
    ("mma_fragments", "9ce9ff3f"): ('draw.mma_product_figure("m16n8k8", "f16", "f32")',
                                    lambda: draw.mma_product_figure("m16n8k8", "f16", "f32")),
    ("mma_fragments", "c3c0307f"): ('draw.mma_product_figure("m16n8k32", "s8", "s32")',
                                    lambda: draw.mma_product_figure("m16n8k32", "s8", "s32")),
    ("data_types", "dt-tf32-figure"): ('draw.mma_product_figure("m16n8k8", "tf32", "f32")',
                                       lambda: draw.mma_product_figure("m16n8k8", "tf32", "f32")),
    ("data_types", "dt-fp8-figure"): ('draw.mma_product_figure("m16n8k32", "e4m3", "f32")',
                                      lambda: draw.mma_product_figure("m16n8k32", "e4m3", "f32")),
    # The probe observes the documented layout on a working GPU; the figure is drawn the same way.
    ("mma_fragments", "284641db"): ('draw.fragment_grid(observed, title="A of m16n8k16, as observed on this GPU")',
                                    lambda: draw.fragment_grid(fragment_layouts.mma_layout("m16n8k16", "A", "f16", "f32"),
                                                               title="A of m16n8k16, as observed on this GPU")),
    ("mma_fragments", "c2cd9e3b"): ("draw.ldmatrix_figure(4)", lambda: draw.ldmatrix_figure(4)),
    ("mma_fragments", "a9dd60b3"): ("fp16.figure()", lambda: bench_figure(("mma_fragments", "a9dd60b3"))),
    ("pipelines", "2aac889f"): ("draw_pipeline.timeline_figure(n_stages=2, k_tiles=8, copy_time=3.0, compute_time=1.0)",
                                lambda: draw_pipeline.timeline_figure(n_stages=2, k_tiles=8, copy_time=3.0,
                                                                      compute_time=1.0)),
    ("pipelines", "4c0d2f48"): ("draw_pipeline.timeline_figure(n_stages=4, k_tiles=8, copy_time=3.0, compute_time=1.0)",
                                lambda: draw_pipeline.timeline_figure(n_stages=4, k_tiles=8, copy_time=3.0,
                                                                      compute_time=1.0)),
    ("pipelines", "b844be44"): ("draw_pipeline.ring_figure(n_stages=4, iteration=2, k_tiles=8)",
                                lambda: draw_pipeline.ring_figure(n_stages=4, iteration=2, k_tiles=8)),
    ("pipelines", "753aec3a"): ("fp16.figure()", lambda: bench_figure(("pipelines", "753aec3a"))),
    ("pipelines", "fa9d122f"): ("sweep_figure(sweep, title=", lambda: sweep_figure(
        sweep_rows(), title=f"{GEMM_KERNELS['k4.6'].title} vs cuBLAS on {H100}")),
    # Made-up timings of Kernel 4.4 and of each step switched off.
    ("ablation", "ab-measured"): ("ablation_figure(measurements)", lambda: ablation.ablation_figure(
        [ablation.Measurement(s, 4096, 4096, 4096, True, "PASS", summarize([(3.3 + 0.3 * i) * 1e-4]), 200, 0)
         for i, s in enumerate((None, *ablation.ABLATED))])),
    # Made-up errors of every mma type (int8: exact), as tcgemm.numerics.gpu.rounding.errors_vs_k returns them.
    ("numerics", "nm-errors-figure"): ("errors_figure(errors)", lambda: draw_numerics.errors_figure(
        {label: [(K, 0.0 if label.startswith("int8") else 1e-7 * 4 ** i * K ** 0.5, 0.0)
                 for K in (64, 256, 1024, 4096, 16384, 65536)] for i, label in enumerate(MMA_TYPES)})),
    ("wmma", "wm-expected-acc"): ('draw.fragment_grid(wmma.mma_pair("f32 accumulator"), title="Two m16n8k16 '
                                  'accumulators side by side")',
                                  lambda: draw.fragment_grid(wmma.mma_pair("f32 accumulator"),
                                                             title="Two m16n8k16 accumulators side by side")),
    # The probe observes a WMMA fragment on the GPU; drawn here from the map the book expects.
    ("wmma", "wm-observed-a"): ('draw.fragment_grid(a, title="wmma matrix_a (fp16, row_major), x[0:8], observed")',
                                lambda: draw.fragment_grid(wmma.first_copy(wmma.expected("f16 matrix_a row_major")),
                                                           title="wmma matrix_a (fp16, row_major), x[0:8], observed")),
    ("wmma", "wm-observed-acc"): ('draw.fragment_grid(acc, title="wmma accumulator (fp32), observed")',
                                  lambda: draw.fragment_grid(wmma.first_copy(wmma.expected("f32 accumulator")),
                                                             title="wmma accumulator (fp32), observed")),
    # The recorded runs of results/, or one test run before any is recorded.
    ("matmul", "mm-sweep-figure"): ("sweep_figure(rows", lambda: matmul_sweep_figure()),
    ("results", "0db10dfc"): ("comparison_figure(docs)", lambda: comparison_figure(
        load_all(ROOT / "results") or [load(ROOT / "tests" / "data" / "bench_h100_readme_2026-11-22.json")])),
    ("sgemm", "sgemm-05"): ("draw_sgemm.thread_layout_figure(64)", lambda: draw_sgemm.thread_layout_figure(64)),
    ("sgemm", "sgemm-10"): ("draw_sgemm.load_pattern_figure(64)", lambda: draw_sgemm.load_pattern_figure(64)),
    ("sgemm", "sgemm-12"): ("draw_sgemm.writeback_figure(64, p=0)", lambda: draw_sgemm.writeback_figure(64, p=0)),
    ("sgemm", "sgemm-15"): ("draw_sgemm.thread_layout_figure(128)", lambda: draw_sgemm.thread_layout_figure(128)),
    ("sgemm", "sgemm-17"): ("draw_regbank.numbering_figure(regbank.naive_numbering(), regbank.MAXWELL, reuse_slots=())",
                            lambda: draw_regbank.numbering_figure(regbank.naive_numbering(), regbank.MAXWELL,
                                                                  reuse_slots=())),
    ("sgemm", "sgemm-19"): ("draw_regbank.numbering_figure(numbering, regbank.MAXWELL, reuse_slots=())",
                            lambda: draw_regbank.numbering_figure(regbank.conflict_free_numbering(regbank.MAXWELL),
                                                                  regbank.MAXWELL, reuse_slots=())),
    ("sgemm", "sgemm-24"): ('draw_regbank.order_figure("Maxas swirl", numbering, regbank.MAXWELL, '
                            'reuse_slots=("a", "b"), reuse_depth=2)',
                            lambda: draw_regbank.order_figure("Maxas swirl",
                                                              regbank.conflict_free_numbering(regbank.MAXWELL),
                                                              regbank.MAXWELL, reuse_slots=("a", "b"), reuse_depth=2)),
    ("sgemm", "sgemm-36"): ("fp32.figure()", lambda: bench_figure(("sgemm", "sgemm-36"))),
    ("hopper", "hp-acc-fig"): ("draw_wgmma.accumulator_figure(16)", lambda: draw_wgmma.accumulator_figure(16)),
    ("hopper", "hp-modes-fig"): ("draw_banks.swizzle_modes_figure()", draw_banks.swizzle_modes_figure),
    ("hopper", "hp-xor-fig"): ("draw_banks.permutation_figure(tile, rows=8, chunks=8)",
                               lambda: draw_banks.permutation_figure(canonical.kmajor_layout("128B", 8, 64),
                                                                     rows=8, chunks=8)),
    ("hopper", "mn-atom-fig"): ('draw_banks.permutation_figure(atoms, rows=16, chunks=8, row_label="row of K",\n'
                                '                             chunk_label="chunk of 8 along N")',
                                lambda: draw_banks.permutation_figure(canonical.mnmajor_layout("128B", 64, 16),
                                                                      rows=16, chunks=8, row_label="row of K",
                                                                      chunk_label="chunk of 8 along N")),
    ("hopper", "pp-fig"): ("ping_pong_figure()", draw_pipeline.ping_pong_figure),
    ("hopper", "sk-fig"): ("split_figure()", split_figure),
    # The timeline is taken on the GPU; drawn here from made-up stamps of the same launch's shape.
    ("hopper", "tl-fig"): ("runs[0].figure()", lambda: timeline_figure(blocks=132, tiles=4, short=16)),
    ("hopper", "pw-fig"): ("sustained_figure(sustained)", power_figure),
}

# Figures whose smallest text may be shown below MIN_DISPLAY_TEXT_PX: (notebook, cell id) -> (floor
# in CSS px, why).
NARROWER = {
    ("sgemm", "sgemm-15"): (8.3, "the 128×128 tile names 1024 blocks with three-digit threads, 32 "
                                 "across the column: a larger font runs neighbouring numbers together"),
}


def floor_of(where) -> float:
    return NARROWER.get(where, (MIN_DISPLAY_TEXT_PX, ""))[0]


def test_displayed_size_is_font_size_at_the_recorded_dpi_scaled_to_the_column():
    narrow = new_figure(3, 1)
    narrow.text(0.5, 0.5, "ten points", fontsize=10)
    shown = displayed_text_sizes(narrow)
    assert shown.scale == 1 and shown.width_px <= 300
    assert [(t.text, t.px) for t in shown.texts] == [("ten points", pytest.approx(10 * RECORD_DPI / 72))]

    wide = new_figure(2.5 * COLUMN_WIDTH_IN, 1)
    wide.text(0.0, 0.5, "left", fontsize=12)
    wide.text(1.0, 0.5, "right", fontsize=9, ha="right")
    ax = wide.add_axes([0.4, 0.2, 0.2, 0.6])
    ax.set_axis_off()   # its tick labels are not drawn, so they do not count
    shown = displayed_text_sizes(wide)
    assert shown.width_px == pytest.approx(2.5 * COLUMN_WIDTH_IN * RECORD_DPI + 20, abs=2)
    assert shown.scale == pytest.approx(DISPLAY_COLUMN_PX / shown.width_px)
    assert {t.text for t in shown.texts} == {"left", "right"}
    assert shown.smallest.text == "right"
    assert shown.smallest.px == pytest.approx(9 * RECORD_DPI / 72 * shown.scale)


def figure_cells() -> dict[tuple[str, str], dict]:
    """Every code cell of the book's notebooks that draws a figure or has a recorded image."""
    cells = {}
    for path in sorted(BOOK.glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "code":
                continue
            has_image = any("image/png" in out.get("data", {}) for out in cell.get("outputs", []))
            if has_image or DRAWING_CALL.search("".join(cell["source"])):
                cells[(path.stem, cell["id"])] = cell
    return cells


CELLS = figure_cells()


def squeezed(code: str) -> str:
    """Code without its whitespace: a call still matches when its cell wraps its arguments."""
    return re.sub(r"\s+", "", code)


@dataclass(frozen=True)
class FigureText:
    """The smallest text of a recorded figure, for the browser test."""
    where: tuple[str, str]  # (notebook, cell id)
    png_px: float           # its font size in pixels of the PNG
    floor: float            # the least CSS px it may be shown at
    drawn_width: int | None = None  # the PNG width the registry draws (not for gpu cells' made-up data)


def png_dpi(png: bytes) -> float:
    """The dpi a PNG says it was printed at (its pHYs chunk; matplotlib writes the figure's dpi)."""
    from PIL import Image

    dpi = Image.open(io.BytesIO(png)).info.get("dpi")
    return round(float(dpi[0]), 1) if dpi else float(RECORD_DPI)  # pHYs counts per metre: 99.9998


def figure_texts() -> dict[str, FigureText]:
    """Every recorded figure of the notebooks by the file name the built book gives it (the sha256
    of the PNG, .png) -> its smallest text: the registry's figure of that cell, measured unscaled,
    in pixels of the PNG at the dpi the PNG was printed at. For a cell that draws without a GPU, the
    width the registry's drawing prints at, to tell a PNG recorded from older drawing code."""
    drawn = {}
    found = {}
    for where, cell in CELLS.items():
        for out in cell.get("outputs", []):
            data = out.get("data", {}).get("image/png")
            if data is None or where not in FIGURES:
                continue
            if where not in drawn:
                fig = FIGURES[where][1]()
                shown = displayed_text_sizes(fig, column_px=math.inf)
                on_cpu = "gpu" not in cell.get("metadata", {}).get("tags", [])
                drawn[where] = (shown.smallest.px * 72 / fig.dpi, shown.width_px if on_cpu else None)
            smallest_pt, width = drawn[where]
            # and its dark variant (tcgemm.dark_mode), shown in dark mode: the same drawing, the same size
            for variant in (data, out["data"].get(DARK_MIME)):
                if variant is None:
                    continue
                png = base64.b64decode("".join(variant))
                found[hashlib.sha256(png).hexdigest() + ".png"] = FigureText(
                    where, smallest_pt * png_dpi(png) / 72, floor_of(where), width)
    return found


def test_figures_lists_every_figure_cell_with_the_call_it_makes():
    assert set(FIGURES) == set(CELLS), "FIGURES is out of step with the notebooks' figure cells"
    for where, (call, _) in FIGURES.items():
        assert squeezed(call) in squeezed("".join(CELLS[where]["source"])), \
            f"{where}: the cell no longer calls {call}"


@pytest.mark.slow     # draws every figure of the book again
@pytest.mark.parametrize("where", list(FIGURES), ids=lambda w: f"{w[0]}:{w[1]}")
def test_figure_text_is_legible_at_the_width_the_book_shows_it(where):
    fig = FIGURES[where][1]()
    assert fig.dpi == RECORD_DPI, f"{where}: drawn at {fig.dpi} dpi, recorded at {RECORD_DPI}"
    shown = displayed_text_sizes(fig)
    smallest = shown.smallest
    assert smallest.px >= floor_of(where), (
        f"{where}: {smallest.text!r} is shown at {smallest.px:.1f} px (PNG {shown.width_px} px wide, shown at "
        f"{shown.scale:.0%} in the {DISPLAY_COLUMN_PX} px column); at least {floor_of(where)} px needed")


def test_only_a_few_figures_are_allowed_smaller_text():
    assert set(NARROWER) <= set(FIGURES)
    assert all(8 <= px < MIN_DISPLAY_TEXT_PX and why for px, why in NARROWER.values())


@pytest.mark.parametrize("where", list(CELLS), ids=lambda w: f"{w[0]}:{w[1]}")
def test_every_figure_cell_has_alt_text(where):
    alt = CELLS[where]["metadata"].get("mystnb", {}).get("image", {}).get("alt", "")
    assert len(alt.split()) >= 5, f"{where}: no alt text saying what the figure shows (mystnb.image.alt)"


@pytest.mark.slow
def test_every_figure_in_the_built_book_opens_at_full_size_and_says_what_it_shows(built_book):
    from bs4 import BeautifulSoup

    figures = dark = 0
    for page in built_book.pages:
        html = built_book.html / page
        for img in BeautifulSoup(html.read_text(), "html.parser").select("div.cell_output img"):
            # A figure's dark variant (tcgemm.publish.dark_figures) comes right after it, shown in dark mode only.
            if "only-dark" in img.get("class", []):
                dark += 1
                light = img.parent.find_previous_sibling("a")
                assert light is not None and "only-light" in light.img.get("class", []), f"{page}: {img['src']} follows no figure"
                assert img.get("alt") == light.img.get("alt"), f"{page}: {img['src']} says other than its light variant"
                assert "only-dark" in img.parent.get("class", []), f"{page}: the link of {img['src']} shows in light mode"
            else:
                figures += 1
            link = img.parent
            assert link.name == "a" and link.get("href") == img["src"], f"{page}: {img['src']} is not a link to itself"
            assert (html.parent / link["href"]).is_file(), f"{page}: {link['href']} is missing"
            assert img.get("alt", img["src"]) != img["src"], f"{page}: {img['src']} has no alt text"
    recorded = sum(out.get("data", {}).get("image/png") is not None
                   for cell in CELLS.values() for out in cell.get("outputs", []))
    recorded_dark = sum(out.get("data", {}).get(DARK_MIME) is not None
                        for cell in CELLS.values() for out in cell.get("outputs", []))
    assert (figures, dark) == (recorded, recorded_dark)
