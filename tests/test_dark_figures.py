"""Every figure of the book has a dark variant (tcgemm.dark_mode) for the book's dark mode: recorded
beside its PNG by `make record` (the %%gpu extension's formatter, tcgemm.publish.magic), the same size,
on no panel, with every text as readable on the dark page as on the light one; and the book shows
each variant in its own mode (tcgemm.publish.dark_figures; tests/test_browser.py looks at the pages).

The figures are those of tests/test_figure_legibility.py's FIGURES, drawn as the notebooks draw them.
"""
import base64
import io
import json
from pathlib import Path

import matplotlib
import matplotlib.patches

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from IPython.core.formatters import DisplayFormatter  # noqa: E402
from IPython.core.pylabtools import select_figure_formats  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from PIL import Image  # noqa: E402

from tcgemm.dark_mode import (  # noqa: E402
    DARK_MIME, DARK_PAGE, LIGHT_PAGE, TEXT_CONTRAST, dark_color, dark_variant, is_neutral, swap_neutral,
)
from tcgemm.publish.dark_figures import dark_pairs  # noqa: E402
from tcgemm.publish.dark_png import add_dark_figures  # noqa: E402
from tcgemm.style import GROUP_HUES, MUTED_FACE, MUTED_TEXT, contrast_ratio, new_figure  # noqa: E402
from test_figure_legibility import FIGURES  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def test_neutrals_swap_keeping_their_contrast_and_hues_stay():
    assert contrast_ratio(swap_neutral(LIGHT_PAGE), DARK_PAGE) == pytest.approx(1, abs=0.01)  # white: the page
    assert contrast_ratio(swap_neutral((0, 0, 0)), DARK_PAGE) > 17   # black ink: white, or nearly
    for grey in (MUTED_FACE, MUTED_TEXT, (0.3, 0.3, 0.3)):
        assert contrast_ratio(swap_neutral(grey), DARK_PAGE) == pytest.approx(contrast_ratio(grey, LIGHT_PAGE), rel=0.01)
    # two neutrals keep their contrast with each other: a muted label on a muted face
    assert contrast_ratio(swap_neutral(MUTED_TEXT), swap_neutral(MUTED_FACE)) == pytest.approx(
        contrast_ratio(MUTED_TEXT, MUTED_FACE), rel=0.01)
    for hue in GROUP_HUES[:7]:
        assert not is_neutral(to_rgba(hue)) and dark_color(hue) == to_rgba(hue)
    assert dark_color((0, 0, 0, 0.5))[3] == 0.5


def formatter() -> DisplayFormatter:
    """IPython's display formatter as a book notebook has it (tcgemm.publish.magic)."""
    class Shell:  # what select_figure_formats reads
        display_formatter = DisplayFormatter()

    select_figure_formats(Shell, {"png"})
    add_dark_figures(Shell.display_formatter)
    return Shell.display_formatter


def png(data: str) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGBA"), dtype=float) / 255


def over(rgba: np.ndarray, page) -> np.ndarray:
    return rgba[..., :3] * rgba[..., 3:] + np.asarray(page)[:3] * (1 - rgba[..., 3:])


@pytest.mark.parametrize("inline", [False, True], ids=["magic", "magic then %matplotlib inline"])
def test_a_figure_is_shown_with_its_dark_variant_and_left_as_it_was(inline):
    fig = new_figure(2, 1)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color="black")
    ax.set_title("title")
    shown = formatter()
    if inline:  # what %matplotlib inline does after the magic's extension is loaded
        class Shell:
            display_formatter = shown
        select_figure_formats(Shell, {"png"}, bbox_inches="tight")
    data, _ = shown.format(fig)
    assert {"image/png", DARK_MIME, "text/plain"} == set(data)
    assert to_rgba(ax.lines[0].get_color()) == (0, 0, 0, 1) and ax.title.get_color() == "black"
    assert to_rgba(fig.get_facecolor()) == (1, 1, 1, 1)


