"""`make lab` where readers run it: JupyterLab started by the Makefile's own target (as root too,
where this runs as root), opened in headless Chromium, offline, at the address it prints.

The notebook it opens first is the intro, at /lab/tree/intro.ipynb (JupyterLab's root is the
book's folder); with its kernel up, its tab is not marked modified, and saving it writes the file
back byte for byte; a CPU cell prints what the book recorded, and a %%gpu cell its one line (the
skip line where the kernel has no usable GPU). A notebook with widgets (ldmatrix) opens unmodified
too. The notebooks are copies, in a temporary root (make's LAB_ROOT), of the book's, with
`language_info` set to the lab kernel's (the one thing JupyterLab writes that follows the reader's
Python; see tcgemm/publish/lab_form.py); the book's own files are checked for that form without a
browser by test_book_notebooks_are_in_the_form_jupyterlab_keeps.

Uses .venv-lab as it is (made by `make lab`: its CUDA set, brought up to date by make); where there
is none, makes one without CUDA (`make CUDA=none .venv-lab/.stamp-cuda-none`: about 0.8 GB and a few
minutes, once). Needs Chromium, Node.js and `npm ci --prefix tests/browser` as test_browser.py does;
skipped without them unless TCGEMM_REQUIRE_BROWSER=1 (CI sets it).
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from tcgemm.publish.lab_form import jupyterlab_form
from required import skip_or_fail
from tcgemm.publish.magic import skip_line
from test_browser import BROWSER_DIR, missing_tools

ROOT = Path(__file__).resolve().parent.parent
LAB_VENV = ROOT / ".venv-lab"
FIRST = "intro.ipynb"          # the page `make lab` opens (the Makefile's LAB_OPTIONS)
WITH_WIDGETS = "ldmatrix.ipynb"
VENV_TIMEOUT_S = 1800          # pip installing the lab set
START_TIMEOUT_S = 120
BROWSER_TIMEOUT_S = 600


def require_lab():
    missing = missing_tools()
    missing += [f"{tool} (apt-get install {tool})" for tool in ("make",) if not shutil.which(tool)]
    if missing:
        skip_or_fail("TCGEMM_REQUIRE_BROWSER", "JupyterLab test needs " + "; ".join(missing))


def lab_cuda_set() -> str:
    """The CUDA set of the .venv-lab there is (`make lab` made it), else "none"."""
    stamps = sorted(LAB_VENV.glob(".stamp-cuda-*"))
    return stamps[0].name.removeprefix(".stamp-cuda-") if stamps else "none"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lab_python(code: str, env: dict) -> str:
    run = subprocess.run([str(LAB_VENV / "bin" / "python"), "-c", code], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return run.stdout


def cells_to_run(nb) -> list[int]:
    """The cell that loads %%gpu, the first CPU cell from there on that prints, the first %%gpu cell."""
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    magic = next(i for i, c in code if "%load_ext tcgemm.publish.magic" in c.source)
    prints = next(i for i, c in code if i >= magic and not c.source.startswith("%%gpu") and stdout(c))
    gpu = next(i for i, c in code if i > magic and c.source.startswith("%%gpu"))
    return sorted({magic, prints, gpu})


def stdout(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")


def lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """`make lab` serving a temporary copy of two of the book's notebooks; Chromium's report on them."""
    require_lab()
    tmp = tmp_path_factory.mktemp("lab")
    # A copy of the checkout's book/ and _toc.yml (the intro reads it), served from book/ as make lab does.
    root, out, home = tmp / "checkout" / "book", tmp / "out", tmp / "jupyter"
    shutil.copytree(ROOT / "book", root)
    shutil.copy(ROOT / "_toc.yml", root.parent / "_toc.yml")
    out.mkdir()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_DATA_DIR": str(home / "data"),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "IPYTHONDIR": str(home / "ipython")}
    cuda = lab_cuda_set()
    made = subprocess.run(["make", "--no-print-directory", f"CUDA={cuda}", f".venv-lab/.stamp-cuda-{cuda}"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=VENV_TIMEOUT_S)
    assert made.returncode == 0, f"making .venv-lab failed:\n{made.stdout[-3000:]}{made.stderr[-3000:]}"

    normalized = subprocess.run(
        [str(LAB_VENV / "bin" / "python"), "-m", "tcgemm.publish.lab_form", "--language-info-from-kernel",
         *(str(root / name) for name in (FIRST, WITH_WIDGETS))],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert normalized.returncode == 0, normalized.stderr
    # The intro's cells to run start with empty prompts, so each run is seen by its new count.
    intro = nbformat.read(root / FIRST, as_version=4)
    run = cells_to_run(intro)
    for i in run:
        intro.cells[i].outputs, intro.cells[i].execution_count = [], None
    nbformat.write(intro, root / FIRST)
    stored = {name: (root / name).read_bytes() for name in (FIRST, WITH_WIDGETS)}

    port, token = free_port(), None
    log_path = tmp / "server.log"
    lab_args = f"--no-browser --ip=127.0.0.1 --port={port}"  # the token: the one Jupyter makes and prints
    with open(log_path, "w") as log:
        server = subprocess.Popen(
            ["make", "--no-print-directory", f"CUDA={cuda}", f"LAB_ROOT={root}", f"LAB_ARGS={lab_args}", "lab"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        url = None
        while url is None and time.monotonic() < deadline and server.poll() is None:
            time.sleep(0.5)
            found = re.search(rf"http://127\.0\.0\.1:{port}/\S*\?token=(\w+)", log_path.read_text())
            url, token = (found.group(0), found.group(1)) if found else (None, None)
        assert url, f"make lab did not start JupyterLab (or printed no address):\n{log_path.read_text()[-4000:]}"
        browser = subprocess.run(
            ["node", str(BROWSER_DIR / "check_lab.mjs"), str(out), url, "--run", ",".join(map(str, run)),
             "--then", WITH_WIDGETS],
            cwd=ROOT, env={**env, "TCGEMM_LAB_ROOT": str(root)}, capture_output=True, text=True,
            timeout=BROWSER_TIMEOUT_S)
        assert browser.returncode == 0 and (out / "report.json").is_file(), \
            f"check_lab.mjs failed:\n{browser.stdout}{browser.stderr}"
        report = json.loads((out / "report.json").read_text())
        reason = json.loads(lab_python(
            "import json; from tcgemm.engine.gpu.device import gpu_unavailable_reason as r; print(json.dumps(r()))", env))
        yield {"url": url, "report": report, "stored": stored, "out": out, "root": root, "run": run,
               "gpu_reason": reason, "log": log_path}
    finally:
        stop(server, port, token)


def stop(server: subprocess.Popen, port: int, token: str | None):
    """JupyterLab asked to shut down (its kernels with it), then make's process group ended."""
    try:
        assert token
        request = urllib.request.Request(f"http://127.0.0.1:{port}/api/shutdown",
                                         method="POST", headers={"Authorization": f"token {token}"})
        urllib.request.urlopen(request, timeout=10).close()
        server.wait(timeout=30)
    except Exception:
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if server.poll() is not None:
            break
        try:
            os.killpg(server.pid, sig)
            server.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass


