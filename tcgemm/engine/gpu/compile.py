"""Compile kernels/*.cu at run time with CuPy's RawModule (NVRTC) for the GPU in this machine.

NVRTC and the CUDA headers come from pip (the CUDA 13 or the CUDA 12 set): CuPy finds libnvrtc
through cuda-pathfinder, and we pass the include folders of the same CUDA major with -I, so no
system CUDA toolkit is needed. Modules are cached in memory here and on disk by CuPy; the disk cache key
covers the source text and the options, so the options carry a hash of the shared headers too.

A launch must not pay for any of this: the kernel function is looked up once per source, entry,
defines and architecture, and again only when the modification times of the source or of a shared
header change (a reader editing a kernel in JupyterLab gets it recompiled), so a call costs two stat()s.
"""
from __future__ import annotations

import hashlib
import os
import sys
from functools import lru_cache

from tcgemm import KERNEL_DIR
from tcgemm.arch import arch_specific_target
from tcgemm.errors import KernelCompileError
from tcgemm.engine.gpu.device import require_gpu
from tcgemm.engine.gpu.nvrtc_offline import (compile_cubin, compile_error_message, compile_source_text, nvrtc_options,
                                             toolkit)


@lru_cache(maxsize=None)
def _header_paths() -> tuple:
    return tuple(sorted(KERNEL_DIR.glob("*.cuh")))


def _headers_digest() -> str:
    h = hashlib.sha256()
    for path in _header_paths():
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _source(name: str) -> str:
    path = KERNEL_DIR / name
    if not path.is_file():
        known = ", ".join(sorted(p.name for p in KERNEL_DIR.glob("*.cu")))
        raise FileNotFoundError(f"no kernel source kernels/{name}; the kernels are: {known}")
    return path.read_text()


@lru_cache(maxsize=None)
def _watched(name: str) -> tuple:
    return (str(KERNEL_DIR / name), *map(str, _header_paths()))


def source_versions(name: str) -> tuple:
    """Modification times of kernels/<name> and of the shared headers: a new value means recompile."""
    try:
        return tuple(os.stat(path).st_mtime_ns for path in _watched(name))
    except FileNotFoundError:
        _source(name)   # raises the error that lists the kernels
        raise


_ARCH_BY_DEVICE: dict[int, str] = {}


def current_arch() -> str:
    """sm_XY of the current device: asked of CuPy once per device, then a dictionary lookup."""
    cupy = sys.modules.get("cupy")
    arch = cupy and _ARCH_BY_DEVICE.get(cupy.cuda.runtime.getDevice())
    if arch:
        return arch
    cupy = require_gpu()
    arch = f"sm_{cupy.cuda.Device().compute_capability}"
    _ARCH_BY_DEVICE[cupy.cuda.runtime.getDevice()] = arch
    return arch


def load_module(name: str, defines: tuple[tuple[str, int], ...] = ()):
    """The compiled cupy.RawModule of kernels/<name> (with -D`defines`) for this GPU's architecture."""
    return _module(name, tuple(defines), current_arch(), source_versions(name))


@lru_cache(maxsize=None)
def _module(name: str, defines: tuple, arch: str, versions: tuple):
    return _compile(name, _source(name), _headers_digest(), arch, defines)


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
        raise KernelCompileError(compile_error_message(
            f"NVRTC could not compile kernels/{name}{flags} for {arch}.", f"Its log:\n{exc.get_message()}",
            kit.major)) from None
    return module


def get_function(source: str, entry: str, defines: tuple[tuple[str, int], ...] = ()):
    """The kernel `entry` of kernels/<source>, compiled for this GPU (looked up once, see above)."""
    return _function(source, entry, tuple(defines), current_arch(), source_versions(source))


@lru_cache(maxsize=None)
def _function(source: str, entry: str, defines: tuple, arch: str, versions: tuple):
    return _entry(_module(source, defines, arch, versions), f"kernels/{source}", entry, "")


def _entry(module, source: str, entry: str, built_for: str):
    """The function `entry` of a module compiled from `source` (a file of kernels/, or a text's name)."""
    try:
        return module.get_function(entry)
    except Exception as exc:
        raise KernelCompileError(
            f"{source} compiled{built_for}, but has no extern \"C\" kernel named {entry!r} ({exc})"
        ) from exc


def get_arch_specific_function(source: str, entry: str, defines: tuple[tuple[str, int], ...] = ()):
    """The kernel `entry` of kernels/<source> compiled for this GPU's arch_specific_target. CuPy's
    RawModule always adds its own -arch=sm_XY, so this compiles with the same NVRTC library directly
    (tcgemm.engine.gpu.nvrtc_offline) and loads the cubin; looked up once, like get_function. The result
    has the attributes of a cupy.RawKernel that tcgemm reads (LoadedKernel)."""
    target = arch_specific_target(current_arch())
    return _arch_specific_function(source, entry, tuple(defines), target, source_versions(source))


