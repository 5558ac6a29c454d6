"""The dark variant of a figure: the same drawing, recoloured for the book's dark mode. Pure (matplotlib).

The book shows every figure twice, drawn light and dark, and the theme shows the one that matches the
page (`make record` keeps both: tcgemm.publish.magic; the book pairs them: tcgemm.publish.dark_figures).
The dark one is not drawn separately: `dark_variant` recolours a copy of the light figure by one rule.

* Neutral colours (greys, black, white: the ink of text, axes, spines, ticks, outlines and grid, and the
  muted faces) are swapped by `swap_neutral`, which keeps each one's WCAG contrast: a grey that had
  contrast r against the white page gets contrast r against the dark page (DARK_PAGE), on the light
  side. Black ink becomes near-white, white gaps between cells become the page, light grey faces dark
  grey ones. Since the swap keeps ratios, two neutrals keep their contrast with each other too (a muted
  label on a muted face, black text on a grey lane face).
* The figure's and its axes' white backgrounds become transparent: the page shows through, so there is
  no panel in either mode.
* Data hues (any colour with chroma, the Okabe-Ito palette and its tints) are kept, and so is the
  colour of text drawn on a face of such a hue (chosen by tcgemm.style.text_color_on for that face).
* Coloured text on the page or on a neutral face keeps at least the contrast it had in light mode (up
  to WCAG AA's 4.5:1): mixed towards white where the dark page would take contrast away.
"""
from __future__ import annotations

import pickle
from dataclasses import dataclass

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import Collection
from matplotlib.colors import to_rgba, to_rgba_array
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text

from tcgemm.style import contrast_ratio, relative_luminance

# The book's page in dark mode (--pst-color-background, which sphinx-book-theme sets over
# pydata-sphinx-theme's; tests/test_browser.py reads it off the built pages) and in light mode.
DARK_PAGE = (0x12 / 255, 0x12 / 255, 0x12 / 255)
LIGHT_PAGE = (1.0, 1.0, 1.0)
# The mime type under which a notebook keeps a figure's dark PNG, beside its image/png.
DARK_MIME = "image/vnd.tcgemm.dark+png"
# A colour whose sRGB channels differ by less than this is neutral (ink or a grey face).
NEUTRAL_CHROMA = 0.08
# WCAG AA for normal text.
TEXT_CONTRAST = 4.5

_WHITE = np.array(LIGHT_PAGE)


def is_neutral(rgb) -> bool:
    c = np.asarray(rgb, dtype=float)[:3]
    return float(c.max() - c.min()) < NEUTRAL_CHROMA


def _grey_of_luminance(lum: float) -> tuple[float, float, float]:
    lum = min(max(lum, 0.0), 1.0)
    v = 12.92 * lum if lum <= 0.0031308 else 1.055 * lum ** (1 / 2.4) - 0.055
    return (v, v, v)


def swap_neutral(rgb) -> tuple[float, float, float]:
    """The grey whose contrast against DARK_PAGE is the contrast ``rgb`` has against white (at most
    what the lightest grey can have: black becomes white). Keeps contrast ratios between neutrals."""
    lum = (relative_luminance(DARK_PAGE) + 0.05) * 1.05 / (relative_luminance(rgb) + 0.05) - 0.05
    return _grey_of_luminance(lum)


def dark_color(rgba) -> tuple[float, float, float, float]:
    """A colour of the light drawing in the dark one: neutrals swapped, hues kept, alpha kept."""
    r, g, b, a = to_rgba(rgba)
    return (*swap_neutral((r, g, b)), a) if is_neutral((r, g, b)) else (r, g, b, a)


def _over(rgba, below) -> np.ndarray:
    rgba = to_rgba(rgba)
    return np.asarray(rgba[:3]) * rgba[3] + np.asarray(below, dtype=float)[:3] * (1 - rgba[3])


def lighten_to(rgb, ground, ratio: float) -> tuple[float, float, float]:
    """``rgb`` mixed towards white, as little as gives ``ratio`` against ``ground`` (or white)."""
    rgb = np.asarray(rgb, dtype=float)[:3]
    for mix in np.linspace(0, 1, 101):
        out = rgb + (1 - rgb) * mix
        if contrast_ratio(out, ground) >= ratio:
            break
    return tuple(float(v) for v in out)