def where(lab) -> str:
    return f" (screenshots in {lab['out']}; server log {lab['log']})"


@pytest.mark.slow
def test_make_lab_opens_the_intro_at_the_address_it_prints(lab):
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/lab/tree/intro\.ipynb\?token=[0-9a-f]+", lab["url"]), lab["url"]
    log = lab["log"].read_text()
    assert f"Serving notebooks from local directory: {lab['root']}" in log, log[-3000:]
    if os.geteuid() == 0:
        assert "Running as root is not recommended" not in log


@pytest.mark.slow
@pytest.mark.parametrize("name", [FIRST, WITH_WIDGETS])
def test_notebook_opens_unmodified_and_saves_as_stored(lab, name):
    seen = lab["report"]["notebooks"][name]
    assert seen["error"] is None and seen["kernelIdle"], f"{seen}{where(lab)}"
    assert seen["dirtySamples"] and not any(seen["dirtySamples"]), \
        f"{name}: its tab is marked modified with the kernel up: {seen['dirtySamples']}{where(lab)}"
    assert seen["saved"], f"{name}: Ctrl+S wrote nothing{where(lab)}"
    saved = (lab["out"] / f"{name}.saved").read_bytes()
    if saved != lab["stored"][name]:
        pytest.fail(f"{name}: JupyterLab's save changed the file (see {lab['out'] / (name + '.saved')} "
                    f"against the copy it opened); tcgemm.publish.lab_form misses something")
    assert lab["report"]["external"] == [], lab["report"]["external"]


