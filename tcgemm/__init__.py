"""tcgemm: the companion package of the book on Tensor Core GEMM kernels.

Pure modules (layouts, banks, kernel_smem, draw, hw, catalog, check, validate, report) import only
numpy and matplotlib; everything that touches the GPU lives in ``tcgemm.gpu`` and imports CuPy there.
"""
from pathlib import Path

__version__ = "0.1.0"

ROOT = Path(__file__).resolve().parent.parent
# The CUDA sources: the checkout's kernels/ when this package runs from a checkout (plain or
# `pip install -e .`), else the copy a built wheel ships as package data (setup.py maps kernels/ to
# tcgemm/kernels/).
_IN_CHECKOUT = (ROOT / "pyproject.toml").is_file() and (ROOT / "kernels").is_dir()
KERNEL_DIR = ROOT / "kernels" if _IN_CHECKOUT else Path(__file__).resolve().parent / "kernels"