# ---- what a text is drawn on --------------------------------------------------------------------

@dataclass(frozen=True)
class _Ground:
    face: tuple | None   # the face colour (RGBA, light drawing) under the text, None for the page
    background: bool     # the face is the figure's or an axes' background


class _Faces:
    """The filled faces of one container (an Axes, or the Figure for figure-level text): patches and
    the paths of collections, with their display extents, in drawing order."""

    def __init__(self, container):
        self.items = []   # (zorder, face RGBA, contains(point))
        for patch in getattr(container, "patches", []):
            face = to_rgba(patch.get_facecolor())
            if patch.get_visible() and patch.get_fill() and face[3] > 0:
                self.items.append((patch.zorder, face, patch.get_window_extent(), patch.contains_point))
        for coll in getattr(container, "collections", []):
            faces = coll.get_facecolor()
            if not coll.get_visible() or len(faces) == 0 or len(coll.get_offsets()) > 1:
                continue   # markers (many offsets) are not what a label sits on
            transform = coll.get_transform()
            for i, path in enumerate(coll.get_paths()):
                face = tuple(faces[i % len(faces)])
                if face[3] > 0:
                    self.items.append((coll.zorder, face, path.get_extents(transform),
                                       lambda point, path=path: path.contains_point(point, transform=transform)))
        # drawn last = on top: by zorder, then in order of addition (a stable sort keeps it)
        self.items.sort(key=lambda item: item[0])
        boxes = np.array([[b.x0, b.y0, b.x1, b.y1] for _, _, b, _ in self.items]).reshape(-1, 4)
        self.boxes = np.column_stack([boxes[:, [0, 2]].min(1), boxes[:, [1, 3]].min(1),
                                      boxes[:, [0, 2]].max(1), boxes[:, [1, 3]].max(1)])
        self.zorders = np.array([z for z, *_ in self.items], dtype=float)

    def top_face(self, point, zorder):
        """The face drawn last under display ``point`` before an artist of ``zorder``, or None."""
        x, y = point
        b = self.boxes
        hits = np.flatnonzero((b[:, 0] <= x) & (x <= b[:, 2]) & (b[:, 1] <= y) & (y <= b[:, 3])
                              & (self.zorders <= zorder))
        for i in hits[::-1]:
            _, face, _, contains = self.items[i]
            if contains(point):
                return face
        return None


def _ground_of(text: Text, legends: dict, faces, renderer) -> _Ground:
    box = text.get_bbox_patch()
    if box is not None and box.get_visible() and box.get_fill() and to_rgba(box.get_facecolor())[3] > 0:
        return _Ground(to_rgba(box.get_facecolor()), False)
    legend = legends.get(id(text))
    if legend is not None:
        frame = legend.get_frame()
        return _Ground(to_rgba(frame.get_facecolor()) if legend.get_frame_on() else None, False)
    container = text.axes if text.axes is not None else text.get_figure(root=True)
    if id(container) not in faces:
        faces[id(container)] = _Faces(container)
    # What most of the text's box lies on: five points (a centred label may sit exactly on the edge
    # between two cells of the same face).
    extent = text.get_window_extent(renderer)
    grounds = []
    for fx, fy in ((0.5, 0.5), (0.3, 0.3), (0.7, 0.3), (0.3, 0.7), (0.7, 0.7)):
        point = (extent.x0 + fx * extent.width, extent.y0 + fy * extent.height)
        face = faces[id(container)].top_face(point, text.zorder)
        if face is not None:
            grounds.append(_Ground(face, False))
        elif text.axes is not None and text.axes.patch.get_visible() and text.axes.patch.contains_point(point):
            grounds.append(_Ground(to_rgba(text.axes.patch.get_facecolor()), True))
        else:
            grounds.append(_Ground(None, True))
    return max(grounds, key=grounds.count)   # the centre's on a tie


def _dark_ground(ground: _Ground) -> np.ndarray:
    if ground.face is None:
        return np.asarray(DARK_PAGE)
    return _over(_dark_face(ground.face, ground.background), DARK_PAGE)


def _light_ground(ground: _Ground) -> np.ndarray:
    return _WHITE if ground.face is None else _over(ground.face, _WHITE)


