"""What every drawing of the book shares: the Okabe-Ito hues (safe for colour-blind readers), the
lane colours of the fragment pictures, WCAG contrast so labels stay readable on any face, and the
scale a figure is shown at, so that its smallest text stays legible on the page."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib import rcParams
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.text import Text

# Width in CSS px of the book's text column in a 1280 px browser window (the theme's article body,
# measured on a built page). An output image wider than this is shrunk to fit it.
DISPLAY_COLUMN_PX = 688
# Characters of a line of code or of a text output that fit that column: the theme's monospace
# font (14 px) is about 8.43 px per character, and a code cell's <pre> (684 px, its output's 688)
# is padded 16 px each side: (684 - 32) / 8.43 = 77.3. tests/test_browser.py measures the built
# pages: no <pre> scrolls, and this many characters fit each code cell's.
TEXT_COLUMN_CHARS = 77
# Pixels per inch of every figure: the inline backend records a figure at its own dpi, cropped to
# its drawn content (bbox_inches="tight"), one PNG pixel per CSS px.
RECORD_DPI = 100
# The smallest text, in CSS px as displayed (its font size: the em, as CSS sizes text), that the
# book's figures may use: its size in the PNG times the scale the page shows the PNG at.
MIN_DISPLAY_TEXT_PX = 9.0
# Drawing rules that keep to it: a figure whose drawn content is at most COLUMN_WIDTH_IN wide (the
# recording adds savefig.pad_inches, 0.1 in, each side) is shown unscaled, and then text of
# MIN_FONT_PT points is 9.03 px.
COLUMN_WIDTH_IN = DISPLAY_COLUMN_PX / RECORD_DPI - 0.2
MIN_FONT_PT = 6.5

# Okabe-Ito hues in groupID order, arranged so that neighbouring groups contrast.
GROUP_HUES = ("#E69F00", "#0072B2", "#009E73", "#CC79A7",
              "#56B4E9", "#D55E00", "#F0E442", "#000000")
# Mix towards black (negative) or white (positive) for threadID_in_group 0..3.
# Sky blue and black only lighten: sky blue would meet the blue group, black cannot darken.
_DARKER_TO_LIGHTER = (-0.45, -0.2, 0.05, 0.3)
_LIGHTER_ONLY = (0.0, 0.25, 0.5, 0.75)
_LADDERS = {"#56B4E9": _LIGHTER_ONLY, "#000000": _LIGHTER_ONLY}

MUTED_FACE = (0.93, 0.93, 0.93)
MUTED_TEXT = (0.6, 0.6, 0.6)
TILE_EDGE = "#303030"



def lane_color(lane: int) -> tuple[float, float, float]:
    """RGB colour of a lane: hue by lane // 4, lightness by lane % 4."""
    if not 0 <= lane < 32:
        raise ValueError(f"lane must be in 0..31, got {lane}")
    hue = GROUP_HUES[lane // 4]
    mix = _LADDERS.get(hue, _DARKER_TO_LIGHTER)[lane % 4]
    base = np.array(to_rgb(hue))
    rgb = base * (1 + mix) if mix < 0 else base + (1 - base) * mix
    return tuple(float(v) for v in rgb)


def relative_luminance(rgb) -> float:
    """WCAG relative luminance of an sRGB colour."""
    c = np.asarray(rgb, dtype=float)
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(linear @ np.array([0.2126, 0.7152, 0.0722]))


def contrast_ratio(rgb_a, rgb_b) -> float:
    high, low = sorted((relative_luminance(rgb_a), relative_luminance(rgb_b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def text_color_on(face) -> tuple[float, float, float]:
    """Black or white, whichever contrasts more with ``face``."""
    black, white = (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)
    return black if contrast_ratio(face, black) >= contrast_ratio(face, white) else white


def new_figure(width_in: float, height_in: float, **kwargs) -> Figure:
    """A pyplot-free Figure of the given size in inches, recorded at RECORD_DPI."""
    return Figure(figsize=(width_in, height_in), dpi=RECORD_DPI, **kwargs)


def recorded_width_px(fig: Figure) -> int:
    """Width of the PNG a notebook records for ``fig``: IPython's inline display prints it at the
    figure's dpi, cropped to the drawn content plus savefig.pad_inches (bbox_inches="tight")."""
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.draw_without_rendering()  # runs the layout engine, as printing does
    box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(rcParams["savefig.pad_inches"])
    return int(box.width * fig.dpi)


@dataclass(frozen=True)
class DisplayedText:
    text: str
    px: float  # font size in CSS px as shown on the page


@dataclass(frozen=True)
class FigureDisplay:
    """How a figure appears in the book's text column."""
    width_px: int    # width of the recorded PNG
    scale: float     # shown width / recorded width (1 when the PNG fits the column)
    texts: tuple[DisplayedText, ...]

    @property
    def smallest(self) -> DisplayedText:
        return min(self.texts, key=lambda t: t.px)


def displayed_text_sizes(fig: Figure, column_px: float = DISPLAY_COLUMN_PX) -> FigureDisplay:
    """Every visible, non-empty text of ``fig`` with its displayed size: font size (pt) x dpi / 72
    x min(1, column / PNG width)."""
    width_px = recorded_width_px(fig)
    scale = min(1.0, column_px / width_px)
    # Axes drawn without axis lines (set_axis_off) keep their tick labels but do not draw them.
    undrawn = {id(t) for ax in fig.axes if not ax.axison for axis in (ax.xaxis, ax.yaxis)
               for t in axis.findobj(Text)}
    texts = tuple(DisplayedText(t.get_text(), t.get_fontsize() * fig.dpi / 72 * scale)
                  for t in fig.findobj(Text)
                  if t.get_visible() and t.get_text().strip() and id(t) not in undrawn)
    if not texts:
        raise ValueError("the figure has no text")
    return FigureDisplay(width_px, scale, texts)
