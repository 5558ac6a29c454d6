"""IPython extension: every matplotlib Figure a notebook shows is recorded with its dark variant
(tcgemm.dark_mode), a PNG under tcgemm.dark_mode.DARK_MIME beside its image/png.

`make record` loads it into every notebook's kernel (tcgemm.publish.record), and the %%gpu extension
(tcgemm.publish.magic) loads it too, so a notebook run in JupyterLab records the same. JupyterLab knows
no such mime type and shows the image/png; the book shows both, each in its own theme mode
(tcgemm.publish.dark_figures). Loading it twice changes nothing.
"""
from __future__ import annotations


def dark_png_formatter(parent):
    """The IPython formatter of a figure's dark variant: a PNG, base64 as IPython keeps image/png."""
    from IPython.core.formatters import BaseFormatter
    from matplotlib.figure import Figure, FigureBase
    from traitlets import ObjectName, Unicode

    from tcgemm.dark_mode import DARK_MIME, dark_png

    class DarkPNGFormatter(BaseFormatter):
        format_type = Unicode(DARK_MIME)
        print_method = ObjectName("_repr_dark_png_")
        _return_type = (bytes, str)

    formatter = DarkPNGFormatter(parent=parent)
    # Registered for Figure's base class: `%matplotlib inline` (a cell of most chapters) takes every
    # formatter's entry for Figure itself away before it installs its own image/png one.
    formatter.for_type(FigureBase, lambda fig: dark_png(fig, base64=True) if isinstance(fig, Figure) else None)
    return formatter


def add_dark_figures(display_formatter) -> None:
    """Have `display_formatter` give every Figure a dark PNG beside its image/png. It goes first: the
    dark variant is drawn from a copy of the figure as it stands, before the image/png draws the
    figure itself (a layout engine's second drawing may move things by a pixel), so both are the size
    of one first drawing."""
    from tcgemm.dark_mode import DARK_MIME

    others = {k: v for k, v in display_formatter.formatters.items() if k != DARK_MIME}
    display_formatter.formatters = {DARK_MIME: dark_png_formatter(display_formatter), **others}


def load_ipython_extension(ipython):
    add_dark_figures(ipython.display_formatter)
