"""tcgemm: the companion package of the book on Tensor Core GEMM kernels.

Pure modules (layouts, banks, kernel_smem, draw, hw, catalog, check, validate, report) import only
numpy and matplotlib; everything that touches the GPU lives in ``tcgemm.gpu`` and imports CuPy there.
"""
from pathlib import Path

__version__ = "0.1.0"

ROOT = Path(__file__).resolve().parent.parent
KERNEL_DIR = ROOT / "kernels"
