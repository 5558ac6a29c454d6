"""Launch wrappers of the book's GEMM kernels: check the operands, then launch."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from tcgemm.catalog import GEMM_KERNELS, GemmKernel
from tcgemm.errors import OperandError
from tcgemm.validate import check_gemm_operands
from tcgemm.gpu.compile import current_arch, get_function, source_versions
from tcgemm.gpu.device import device_info, require_gpu


def kernel_spec(key: str) -> GemmKernel:
    try:
        return GEMM_KERNELS[key]
    except KeyError:
        raise KeyError(f"unknown kernel {key!r}; the kernels are: {', '.join(GEMM_KERNELS)}") from None


def _require_device_array(cupy, name, x):
    if not isinstance(x, cupy.ndarray):
        where = "a numpy array in host memory" if isinstance(x, np.ndarray) else type(x).__name__
        raise OperandError(f"{name} is {where}; the kernels read GPU memory: pass cupy.asarray({name})")
    if x.device.id != cupy.cuda.Device().id:
        raise OperandError(f"{name} lives on GPU {x.device.id}, but the current device is {cupy.cuda.Device().id}")


def for_this_gpu(spec: GemmKernel) -> GemmKernel:
    """The configuration of `spec` that fits this GPU's shared memory per block, as the driver reports
    it (opt-in maximum). On the book's target architectures that is tcgemm.arch's figure, so the launcher
    picks what tcgemm.catalog.configured picks offline (tests/gpu/test_arch.py checks both)."""
    return spec.for_smem(device_info().shared_mem_per_block_optin)


def gemm(key: str, A, B, spec: GemmKernel | None = None):
    """C = A @ B with the kernel `key` of tcgemm.catalog. A: (M, K) row-major fp16; B: (K, N) column-major fp16.

    `spec` overrides the configuration the launcher would pick (e.g. kernel_spec(key).with_config(32, 5)).
    C is allocated filled with NaN, so an element the kernel fails to write cannot pass a check.
    """
    spec = for_this_gpu(kernel_spec(key)) if spec is None else spec
    cupy = require_gpu()
    _require_device_array(cupy, "A", A)
    _require_device_array(cupy, "B", B)
    M, N, K = check_gemm_operands(spec, A, B)
    C = cupy.full((M, N), np.nan, dtype=spec.out_dtype)
    launch(spec, A, B, C)
    return C


def kernel_function(spec: GemmKernel):
    """The compiled kernel of this configuration, allowed its dynamic shared memory (both done once
    per configuration, GPU and version of the source: see tcgemm.gpu.compile)."""
    return _kernel_function(spec, current_arch(), source_versions(spec.source))


@lru_cache(maxsize=None)
def _kernel_function(spec: GemmKernel, arch: str, versions: tuple):
    fn = get_function(spec.source, spec.entry, spec.defines)
    if spec.smem_bytes > 48 * 1024 and fn.max_dynamic_shared_size_bytes < spec.smem_bytes:
        fn.max_dynamic_shared_size_bytes = spec.smem_bytes
    return fn


K_ALIGN = 8   # fp16 per 16-byte copy: any-shape kernels need rows of a multiple of 8


def pad_k(A, B):
    """A (M, K) and B (K, N) with K padded by zeros to a multiple of K_ALIGN (B stays column-major).
    The padding path of the any-shape kernels: zeros add nothing to C, the copy costs M*K + K*N."""
    cupy = require_gpu()
    (M, K), N = A.shape, B.shape[1]
    Kp = -(-K // K_ALIGN) * K_ALIGN
    Ap = cupy.zeros((M, Kp), dtype=A.dtype)
    Bp = cupy.zeros((Kp, N), dtype=B.dtype, order="F")
    Ap[:, :K] = A
    Bp[:K, :] = B
    return Ap, Bp


def launch(spec: GemmKernel, A, B, C) -> None:
    """Launch without checks on operands already validated (the bench loop calls this)."""
    if spec.any_shape and A.shape[1] % K_ALIGN:
        A, B = pad_k(A, B)
    M, K = A.shape
    N = B.shape[1]
    fn = kernel_function(spec)
    fn(spec.grid(M, N), spec.block, (A, B, C, np.int32(M), np.int32(N), np.int32(K)),
       shared_mem=spec.smem_bytes)
