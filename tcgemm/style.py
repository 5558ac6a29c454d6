"""Colours shared by every drawing of the book: the Okabe-Ito hues (safe for colour-blind readers),
the lane colours of the fragment pictures, and WCAG contrast so labels stay readable on any face."""
from __future__ import annotations

import numpy as np
from matplotlib.colors import to_rgb

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
