"""Sphinx extension (named in _config.yml): each figure of the book in its light and its dark variant,
the theme showing the one of its mode.

`make record` keeps, beside a figure's image/png, its dark variant under tcgemm.dark_mode.DARK_MIME
(tcgemm.publish.magic; the variant is drawn by tcgemm.dark_mode). myst-nb knows no such mime type: this
extension takes the dark PNGs out of a notebook as Sphinx reads it, and once myst-nb has written the
light PNG and made its image node, adds the dark one beside it. The light image gets
pydata-sphinx-theme's class only-light and the dark one only-dark: the theme shows one of them, and does
not put the dark one on its light panel (_static/tcgemm.css). A figure recorded without a dark variant
is shown as before. Imported only by the book build.
"""
from __future__ import annotations

import hashlib
import json
from base64 import b64decode
from pathlib import Path

from docutils import nodes

from tcgemm.dark_mode import DARK_MIME

_PAIRS = "tcgemm_dark_figures"  # env.temp_data key: sha256 of a light PNG -> its dark PNG


def _png(value) -> bytes:
    return b64decode("".join(value) if isinstance(value, list) else value)


def dark_pairs(notebook: dict) -> dict[str, bytes]:
    """Take the dark PNGs out of ``notebook`` (in place): {sha256 hex of the light PNG: dark PNG}."""
    pairs = {}
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            dark = data.pop(DARK_MIME, None)
            if dark is not None and "image/png" in data:
                pairs[hashlib.sha256(_png(data["image/png"])).hexdigest()] = _png(dark)
    return pairs


def _take_dark_images(app, docname, source):
    if DARK_MIME not in source[0] or not str(app.env.doc2path(docname)).endswith(".ipynb"):
        return
    notebook = json.loads(source[0])
    app.env.temp_data[_PAIRS] = dark_pairs(notebook)
    source[0] = json.dumps(notebook)


def _add_dark_images(app, doctree):
    pairs = app.env.temp_data.pop(_PAIRS, None)
    if not pairs:
        return
    for light in list(doctree.findall(nodes.image)):
        uri = light["uri"]
        dark = pairs.get(Path(uri).stem)
        if dark is None or not uri.startswith("/"):
            continue
        # Beside the light PNG myst-nb wrote (its uri is relative to the source folder), named as
        # myst-nb names one: by the hash of its bytes.
        folder = Path(app.srcdir, uri.lstrip("/")).parent
        name = f"{hashlib.sha256(dark).hexdigest()}.png"
        if not (folder / name).is_file():
            (folder / name).write_bytes(dark)
        twin = light.deepcopy()
        twin["uri"] = uri.rsplit("/", 1)[0] + "/" + name
        if "candidates" in twin:
            del twin["candidates"]
        light["classes"] = [*light.get("classes", []), "only-light"]
        twin["classes"] = [*twin.get("classes", []), "only-dark"]
        light.parent.insert(light.parent.index(light) + 1, twin)


def setup(app):
    app.connect("source-read", _take_dark_images)
    # Before Sphinx's image collector (priority 500) registers the page's images for copying.
    app.connect("doctree-read", _add_dark_images, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