def _launch_toolkit():
    """The toolkit of CuPy's own NVRTC: the CUDA major whose cubins this driver runs, as CuPy's do."""
    require_gpu()
    from cupy_backends.cuda.libs import nvrtc

    return toolkit(nvrtc.getVersion()[0])


def _loaded(cubin: bytes):
    """A cubin loaded into the device's primary context, as a cupy.cuda.function.Module."""
    cupy = require_gpu()
    cupy.cuda.runtime.free(0)        # makes the device's primary context current: loading a cubin needs one
    module = cupy.cuda.function.Module()
    module.load(cubin)
    return module


@lru_cache(maxsize=None)
def _arch_specific_module(source: str, defines: tuple, target: str, versions: tuple):
    return _loaded(compile_cubin(source, target, defines, _launch_toolkit()))


def text_target(arch_specific: bool) -> str:
    """The target a source text is compiled for on this GPU: its arch_specific_target where asked, else its
    architecture."""
    return arch_specific_target(current_arch()) if arch_specific else current_arch()


@lru_cache(maxsize=None)
def text_cubin(text: str, name: str, target: str, defines: tuple[tuple[str, int], ...] = ()) -> bytes:
    """CUDA source `text` (named `name` in NVRTC's messages) compiled for `target` by the NVRTC of CuPy's CUDA
    major, as get_text_function loads it: once per text, target and defines. KernelCompileError carries
    NVRTC's log."""
    return compile_source_text(text, name, target, tuple(defines), _launch_toolkit())


def get_text_function(text: str, name: str, entry: str, defines: tuple[tuple[str, int], ...] = (),
                      arch_specific: bool = False):
    """The kernel `entry` of CUDA source `text` rather than of a file of kernels/ (the workbench's cell, in
    place of kernels/<name>), compiled for this GPU (text_target) by text_cubin and loaded: looked up once
    per text. The result has the attributes of a cupy.RawKernel that tcgemm reads (LoadedKernel)."""
    return _text_function(text, name, entry, tuple(defines), text_target(arch_specific))


@lru_cache(maxsize=None)
def _text_function(text: str, name: str, entry: str, defines: tuple, target: str):
    return LoadedKernel(_entry(_loaded(text_cubin(text, name, target, defines)), name, entry, f" for {target}"))


def arch_specific_global(source: str, name: str, nbytes: int, defines: tuple[tuple[str, int], ...] = ()):
    """The `__device__` variable `name` of kernels/<source> as get_arch_specific_function built it (the same
    module), as nbytes of raw GPU memory: a cupy.cuda.MemoryPointer to view as an array."""
    cupy = require_gpu()
    target = arch_specific_target(current_arch())
    module = _arch_specific_module(source, tuple(defines), target, source_versions(source))
    try:
        found = module.get_global_var(name)
    except Exception as exc:
        raise KernelCompileError(f"kernels/{source} built for {target} has no __device__ variable {name!r} "
                                 f"({exc})") from exc
    ptr = found[0] if isinstance(found, tuple) else getattr(found, "ptr", found)
    return cupy.cuda.MemoryPointer(cupy.cuda.UnownedMemory(int(ptr), nbytes, module), 0)


@lru_cache(maxsize=None)
def _arch_specific_function(source: str, entry: str, defines: tuple, target: str, versions: tuple):
    return LoadedKernel(_entry(_arch_specific_module(source, defines, target, versions), f"kernels/{source}", entry,
                               f" for {target}"))


class LoadedKernel:
    """A kernel from a cubin loaded here (a cupy.cuda.function.Function), with the attributes of a
    cupy.RawKernel that tcgemm reads and sets."""

    # CUfunction_attribute values (cuda.h)
    SHARED_SIZE_BYTES, LOCAL_SIZE_BYTES, NUM_REGS, MAX_DYNAMIC_SHARED_SIZE_BYTES = 1, 3, 4, 8

    def __init__(self, function):
        self.kernel = function

    def _attribute(self, attribute: int) -> int:
        return require_gpu().cuda.driver.funcGetAttribute(attribute, self.kernel.ptr)

    @property
    def num_regs(self) -> int:
        return self._attribute(self.NUM_REGS)

    @property
    def shared_size_bytes(self) -> int:
        return self._attribute(self.SHARED_SIZE_BYTES)

    @property
    def local_size_bytes(self) -> int:
        return self._attribute(self.LOCAL_SIZE_BYTES)

    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        return self._attribute(self.MAX_DYNAMIC_SHARED_SIZE_BYTES)

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, nbytes: int) -> None:
        require_gpu().cuda.driver.funcSetAttribute(self.kernel.ptr, self.MAX_DYNAMIC_SHARED_SIZE_BYTES, nbytes)

    def __call__(self, grid, block, args, shared_mem: int = 0) -> None:
        self.kernel(grid, block, args, shared_mem=shared_mem)
