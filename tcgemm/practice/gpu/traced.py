"""A book kernel with a few lines added that record what it does (an index, an address), compiled with NVRTC
for this GPU: how the exercises' hardware checks read a kernel's own answer.

The edits are exact pieces of the kernel's source, each replaced once: when the kernel's text changes, the
edit that no longer fits is named (the chapters' CPU tests try the edits, and compile the traced sources
where NVRTC is installed).
The recording lines write to `__device__` arrays that the prelude declares, read back with `device_array`.
"""
from __future__ import annotations

from functools import lru_cache

from tcgemm.engine.catalog import configured
from tcgemm.engine.source import kernel_text
from tcgemm.errors import KernelCompileError


def traced_source(key: str, prelude: str, edits: tuple[tuple[str, str], ...]) -> str:
    """Kernel `key`'s source with `prelude` put first and each (piece, replacement) of `edits` made; a
    piece must occur exactly once."""
    text = kernel_text(key)
    for piece, replacement in edits:
        found = text.count(piece)
        if found != 1:
            raise ValueError(f"kernel {key}: the traced edit expects {piece!r} once in its source, found it "
                             f"{found} times (the kernel changed: update the edit)")
        text = text.replace(piece, replacement)
    return prelude + text


@lru_cache(maxsize=None)
def traced_module(key: str, prelude: str, edits: tuple[tuple[str, str], ...], defines: tuple = ()):
    """The traced source of kernel `key` (with -D`defines`) as a compiled cupy.RawModule for this GPU, with
    NVRTC of CuPy's own CUDA major, as tcgemm.engine.gpu.compile builds the book's kernels."""
    from tcgemm.engine.gpu.compile import current_arch
    from tcgemm.engine.gpu.device import require_gpu
    from tcgemm.engine.gpu.nvrtc_offline import compile_error_message, nvrtc_options, toolkit

    cupy = require_gpu()
    from cupy_backends.cuda.libs import nvrtc

    kit = toolkit(nvrtc.getVersion()[0])
    options = [o for o in nvrtc_options(current_arch(), tuple(defines), kit) if not o.startswith("-arch")]
    module = cupy.RawModule(code=traced_source(key, prelude, edits), options=tuple(options), backend="nvrtc")
    try:
        module.compile()
    except cupy.cuda.compiler.CompileException as exc:
        raise KernelCompileError(compile_error_message(f"NVRTC could not compile the traced kernel {key}.",
                                                       f"Its log:\n{exc.get_message()}", kit.major)) from None
    return module


def traced_kernel(key: str, prelude: str, edits: tuple[tuple[str, str], ...], defines: tuple = ()):
    """(the traced kernel's entry, its module)."""
    module = traced_module(key, prelude, edits, tuple(defines))
    return module.get_function(configured(key).entry), module


def device_array(module, name: str, dtype, count: int):
    """The `__device__` array `name` of a traced module (its first `count` elements), as a CuPy array."""
    import cupy

    dtype = cupy.dtype(dtype)
    return cupy.ndarray((count,), dtype, module.get_global(name))