def _dark_face(face, background: bool):
    """A face in the dark drawing: a white background becomes transparent, the rest as dark_color."""
    if background and np.allclose(to_rgba(face)[:3], LIGHT_PAGE):
        return (0.0, 0.0, 0.0, 0.0)
    return dark_color(face)


def _dark_text_color(color, ground: _Ground):
    rgba = to_rgba(color)
    light_ground = _light_ground(ground)
    if not is_neutral(light_ground):
        return rgba                               # on a data hue: the colour chosen for that face
    if is_neutral(rgba[:3]):
        return dark_color(rgba)                   # ink on the page or on a grey face
    dark_ground = _dark_ground(ground)
    needed = min(TEXT_CONTRAST, contrast_ratio(_over(rgba, light_ground), light_ground))
    if contrast_ratio(_over(rgba, dark_ground), dark_ground) >= needed:
        return rgba
    return (*lighten_to(rgba[:3], dark_ground, needed), rgba[3])


# ---- recolouring ----------------------------------------------------------------------------------

def _recolor_line(line: Line2D) -> None:
    line.set_color(dark_color(line.get_color()))
    for get, set_ in ((line.get_markerfacecolor, line.set_markerfacecolor),
                      (line.get_markeredgecolor, line.set_markeredgecolor)):
        value = get()
        if not (isinstance(value, str) and value in ("none", "auto")):
            set_(dark_color(value))


def _recolor_patch(patch: Patch, background: bool) -> None:
    hatch = patch.get_hatchcolor() if patch.get_hatch() else None
    patch.set_facecolor(_dark_face(patch.get_facecolor(), background))
    patch.set_edgecolor(dark_color(patch.get_edgecolor()))
    if hatch is not None:
        patch.set_hatchcolor(dark_color(hatch))


def _recolor_collection(coll: Collection) -> None:
    if coll.get_array() is not None:
        return  # colour mapped from data: a data hue
    faces, edges = coll.get_facecolor(), coll.get_edgecolor()
    if len(faces):
        coll.set_facecolor([dark_color(c) for c in to_rgba_array(faces)])
    if len(edges) and not isinstance(edges, str):
        coll.set_edgecolor([dark_color(c) for c in to_rgba_array(edges)])


def recolor_dark(fig: Figure) -> Figure:
    """Recolour ``fig`` in place for a dark page (see the module's rules); returns it."""
    # Not drawn first: a figure laid out by its layout engine comes out of a second drawing a pixel
    # or two different, and the dark PNG must be the light one's size. Whether a text lies on a face
    # does not depend on where the layout puts their axes.
    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()
    artists = {id(a): a for a in fig.findobj()}.values()
    legends = {id(t): legend for legend in (a for a in artists if isinstance(a, Legend))
               for t in [*legend.get_texts(), legend.get_title()]}
    backgrounds = {id(fig.patch), *(id(ax.patch) for ax in fig.axes)}
    faces = {}
    # Every text, those still empty included: tick labels get their text only when drawn (on the page).
    texts = [(t, _ground_of(t, legends, faces, renderer) if t.get_visible() and t.get_text().strip()
              else _Ground(None, True)) for t in artists if isinstance(t, Text)]
    for artist in artists:
        if isinstance(artist, Patch):
            _recolor_patch(artist, id(artist) in backgrounds)
        elif isinstance(artist, Line2D):
            _recolor_line(artist)
        elif isinstance(artist, Collection):
            _recolor_collection(artist)
    for text, ground in texts:
        text.set_color(_dark_text_color(text.get_color(), ground))
        box = text.get_bbox_patch()   # drawn by the text, not one of the figure's children
        if box is not None:
            _recolor_patch(box, False)
    return fig


def dark_variant(fig: Figure) -> Figure:
    """A recoloured copy of ``fig`` for a dark page; ``fig`` itself is left as it is."""
    return recolor_dark(pickle.loads(pickle.dumps(fig)))


def dark_png(fig: Figure, **print_kwargs) -> bytes | str | None:
    """The dark variant of ``fig`` printed as IPython prints the light one (its PNG formatter:
    IPython.core.pylabtools.print_figure, cropped to the drawn content), the same size."""
    from IPython.core.pylabtools import print_figure

    return print_figure(dark_variant(fig), "png", **print_kwargs)
