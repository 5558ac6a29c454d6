"""tcgemm: the companion package of the book on Tensor Core GEMM kernels.

Each chapter's code is a folder (``fragments``, ``smem``, ``pipelines``, ``sgemm``, ``numerics``,
``hopper``) above the engine every chapter uses (``tcgemm.engine``: the catalog, the plan, checks,
reports, timing); the top-level modules (``hw``, ``arch``, ``table``, ``style``, ...) are shared by all.
Everything that touches the GPU lives in a folder's ``gpu`` subpackage (``tcgemm.engine.gpu``,
``tcgemm.hopper.gpu``, ...) and imports CuPy there; the rest runs without a GPU and imports only numpy
and matplotlib; ``tcgemm.widgets`` adds anywidget, and
``tcgemm.publish`` (recording the book, its prose, its table of contents) IPython, nbclient and PyYAML.
"""
from pathlib import Path

__version__ = "0.1.0"

ROOT = Path(__file__).resolve().parent.parent
# The CUDA sources: the checkout's kernels/ when this package runs from a checkout (plain or
# `pip install -e .`), else the copy a built wheel ships as package data (setup.py maps kernels/ to
# tcgemm/kernels/).
_IN_CHECKOUT = (ROOT / "pyproject.toml").is_file() and (ROOT / "kernels").is_dir()
KERNEL_DIR = ROOT / "kernels" if _IN_CHECKOUT else Path(__file__).resolve().parent / "kernels"


def matmul(A, B, *, out=None, alpha=1, beta=0, C=None, kernel=None, out_dtype=None, allow_tf32=False):
    """D = alpha * A @ B + beta * C on the GPU, for float16, bfloat16, int8 or fp8 (float8_e4m3fn,
    float8_e5m2: PyTorch tensors, sm_89 and sm_90) matrices A (M, K) and B (K, N), or float32 ones with
    allow_tf32=True (multiplied as tf32), each row- or column-major: CuPy arrays, PyTorch tensors or any
    array with __cuda_array_interface__ or __dlpack__. D is in the inputs' type (int8: exact int32; fp8 and
    tf32: float32, there being no fp8 C) unless out_dtype or out says otherwise. See
    tcgemm.engine.gpu.matmul (imported on first call, so that `import tcgemm` needs no GPU); `tcgemm.plan`
    says which kernel a call runs and why."""
    from tcgemm.engine.gpu.matmul import matmul as gpu_matmul

    return gpu_matmul(A, B, out=out, alpha=alpha, beta=beta, C=C, kernel=kernel, out_dtype=out_dtype,
                      allow_tf32=allow_tf32)


def plan(M, N, K, dtype="float16", out_dtype=None, alpha=1, beta=0, allow_tf32=False):
    """The kernel tcgemm.matmul runs on this GPU for an M x N x K product of `dtype` inputs (A row-major,
    B column-major), and why (print it). Without a GPU: tcgemm.engine.dispatch.dispatch(arch, sms, M, N,
    K, ...)."""
    from tcgemm.engine.gpu.matmul import chosen

    return chosen(M, N, K, dtype, out_dtype, (alpha, beta) != (1, 0), allow_tf32=allow_tf32)
