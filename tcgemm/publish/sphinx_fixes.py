"""Sphinx extension (named in _config.yml): fixes to the book's HTML that settings cannot express.
Imported only by the book build; pure Python."""

# Where the widget embedder lives (the same URL as in _config.yml's nb_ipywidgets_js).
HTML_MANAGER = "https://cdn.jsdelivr.net/npm/@jupyter-widgets/html-manager@1.0.6/dist"


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


def setup(app):
    app.connect("html-page-context", _drop_duplicate_scripts)
    # html-manager 1.x locates its Font Awesome files next to the RequireJS URL of its AMD modules,
    # by default the page's own folder (404s); RequireJS reads `var require` as its configuration.
    app.add_js_file(None, priority=100, body=(
        'var require = {paths: {"@jupyter-widgets": "%s", "@jupyter-widgets/html-manager/dist": "%s"}};'
        % (HTML_MANAGER, HTML_MANAGER)))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
