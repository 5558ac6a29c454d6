"""Without a GPU every entry point that needs one says so clearly (skipped where a GPU exists);
and the pure modules never import CuPy (checked everywhere)."""
import subprocess
import sys

import numpy as np
import pytest

from tcgemm import ROOT
from tcgemm.errors import NoGPUError
from tcgemm.engine.gpu.device import gpu_available

no_gpu = pytest.mark.skipif(gpu_available(), reason="a GPU is present")
# Every module of the package except the gpu subpackages (the CuPy part) and the entry points that reach it on
# purpose (the CLI; `make record`, which asks the GPU for the recording stamp). .importlinter states the
# same without running anything (tests/test_layers.py checks that its exceptions are these).
GPU_ENTRY_POINTS = {"__main__", "publish.record"}
PURE_MODULES = sorted(
    ".".join(p.relative_to(ROOT / "tcgemm").with_suffix("").parts).removesuffix(".__init__")
    for p in (ROOT / "tcgemm").rglob("*.py")
    if "gpu" not in p.relative_to(ROOT / "tcgemm").parts[:-1]
)
PURE_MODULES = [m for m in PURE_MODULES if m not in GPU_ENTRY_POINTS and m != "__init__"]


def test_every_subpackage_is_checked():
    assert {"fragment_layouts", "engine.catalog", "engine.plan", "fragments.draw", "smem.banks", "pipelines.pipeline",
            "sgemm.regbank", "numerics.rounding", "hopper.timeline"} <= set(PURE_MODULES)
    assert not [m for m in PURE_MODULES if "gpu" in m.split(".")]


@pytest.mark.slow     # a fresh Python per module; tests/test_layers.py checks the imports without running them
@pytest.mark.parametrize("module", PURE_MODULES)
def test_pure_module_does_not_import_cupy(module):
    code = (f"import sys, tcgemm.{module}; "
            "bad = sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('cupy', 'cupy_backends') or 'gpu' in m.split('.')); "
            "print(bad); sys.exit(bool(bad))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, f"tcgemm.{module} imports {done.stdout.strip()} {done.stderr[-500:]}"


@no_gpu
def test_gemm_without_gpu():
    from tcgemm.engine.gpu.gemm import run_kernel
    with pytest.raises(NoGPUError, match="GPU"):
        run_kernel("k1.0", np.ones((32, 16), np.float16), np.ones((16, 32), np.float16, order="F"))


@no_gpu
def test_cli_without_gpu(capsys):
    from tcgemm.__main__ import main
    assert main(["info"]) == 2
    assert "GPU" in capsys.readouterr().err