@pytest.mark.slow
def test_cells_run_and_a_gpu_cell_says_in_one_line_why_it_cannot(lab):
    cells = {c["index"]: c for c in lab["report"]["cells"]}
    assert sorted(cells) == lab["run"], f"{lab['report']['cells']}{where(lab)}"
    for count, index in enumerate(lab["run"], start=1):
        assert cells[index]["prompt"] == f"[{count}]:", f"cell {index}: {cells[index]}{where(lab)}"
        errors = [o for o in cells[index]["outputs"] if "error" in (o["mime"] or "") or "stderr" in (o["mime"] or "")]
        assert not errors, f"cell {index}: {errors}"

    def printed(index):
        return "\n".join(o["text"] for o in cells[index]["outputs"] if o["mime"] == "application/vnd.jupyter.stdout")

    book = nbformat.read(ROOT / "book" / FIRST, as_version=4)
    *cpu, gpu = lab["run"]
    prints = next(i for i in cpu if stdout(book.cells[i]))
    assert lines(printed(prints)) == lines(stdout(book.cells[prints])), cells[prints]
    said = lines(printed(gpu))
    if lab["gpu_reason"] is not None:
        assert said == [skip_line(lab["gpu_reason"])], cells[gpu]
    else:
        assert not any(s.startswith("skipped:") for s in said), cells[gpu]


def test_book_notebooks_are_in_the_form_jupyterlab_keeps():
    """What JupyterLab would change on opening or saving each notebook of book/, but for Python's
    version in language_info (the reader's): none (`python -m tcgemm.publish.lab_form book/*.ipynb`
    fixes it; `make record` writes that form)."""
    pytest.importorskip("jupyter_client")
    off = []
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        stored = path.read_text(encoding="utf-8")
        nb = nbformat.reads(stored, as_version=4)
        kept = nbformat.writes(jupyterlab_form(nb))
        if kept.rstrip("\n") != stored.rstrip("\n"):
            off.append(path.name)
    assert not off, ("not in the form JupyterLab keeps (it would mark them modified or rewrite them): "
                     f"{', '.join(off)}; run python -m tcgemm.publish.lab_form book/*.ipynb")


def test_jupyterlab_form_is_what_jupyterlab_writes(tmp_path):
    """The kernelspec of the running kernel, integral floats as ints (JavaScript numbers), cells with
    ids; the form is kept as it is, and the command rewrites a file once."""
    pytest.importorskip("jupyter_client")
    from nbformat.v4 import new_code_cell, new_notebook

    from tcgemm.publish.lab_form import js_number, kernelspec_of, main

    assert js_number({"a": [0.0, 1.5, -0.0, 2e21, float("nan")], "b": "0.0"}) == \
        {"a": [0, 1.5, 0, 2e21, None], "b": "0.0"}
    nb = new_notebook(cells=[new_code_cell("x = 1", metadata={"w": 3.0})],
                      metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                                "widgets": {"state": {"hit_rate": 0.0}}})
    nb.nbformat_minor = 4
    del nb.cells[0]["id"]
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb))
    assert main(["--check", str(path)]) == 1
    assert main([str(path)]) == 0
    kept = json.loads(path.read_text())
    assert kept["metadata"]["kernelspec"] == kernelspec_of("python3")
    assert kept["metadata"]["kernelspec"]["display_name"] != "Python 3"  # ipykernel's: "Python 3 (ipykernel)"
    assert kept["metadata"]["widgets"]["state"]["hit_rate"] == 0 and type(kept["metadata"]["widgets"]["state"]["hit_rate"]) is int
    assert kept["cells"][0]["metadata"]["w"] == 3 and kept["cells"][0]["id"] and kept["nbformat_minor"] == 5
    before = path.read_bytes()
    assert main(["--check", str(path)]) == 0 and path.read_bytes() == before
