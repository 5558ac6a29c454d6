"""Without a GPU every entry point that needs one says so clearly (skipped where a GPU exists)."""
import numpy as np
import pytest

from tcgemm.errors import NoGPUError
from tcgemm.gpu.device import gpu_available

pytestmark = pytest.mark.skipif(gpu_available(), reason="a GPU is present")


def test_gemm_without_gpu():
    from tcgemm.gpu.gemm import gemm
    with pytest.raises(NoGPUError, match="GPU"):
        gemm("k1.0", np.ones((32, 16), np.float16), np.ones((16, 32), np.float16, order="F"))


def test_cli_without_gpu(capsys):
    from tcgemm.__main__ import main
    assert main(["info"]) == 2
    assert "GPU" in capsys.readouterr().err