def text_grounds(fig, page) -> list[tuple[str, float]]:
    """(text, contrast with what it is drawn on) of every visible text of ``fig``, read from the
    rendered picture: the figure drawn with its texts hidden, over ``page``, under each text's box."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    fig.set_layout_engine("none")   # keep the layout while the texts are hidden
    renderer = canvas.get_renderer()
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    boxes = [t.get_window_extent(renderer) for t in texts]
    for t in texts:
        t.set_visible(False)
    canvas.draw()
    ground = over(np.asarray(canvas.buffer_rgba(), dtype=float) / 255, page)
    height = ground.shape[0]
    found = []
    for text, box in zip(texts, boxes):
        x0, x1 = int(max(box.x0 + 1, 0)), int(min(box.x1 - 1, ground.shape[1]))
        y0, y1 = int(max(height - box.y1 + 1, 0)), int(min(height - box.y0 - 1, height))
        if x1 <= x0 or y1 <= y0:
            continue  # outside the canvas: not drawn
        under = np.median(ground[y0:y1, x0:x1].reshape(-1, 3), axis=0)
        patch = text.get_bbox_patch()
        if patch is not None and patch.get_fill():
            face = np.asarray(to_rgba(patch.get_facecolor()))
            under = face[:3] * face[3] + under * (1 - face[3])
        color = np.asarray(to_rgba(text.get_color()))
        shown = color[:3] * color[3] + under * (1 - color[3])
        found.append((text.get_text(), contrast_ratio(shown, under)))
    return found


@pytest.mark.slow  # 4 minutes for all: each figure drawn six times
@pytest.mark.parametrize("where", list(FIGURES), ids=lambda w: f"{w[0]}:{w[1]}")
def test_dark_variant_is_the_same_figure_on_the_dark_page(where):
    make = FIGURES[where][1]
    data, _ = formatter().format(make())
    light, dark = png(data["image/png"]), png(data[DARK_MIME])
    assert light.shape == dark.shape, f"{where}: dark {dark.shape[1]}x{dark.shape[0]}, light {light.shape[1]}x{light.shape[0]}"
    # No panel: the dark PNG is transparent at its edges (the recording's padding), the page shows.
    ring = np.concatenate([dark[:3].reshape(-1, 4), dark[-3:].reshape(-1, 4),
                           dark[:, :3].reshape(-1, 4), dark[:, -3:].reshape(-1, 4)])
    assert (ring[:, 3] == 0).mean() > 0.95, f"{where}: the dark figure's edges are not transparent"
    # Every text reads on the dark page at least as well as on the light one (up to WCAG AA).
    light_texts = text_grounds(make(), LIGHT_PAGE)
    dark_texts = text_grounds(dark_variant(make()), DARK_PAGE)
    assert [t for t, _ in light_texts] == [t for t, _ in dark_texts]
    worse = [f"{text!r}: {d:.2f}:1 on the dark page, {l:.2f}:1 on the light one"
             for (text, l), (_, d) in zip(light_texts, dark_texts) if d < min(TEXT_CONTRAST, l) - 0.05]
    assert not worse, f"{where}: {len(worse)} texts lose contrast in dark mode:\n" + "\n".join(worse[:20])


def test_a_made_up_figure_keeps_its_text_readable_on_the_dark_page():
    """What test_dark_variant_is_the_same_figure_on_the_dark_page checks for each figure of the book,
    on one small figure with each kind of text: on the page, on a data hue, on a grey face, in a
    white box, in a legend, coloured on a grey face, and tick labels."""
    def make():
        fig = new_figure(3, 2)
        ax = fig.add_subplot()
        ax.add_patch(matplotlib.patches.Rectangle((0, 0), 1, 1, facecolor=GROUP_HUES[1]))
        ax.add_patch(matplotlib.patches.Rectangle((1, 0), 1, 1, facecolor=MUTED_FACE))
        ax.add_patch(matplotlib.patches.Rectangle((2, 0), 1, 1, facecolor="black"))
        ax.text(0.5, 0.5, "on blue", ha="center", color="white")
        ax.text(1.5, 0.5, "muted", ha="center", color=MUTED_TEXT)
        ax.text(1.5, 0.2, "blue", ha="center", color="#0072B2")
        ax.text(2.5, 0.5, "on black", ha="center", color="white")
        ax.text(1.5, 1.3, "boxed", ha="center", bbox=dict(facecolor="white", alpha=0.85))
        ax.plot([0, 3], [1.6, 1.6], color="#D55E00", label="a line")
        ax.set(xlim=(0, 3), ylim=(0, 2), title="title", xlabel="x")
        ax.legend(loc="upper right")
        return fig

    data, _ = formatter().format(make())
    assert png(data["image/png"]).shape == png(data[DARK_MIME]).shape
    light, dark = text_grounds(make(), LIGHT_PAGE), text_grounds(dark_variant(make()), DARK_PAGE)
    assert [t for t, _ in light] == [t for t, _ in dark] and "on blue" in dict(dark) and "a line" in dict(dark)
    for (text, l), (_, d) in zip(light, dark):
        assert d >= min(TEXT_CONTRAST, l) - 0.05, (text, l, d)
    assert dict(dark)["on blue"] == pytest.approx(dict(light)["on blue"], rel=0.05)   # kept on its hue
    assert dict(dark)["muted"] == pytest.approx(dict(light)["muted"], rel=0.05)       # grey on grey: kept


def test_the_book_build_takes_the_dark_variants_out_of_a_notebook():
    light, dark = b"light png", b"dark png"
    notebook = {"cells": [{"cell_type": "code", "outputs": [
        {"output_type": "display_data", "data": {"image/png": base64.b64encode(light).decode(),
                                                 DARK_MIME: base64.b64encode(dark).decode(), "text/plain": "<Figure>"}},
        {"output_type": "stream", "text": "x"}]}]}
    import hashlib
    assert dark_pairs(notebook) == {hashlib.sha256(light).hexdigest(): dark}
    assert DARK_MIME not in notebook["cells"][0]["outputs"][0]["data"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_recorded_figures_carry_their_dark_variant(path):
    """`make record` keeps each figure's dark variant, the size of its PNG."""
    missing = []
    for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" not in data:
                continue
            if DARK_MIME not in data:
                missing.append(f"cell {index} ({cell.get('id')}): no {DARK_MIME}")
                continue
            light, dark = (png("".join(data[k]) if isinstance(data[k], list) else data[k]) for k in ("image/png", DARK_MIME))
            if light.shape != dark.shape:
                missing.append(f"cell {index} ({cell.get('id')}): dark variant {dark.shape}, PNG {light.shape}")
    assert not missing, f"{path.name} (make record):\n" + "\n".join(missing)
