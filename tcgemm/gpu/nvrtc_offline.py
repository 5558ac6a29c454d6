"""Compile the book's kernels with NVRTC to a cubin, without a GPU or a driver.

This is the compiler CuPy's RawModule runs when the book launches a kernel, called directly, so the
tests can check on any machine that every kernel compiles for every target architecture.
"""
from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from tcgemm import KERNEL_DIR
from tcgemm.errors import KernelCompileError


def cuda_tool(name: str) -> str | None:
    """Path of a CUDA command-line tool (nvcc, cuobjdump, nvdisasm): the pip package's first
    (site-packages/nvidia/cu13/bin), else PATH; None when neither has it."""
    try:
        import nvidia

        for root in nvidia.__path__:
            candidate = Path(root) / "cu13" / "bin" / name
            if candidate.is_file():
                return str(candidate)
    except ImportError:
        pass
    return shutil.which(name)


def cuobjdump_sass(cubin: bytes) -> str:
    """The SASS listing of a cubin, as `cuobjdump -sass` prints it."""
    tool = cuda_tool("cuobjdump")
    if tool is None:
        raise FileNotFoundError("cuobjdump not found (pip install nvidia-cuda-cuobjdump, or put it on PATH)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        return subprocess.run([tool, "-sass", str(path)], check=True, capture_output=True,
                              text=True).stdout


def _has_headers(include: Path) -> bool:
    return (include / "cuda_fp16.h").is_file()


@lru_cache(maxsize=None)
def cuda_include_dir() -> Path:
    """The directory holding cuda_fp16.h: CuPy's CUDA path if it has one, else the pip package."""
    try:
        import cupy

        cuda_path = cupy.cuda.get_cuda_path()
        if cuda_path and _has_headers(Path(cuda_path) / "include"):
            return Path(cuda_path) / "include"
    except Exception:
        pass
    try:
        import nvidia

        for root in nvidia.__path__:
            include = Path(root) / "cu13" / "include"
            if _has_headers(include):
                return include
    except ImportError:
        pass
    raise KernelCompileError(
        "No CUDA headers (cuda_fp16.h) found: neither CuPy's CUDA path nor the pip packages "
        "nvidia-cuda-runtime / nvidia-cuda-nvrtc (site-packages/nvidia/cu13/include) have them. "
        "Install requirements.txt."
    )


def nvrtc_options(arch: str, defines: tuple[tuple[str, int], ...] = ()) -> list[str]:
    """NVRTC options for a real architecture such as 'sm_90' (NVRTC then emits SASS, not only PTX)."""
    if not arch.startswith("sm_"):
        raise ValueError(f"arch must look like 'sm_90', got {arch!r}")
    return [
        f"-arch={arch}",
        "-std=c++17",
        f"-I{KERNEL_DIR}",
        f"-I{cuda_include_dir()}",
        *(f"-D{name}={value}" for name, value in defines),
    ]


def _nvrtc():
    try:
        from cupy_backends.cuda.libs import nvrtc
    except Exception as exc:
        raise KernelCompileError(
            f"NVRTC is not usable here ({type(exc).__name__}: {exc}). "
            "Install cupy-cuda13x and nvidia-cuda-nvrtc (requirements.txt)."
        ) from exc
    return nvrtc


def _whole_elf(cubin: bytes) -> bytes:
    """CuPy's nvrtc.getCUBIN drops the last byte (it strips a NUL terminator that a cubin does not
    have); the driver never notices, cuobjdump does. Pad back to the extent the ELF header gives."""
    if cubin[:4] != b"\x7fELF" or len(cubin) < 64:
        return cubin
    phoff, shoff = struct.unpack_from("<QQ", cubin, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", cubin, 0x36)
    end = max(phoff + phentsize * phnum, shoff + shentsize * shnum)
    return cubin + b"\0" * (end - len(cubin)) if 0 < end - len(cubin) <= 8 else cubin


def compile_source_text(code: str, name: str, arch: str, defines: tuple[tuple[str, int], ...] = ()) -> bytes:
    """Compile CUDA source text to a cubin for `arch`; KernelCompileError carries NVRTC's log."""
    nvrtc = _nvrtc()
    options = nvrtc_options(arch, defines)
    prog = nvrtc.createProgram(code, name, [], [])
    try:
        try:
            nvrtc.compileProgram(prog, options)
        except nvrtc.NVRTCError as exc:
            log = nvrtc.getProgramLog(prog)
            raise KernelCompileError(
                f"NVRTC could not compile {name} for {arch} ({exc}).\n"
                f"Options: {' '.join(options)}\n{log}"
            ) from exc
        return _whole_elf(bytes(nvrtc.getCUBIN(prog)))
    finally:
        nvrtc.destroyProgram(prog)


def compile_cubin(source_name: str, arch: str, defines: tuple[tuple[str, int], ...] = ()) -> bytes:
    """Compile kernels/<source_name> for `arch` (e.g. 'sm_90') and return the cubin."""
    path = KERNEL_DIR / source_name
    if not path.is_file():
        raise KernelCompileError(f"No kernel source {source_name!r} in {KERNEL_DIR}.")
    return compile_source_text(path.read_text(), source_name, arch, defines)
