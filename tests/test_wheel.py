"""The package installs: a wheel built from this checkout holds every module, the widgets' files and
the CUDA sources (kernels/ shipped as tcgemm/kernels/), and, installed into a fresh virtual
environment, it is what imports there: its pure modules import, its KERNEL_DIR is the packaged copy
with every source the catalog names, and a few of the CPU tests pass against it.

Offline: the build uses this venv's setuptools (no build isolation); the fresh venv sees this venv's
packages (numpy, matplotlib, pytest) through a .pth line, which adds the folder but runs none of its
.pth files, so the editable install of tcgemm here cannot leak in; tcgemm comes only from the wheel.
"""
import json
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from test_no_gpu import PURE_MODULES
from tcgemm import KERNEL_DIR, ROOT

pytestmark = pytest.mark.slow

BUILD_INPUTS = ("pyproject.toml", "setup.py", "README.md", "tcgemm", "kernels")  # what the build reads
TESTS_RUN_INSTALLED = ("test_source.py", "test_results.py", "test_hw.py")       # CPU tests, data they read
PACKAGE_FILES = ("*.py", "*.js", "*.css")


def run(cmd, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, **kwargs)
    assert done.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(wheel, python of a fresh venv with the wheel installed, that venv's site-packages)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"     # a copy: the build's build/ and *.egg-info must not land in the checkout
    src.mkdir()
    for name in BUILD_INPUTS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    run([sys.executable, "-m", "pip", "wheel", src, "--no-deps", "--no-build-isolation", "--no-index",
         "--wheel-dir", tmp / "dist"])
    (wheel,) = (tmp / "dist").glob("tcgemm-*.whl")
    run([sys.executable, "-m", "venv", "--without-pip", tmp / "venv"])
    python = tmp / "venv" / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", wheel])
    site = Path(run([python, "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    ours = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (site / "test_venv_packages.pth").write_text("\n".join(ours) + "\n")
    return wheel, python, site


def test_wheel_holds_the_package_and_the_kernels(built):
    wheel, _, _ = built
    names = set(zipfile.ZipFile(wheel).namelist())
    package = {f"tcgemm/{p.relative_to(ROOT / 'tcgemm').as_posix()}" for pattern in PACKAGE_FILES
               for p in (ROOT / "tcgemm").rglob(pattern) if "__pycache__" not in p.parts}
    kernels = {f"tcgemm/kernels/{p.name}" for p in KERNEL_DIR.iterdir() if p.suffix in (".cu", ".cuh")}
    assert kernels and package
    assert package - names == set(), "files of tcgemm/ missing from the wheel"
    assert kernels - names == set(), "CUDA sources missing from the wheel"


CHECK_INSTALLED = """
import importlib, json, sys
import tcgemm
from tcgemm.engine.catalog import all_sources
for name in sys.argv[1:]:
    importlib.import_module("tcgemm." + name)
print(json.dumps({
    "prefix": sys.prefix, "file": tcgemm.__file__, "kernel_dir": str(tcgemm.KERNEL_DIR),
    "missing": [s for s in all_sources() + ["ptx.cuh"] if not (tcgemm.KERNEL_DIR / s).is_file()],
    "cupy": sorted(m for m in sys.modules if m.split(".")[0] == "cupy"),
}))
"""


def test_installed_copy_imports_with_its_kernels(built, tmp_path):
    _, python, site = built
    # -I: no PYTHONPATH, no user site, no script folder or cwd on sys.path; cwd away from the checkout
    out = json.loads(run([python, "-I", "-c", CHECK_INSTALLED, *PURE_MODULES], cwd=tmp_path).stdout)
    assert Path(out["file"]) == site / "tcgemm" / "__init__.py"
    assert Path(out["kernel_dir"]) == site / "tcgemm" / "kernels"
    assert out["missing"] == [] and out["cupy"] == []


def test_cpu_tests_pass_against_the_installed_copy(built, tmp_path):
    _, python, site = built
    tests = tmp_path / "tests"
    tests.mkdir()
    for name in TESTS_RUN_INSTALLED:
        shutil.copy2(ROOT / "tests" / name, tests / name)
    shutil.copytree(ROOT / "tests" / "data", tests / "data")
    (tests / "conftest.py").write_text(
        "import tcgemm\n"
        f"assert tcgemm.__file__ == {str(site / 'tcgemm' / '__init__.py')!r}, tcgemm.__file__\n")
    done = run([python, "-I", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:nbval",
                "--rootdir", tests, "-k", "not results_folder", tests], cwd=tmp_path)   # no results/ there
    assert " passed" in done.stdout and "skipped" not in done.stdout
