"""Sphinx extension (named in _config.yml): the built book loads nothing from another host.

Its pages used to fetch RequireJS, @jupyter-widgets/html-manager (4.4 MB) and anywidget's module
from CDNs to draw the widgets, and MathJax from another; offline the widgets vanished and the math
showed as TeX. Now:

- The widgets are drawn by web/widget-embed.js (a few kB), which myst-nb loads on the pages that
  have widgets (_config.yml's nb_ipywidgets_js): it runs each anywidget's own module, recorded in
  the notebook's widget state. It draws anywidgets only, so a page whose widget state holds any other
  model (an ipywidgets slider, say) is a build warning here, an error under --warningiserror.
  Before each widget a placeholder says what is there; the embedder removes it once the widget is
  drawn, so it stays only where JavaScript did not run.
- MathJax comes from the npm package that `make book` installs in web/node_modules (npm ci --prefix
  web, pinned by web/package-lock.json); it is copied into _build/html/_static/mathjax, and
  _config.yml's mathjax_path points there (a URL relative to each page).
- pydata-sphinx-theme's scripts/fontawesome.js (1.5 MB on every page) is left out: it exists for
  custom icons (FontAwesome.library.add), which the book has none of; the theme's CSS and web fonts
  draw its icons.
"""
import json
import re
import shutil
from html import escape
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

WEB = "web"                                   # under the book's root (app.srcdir)
EMBEDDER = "widget-embed.js"                  # web/widget-embed.js -> _static/widget-embed.js
MATHJAX_DIR = "mathjax"                       # _static/mathjax/ <- web/node_modules/mathjax/es5/
MATHJAX_ES5 = Path("node_modules", "mathjax", "es5")
# What MathJax's combined component may load later (TeX extensions on demand, CHTML fonts, the menu,
# the accessibility tools): the rest of es5/ (other combined components, the SVG output) is not copied.
MATHJAX_PARTS = ("input", "output/chtml", "output/chtml.js", "ui", "a11y", "sre", "adaptors")

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW_TAG = '<script type="application/vnd.jupyter.widget-view+json">'
DRAWABLE = {("anywidget", "AnyModel"), ("@jupyter-widgets/base", "LayoutModel")}
FONTAWESOME_JS = re.compile(r'[ \t]*<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>\n?')


def mathjax_source(app) -> Path:
    return Path(app.srcdir) / WEB / MATHJAX_ES5


def _check_mathjax_path(app):
    path = app.config.mathjax_path
    if "://" in path or path.startswith("//"):
        raise ExtensionError(f"mathjax_path is {path!r}: the book serves MathJax itself "
                             f"(_config.yml: mathjax_path: {MATHJAX_DIR}/tex-mml-chtml.js)")
    entry = path.removeprefix(MATHJAX_DIR + "/")
    if entry == path or "/" in entry:
        raise ExtensionError(f"mathjax_path is {path!r}, expected {MATHJAX_DIR}/<component>.js")
    if not (mathjax_source(app) / entry).is_file():
        raise ExtensionError(
            f"MathJax is not installed in {WEB}/node_modules ({mathjax_source(app) / entry} is missing): "
            f"`make book` installs it (npm ci --prefix {WEB}), which needs npm")
    return entry


def _copy_assets(app):
    if app.builder.format != "html":
        return
    entry = _check_mathjax_path(app)
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    shutil.copy2(Path(app.srcdir) / WEB / EMBEDDER, static / EMBEDDER)
    source, target = mathjax_source(app), static / MATHJAX_DIR
    target.mkdir(exist_ok=True)
    shutil.copy2(source / entry, target / entry)
    for part in MATHJAX_PARTS:
        if (source / part).is_dir():
            shutil.copytree(source / part, target / part, dirs_exist_ok=True)
        else:
            (target / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / part, target / part)


def _widget_state(context) -> dict:
    for script in context.get("script_files", []):
        attributes = getattr(script, "attributes", {})
        if attributes.get("type") == WIDGET_STATE and attributes.get("body"):
            return json.loads(attributes["body"]).get("state", {})
    return {}


def _widgets(app, pagename, templatename, context, doctree):
    body = context.get("body", "")
    if WIDGET_VIEW_TAG not in body:
        return
    for model_id, model in _widget_state(context).items():
        kind = (model.get("model_module"), model.get("model_name"))
        if kind not in DRAWABLE:
            logger.warning(f"{pagename}: widget model {model_id} is {kind[0]} {kind[1]}, which the book's "
                           f"pages cannot draw (web/{EMBEDDER} draws anywidgets only)", location=pagename)
    run_it = escape(context["pathto"]("book/run_it_yourself"))
    placeholder = (
        '<p class="tcgemm-widget-placeholder">An interactive widget belongs here; it is drawn by '
        "JavaScript, which did not run on this page. Open the notebook in JupyterLab to use it "
        f'(see <a href="{run_it}">Run it yourself</a>).</p>')
    context["body"] = body.replace(WIDGET_VIEW_TAG, placeholder + WIDGET_VIEW_TAG)


def _drop_fontawesome_js(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        lean = FONTAWESOME_JS.sub("", text)
        if lean != text:
            page.write_text(lean, encoding="utf-8")


def setup(app):
    app.connect("builder-inited", _copy_assets)
    app.connect("html-page-context", _widgets, priority=600)  # after myst-nb has added the page's scripts
    app.connect("build-finished", _drop_fontawesome_js)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
