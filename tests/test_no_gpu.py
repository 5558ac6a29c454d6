"""Without a GPU every entry point that needs one says so clearly (skipped where a GPU exists);
and the pure modules never import CuPy (checked everywhere)."""
import subprocess
import sys

import numpy as np
import pytest

from tcgemm import ROOT
from tcgemm.errors import NoGPUError
from tcgemm.gpu.device import gpu_available

no_gpu = pytest.mark.skipif(gpu_available(), reason="a GPU is present")
PURE_MODULES = ["banks", "catalog", "check", "draw", "hw", "kernel_smem", "layouts", "report", "validate"]


@pytest.mark.parametrize("module", PURE_MODULES)
def test_pure_module_does_not_import_cupy(module):
    code = (f"import sys, tcgemm.{module}; "
            "bad = sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('cupy', 'cupy_backends') or m.startswith('tcgemm.gpu')); "
            "print(bad); sys.exit(bool(bad))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, f"tcgemm.{module} imports {done.stdout.strip()} {done.stderr[-500:]}"


@no_gpu
def test_gemm_without_gpu():
    from tcgemm.gpu.gemm import gemm
    with pytest.raises(NoGPUError, match="GPU"):
        gemm("k1.0", np.ones((32, 16), np.float16), np.ones((16, 32), np.float16, order="F"))


@no_gpu
def test_cli_without_gpu(capsys):
    from tcgemm.__main__ import main
    assert main(["info"]) == 2
    assert "GPU" in capsys.readouterr().err
