"""Sphinx extension (named in _config.yml): fixes to the book's HTML that settings cannot express.
Imported only by the book build; pure Python."""
import posixpath
from html import escape
from urllib.parse import quote

from docutils import nodes


def _drop_duplicate_scripts(app, pagename, templatename, context, doctree):
    # Sphinx 7.4 lists an inline script that an extension adds after the builder started twice
    # (as filename None, then ''; fixed in Sphinx 8.2 by sphinx-doc/sphinx#13402): sphinx-thebe's
    # `const THEBE_JS_URL = ...` then throws "already declared" on every page.
    seen, unique = set(), []
    for script in context.get("script_files", []):
        key = (script.filename or "", script.priority, tuple(sorted(script.attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


class full_size_link(nodes.General, nodes.Element):
    """Wraps a figure that a code cell drew: a click opens the image file alone, at full size."""


def _link_output_images(app, doctree, docname):
    for image in list(doctree.findall(nodes.image)):
        if isinstance(image.parent, (nodes.reference, full_size_link)):
            continue
        if any("cell_output" in a.get("classes", ()) for a in _ancestors(image)):
            link = full_size_link()
            image.replace_self(link)
            link.append(image)


def _ancestors(node):
    while node.parent is not None:
        node = node.parent
        yield node


def _visit_full_size_link(self, node):
    # Where the image will be (as Sphinx's own link for scaled images computes it): the builder has
    # copied it to _images/ but rewrites the image's uri only when the image itself is visited.
    uri = node.children[0]["uri"]
    if uri in self.builder.images:
        uri = posixpath.join(self.builder.imgpath, quote(self.builder.images[uri]))
    # A figure's light or dark variant (tcgemm.publish.dark_figures): its link is shown in that mode only.
    modes = "".join(f" {c}" for c in node.children[0].get("classes", ()) if c in ("only-light", "only-dark"))
    self.body.append(f'<a class="tcgemm-full-size{modes}" href="{escape(uri)}" title="Open the figure at full size" '
                     'style="cursor: zoom-in">')


def _depart_full_size_link(self, node):
    self.body.append("</a>")


def setup(app):
    app.connect("html-page-context", _drop_duplicate_scripts)
    app.add_node(full_size_link, html=(_visit_full_size_link, _depart_full_size_link))
    app.connect("doctree-resolved", _link_output_images)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
