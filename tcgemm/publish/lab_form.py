"""Notebooks saved in the form JupyterLab keeps: ``python -m tcgemm.publish.lab_form NOTEBOOK...``.

JupyterLab marks a notebook modified as soon as it changes anything in it. Opening a book notebook
(JupyterLab 4.x, tests/test_lab.py) it changes:

  * ``metadata.kernelspec``: when the kernel starts it writes the kernelspec of that kernel,
    ``{name, display_name, language}`` as the server's kernelspec says (ipykernel's python3 is
    "Python 3 (ipykernel)", where nbformat's and older tools' "Python 3" was stored);
  * ``metadata.language_info``: the kernel's own (kernel_info), Python's version included;
  * ``nbformat_minor`` below 5 is raised to 5 (cells then get ids).

and when it saves, the notebook goes through JavaScript numbers: a float with an integral value is
written as an int (a widget state's ``0.0`` comes back as ``0``).

:func:`jupyterlab_form` stores a notebook that way; ``make record`` (tcgemm.publish.record) writes
what it executes through it, and this command does it to notebook files. ``language_info`` is left
as recorded unless ``--language-info-from-kernel`` asks for this machine's kernel's: the recorded one
names the Python of the recording, and only a reader whose kernel reports the same version opens the
notebook unmodified (JupyterLab writes the running kernel's version into it). ``--check`` changes
nothing and lists the notebooks not in this form.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

# JSON.stringify writes numbers from 1e21 up in exponent form, which Python reads back as a float.
_JS_INTEGER_DIGITS_LIMIT = 1e21


def js_number(value):
    """A JSON value as it comes back from a round trip through JavaScript (JSON.parse, stringify)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return None  # JSON.stringify(NaN) is null
        if value.is_integer() and abs(value) < _JS_INTEGER_DIGITS_LIMIT:
            return int(value)
        return value
    if isinstance(value, dict):
        for key, item in value.items():
            value[key] = js_number(item)
        return value
    if isinstance(value, list):
        for i, item in enumerate(value):
            value[i] = js_number(item)
        return value
    return value


def kernelspec_of(name: str) -> dict | None:
    """The ``metadata.kernelspec`` JupyterLab writes for kernel `name`, from this machine's
    kernelspecs (jupyter_client); None where there is no such kernel."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        return None
    return {"display_name": spec.display_name, "language": spec.language, "name": name}


def kernel_language_info(name: str = "python3", timeout: float = 60) -> dict:
    """The ``language_info`` kernel `name` of this machine reports (what JupyterLab writes)."""
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name=name, startup_timeout=timeout)
    try:
        reply = client.kernel_info(reply=True, timeout=timeout)
        return reply["content"]["language_info"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def jupyterlab_form(nb, kernelspec: dict | None = None, language_info: dict | None = None):
    """Put notebook `nb` (an nbformat v4 NotebookNode) in the form JupyterLab keeps, in place, and
    return it. `kernelspec` defaults to this machine's for the notebook's kernel name (left as it is
    where there is none); `language_info`, where given, replaces the stored one."""
    import nbformat
    from nbformat.corpus.words import generate_corpus_id

    name = nb.metadata.get("kernelspec", {}).get("name", "python3")
    kernelspec = kernelspec or kernelspec_of(name)
    if kernelspec is not None:
        nb.metadata["kernelspec"] = nbformat.from_dict(dict(kernelspec))
    if language_info is not None:
        nb.metadata["language_info"] = nbformat.from_dict(dict(language_info))
    if nb.nbformat == 4 and nb.nbformat_minor < 5:
        nb.nbformat_minor = 5
        for cell in nb.cells:
            if "id" not in cell:
                cell["id"] = generate_corpus_id()
    js_number(nb)
    return nb


def normalize(path: Path, language_info: dict | None = None, check: bool = False) -> bool:
    """Write notebook `path` in the form JupyterLab keeps (not with `check`). Whether it was not."""
    import nbformat

    before = path.read_bytes()
    nb = jupyterlab_form(nbformat.reads(before.decode("utf-8"), as_version=4),
                         language_info=language_info)
    text = nbformat.writes(nb)
    after = (text if text.endswith("\n") else text + "\n").encode("utf-8")  # nbformat.write's bytes
    if after == before:
        return False
    if not check:
        path.write_bytes(after)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tcgemm.publish.lab_form",
        description="Save notebooks in the form JupyterLab keeps, so that they open unmodified.")
    parser.add_argument("notebooks", nargs="+", type=Path, metavar="NOTEBOOK")
    parser.add_argument("--language-info-from-kernel", action="store_true",
                        help="store the language_info of this machine's kernel of each notebook")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 naming the notebooks not in that form")
    args = parser.parse_args(argv)

    kernels: dict[str, dict] = {}

    def language_info(path: Path) -> dict | None:
        if not args.language_info_from_kernel:
            return None
        import nbformat
        name = nbformat.read(path, as_version=4).metadata.get("kernelspec", {}).get("name", "python3")
        if name not in kernels:
            kernels[name] = kernel_language_info(name)
        return kernels[name]

    changed = [path for path in args.notebooks if normalize(path, language_info(path), check=args.check)]
    for path in changed:
        print(f"lab_form: {path} {'is not in' if args.check else 'rewritten in'} the form JupyterLab keeps")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
