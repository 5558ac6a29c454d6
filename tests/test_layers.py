"""The package's layers as .importlinter declares them, checked by import-linter: the engine imports no
chapter folder, no module outside a gpu subpackage imports one (but for four entry points), only the gpu
subpackages import CuPy, they import none of the entry points, and no import cycles between the modules
and subpackages of tcgemm. The
contracts are shown to catch what they forbid (on a copy of the package that breaks each), and their
exceptions to agree with the run-time check of tests/test_no_gpu.py."""
from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tcgemm import ROOT

CONFIG = ROOT / ".importlinter"
CONTRACTS = ("engine", "pure", "cupy", "entry-points", "acyclic")


def contract(name: str) -> configparser.SectionProxy:
    config = configparser.ConfigParser()
    config.read(CONFIG)
    return config[f"importlinter:contract:{name}"]


def lint_imports(where: Path) -> subprocess.CompletedProcess:
    """`lint-imports` with the checkout's contracts on the package found first from `where`."""
    here = Path(sys.executable).parent / "lint-imports"
    command = str(here) if here.exists() else shutil.which("lint-imports")
    assert command, "lint-imports is not installed (pip install -r requirements-test.txt: import-linter)"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(where), os.environ.get("PYTHONPATH")])),
               COLUMNS="200", NO_COLOR="1")
    return subprocess.run([command, str(CONFIG), "--no-cache", "--no-logo"], cwd=where, env=env,
                          capture_output=True, text=True, timeout=120)


def status(run: subprocess.CompletedProcess) -> dict[str, str]:
    """KEPT or BROKEN for each contract of .importlinter, read from lint-imports' summary."""
    found = {}
    for name in CONTRACTS:
        title = contract(name)["name"]
        line = next((line for line in run.stdout.splitlines() if line.startswith(title + " ")), "")
        found[name] = "KEPT" if " KEPT" in line else "BROKEN" if " BROKEN" in line else "missing"
    return found


def test_the_package_keeps_every_contract():
    run = lint_imports(ROOT)
    assert run.returncode == 0 and set(status(run).values()) == {"KEPT"}, run.stdout + run.stderr


def test_each_contract_catches_what_it_forbids(tmp_path):
    """A copy of the package with one forbidden import per contract: lint-imports names each."""
    shutil.copytree(ROOT / "tcgemm", tmp_path / "tcgemm",
                    ignore=lambda folder, names: [n for n in names if not n.endswith(".py") and
                                                  not (Path(folder) / n).is_dir() or n == "__pycache__"])
    package = tmp_path / "tcgemm"

    def append(module: str, text: str) -> None:
        with open(package / module, "a") as f:
            f.write(text)
    append("hw.py", "\nimport cupy\n")
    append("engine/plan.py", "\n\ndef _here():\n    from tcgemm.engine.gpu.gemm import gpu_shape\n    return gpu_shape()\n")
    append("engine/gpu/device.py", "\n\ndef _magic():\n    from tcgemm.publish import magic\n    return magic\n")
    append("engine/timing.py", "\n\ndef _chapter():\n    from tcgemm.hopper import power\n    return power\n")
    run = lint_imports(tmp_path)
    assert run.returncode != 0
    assert status(run) == {name: "BROKEN" for name in CONTRACTS}, run.stdout + run.stderr
    for edge in ("tcgemm.hw -> cupy", "tcgemm.engine.plan -> tcgemm.engine.gpu.gemm",
                 "tcgemm.engine.gpu.device -> tcgemm.publish.magic", "tcgemm.engine.timing -> tcgemm.hopper.power"):
        assert edge in run.stdout, edge


def test_the_gpu_entry_points_agree_with_the_run_time_check():
    """The modules allowed to import tcgemm.engine.gpu are the ones tests/test_no_gpu.py lets import it when
    imported (the CLI, `make record`), and two that import it only when called: the package root's
    matmul and the book's cell magics (%%gpu, and %%kernel, which reaches the workbench's GPU part too),
    which test_no_gpu checks like any pure module."""
    from test_no_gpu import GPU_ENTRY_POINTS, PURE_MODULES
    ignored = [line.split("->") for line in contract("pure")["ignore_imports"].splitlines() if line.strip()]
    importers = {importer.strip() for importer, _ in ignored}
    assert all(imported.strip().startswith("tcgemm.engine.gpu.") or
               (importer.strip(), imported.strip()) == ("tcgemm.publish.magic", "tcgemm.practice.gpu.workbench")
               for importer, imported in ignored)
    assert importers == {f"tcgemm.{m}" for m in GPU_ENTRY_POINTS} | {"tcgemm", "tcgemm.publish.magic"}
    assert "publish.magic" in PURE_MODULES
