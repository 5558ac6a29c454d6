"""Compile kernels/*.cu at run time with CuPy's RawModule (NVRTC) for the GPU in this machine.

NVRTC and the CUDA headers come from pip (the CUDA 13 or the CUDA 12 set): CuPy finds libnvrtc
through cuda-pathfinder, and we pass the include folders of the same CUDA major with -I, so no
system CUDA toolkit is needed. Modules are cached in memory here and on disk by CuPy; the disk cache key
covers the source text and the options, so the options carry a hash of the shared headers too.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache

from tcgemm import KERNEL_DIR
from tcgemm.errors import KernelCompileError
from tcgemm.gpu.device import require_gpu
from tcgemm.gpu.nvrtc_offline import nvrtc_options, toolkit


def _headers_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(KERNEL_DIR.glob("*.cuh")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _source(name: str) -> str:
    path = KERNEL_DIR / name
    if not path.is_file():
        known = ", ".join(sorted(p.name for p in KERNEL_DIR.glob("*.cu")))
        raise FileNotFoundError(f"no kernel source kernels/{name}; the kernels are: {known}")
    return path.read_text()


def load_module(name: str, defines: tuple[tuple[str, int], ...] = ()):
    """The compiled cupy.RawModule of kernels/<name> (with -D`defines`) for this GPU's architecture."""
    cupy = require_gpu()
    code = _source(name)
    arch = f"sm_{cupy.cuda.Device().compute_capability}"
    return _compile(name, code, _headers_digest(), arch, tuple(defines))


@lru_cache(maxsize=None)
def _compile(name: str, code: str, headers_digest: str, arch: str, defines: tuple = ()):
    import cupy

    from cupy_backends.cuda.libs import nvrtc

    # The headers of the CUDA major of CuPy's own NVRTC. CuPy adds -arch itself (from the current
    # device), so drop ours.
    kit = toolkit(nvrtc.getVersion()[0])
    options = [o for o in nvrtc_options(arch, defines, kit) if not o.startswith(("-arch", "--gpu-architecture"))]
    options.append(f"-DTCGEMM_HEADERS={headers_digest}")
    module = cupy.RawModule(code=code, options=tuple(options), backend="nvrtc")
    try:
        module.compile()
    except cupy.cuda.compiler.CompileException as exc:
        flags = "".join(f" -D{k}={v}" for k, v in defines)
        raise KernelCompileError(
            f"NVRTC could not compile kernels/{name}{flags} for {arch}. Its log:\n{exc.get_message()}"
        ) from None
    return module


def get_function(source: str, entry: str, defines: tuple[tuple[str, int], ...] = ()):
    module = load_module(source, defines)
    try:
        return module.get_function(entry)
    except Exception as exc:
        raise KernelCompileError(
            f"kernels/{source} compiled, but has no extern \"C\" kernel named {entry!r} ({exc})"
        ) from exc
