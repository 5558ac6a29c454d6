"""Compile the book's kernels with NVRTC to a cubin, without a GPU, a driver or CuPy.

NVRTC is the compiler CuPy's RawModule runs when the book launches a kernel. Here its library is
loaded directly (ctypes), so any installed CUDA major can be used side by side: the tests compile
every kernel with NVRTC 12.x and with NVRTC 13.x for every target architecture on any machine.

A toolkit is one CUDA major's libnvrtc plus the headers it compiles against (cuda_fp16.h, and for
CUDA 13 the libcu++ headers that cuda_fp16.h includes), as the pip wheels lay them out:
  CUDA 13: nvidia-cuda-nvrtc, nvidia-cuda-runtime, nvidia-cuda-cccl -> site-packages/nvidia/cu13/
  CUDA 12: nvidia-cuda-nvrtc-cu12, -runtime-cu12, -cccl-cu12 -> site-packages/nvidia/cuda_nvrtc/ ...
They are looked for in the `nvidia` package folders of this Python, then in SIDE_DIR/nvidia, where
`make test` installs the CUDA 12 compile set (pip --target) next to the CUDA 13 one of the venv.
"""
from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tcgemm import KERNEL_DIR
from tcgemm.errors import KernelCompileError

SIDE_DIR = Path(sys.prefix) / "nvrtc12"
"""Where `make test` puts the CUDA 12 compile set (requirements-nvrtc12.txt), apart from the venv's own."""

# CUDA major -> (libnvrtc, include folders), relative to a site-packages/nvidia folder.
WHEEL_LAYOUT = {
    13: ("cu13/lib/libnvrtc.so.13", ("cu13/include",)),
    12: ("cuda_nvrtc/lib/libnvrtc.so.12", ("cuda_runtime/include", "cuda_cccl/include", "cuda_nvcc/include")),
}
REQUIREMENTS = {13: "requirements-nvrtc13.txt", 12: "requirements-nvrtc12.txt"}
# Headers the kernels include that a CUDA set may lack, and the wheel that ships each, per CUDA major:
# WMMA's <mma.h> (kernels/w1.*, probe_wmma.cu) includes crt/mma.h, which neither runtime wheel ships
# (CuPy installed with the runtime headers alone, as on stock images, cannot compile them).
HEADER_WHEELS = {"crt/mma.h": {13: "nvidia-cuda-crt", 12: "nvidia-cuda-nvcc-cu12"}}
_CANNOT_OPEN = re.compile(r'cannot open source file "([^"]+)"')


def _nvidia_dirs() -> list[Path]:
    """The site-packages/nvidia folders of this Python, then the side folder's."""
    dirs = []
    try:
        import nvidia

        dirs += [Path(p) for p in nvidia.__path__]
    except ImportError:
        pass
    return dirs + [SIDE_DIR / "nvidia"]


def cuda_tool(name: str) -> str | None:
    """Path of a CUDA command-line tool (nvcc, cuobjdump, nvdisasm): the pip package's first
    (site-packages/nvidia/cu13/bin), else PATH; None when neither has it. The SASS tools of CUDA 13
    read cubins of any CUDA version and need no driver, so both CUDA sets install them."""
    for root in _nvidia_dirs():
        candidate = root / "cu13" / "bin" / name
        if candidate.is_file():
            return str(candidate)
    return shutil.which(name)


def cuobjdump_sass(cubin: bytes) -> str:
    """The SASS listing of a cubin, as `cuobjdump -sass` prints it."""
    return _cuobjdump(cubin, "-sass")


def cuobjdump_res_usage(cubin: bytes) -> str:
    """Each function's registers, shared, local and constant memory in a cubin, as `cuobjdump -res-usage`
    prints them (tcgemm.pipelines.occupancy.parse_res_usage reads them)."""
    return _cuobjdump(cubin, "-res-usage")


def _cuobjdump(cubin: bytes, option: str) -> str:
    tool = cuda_tool("cuobjdump")
    if tool is None:
        raise FileNotFoundError("cuobjdump not found (pip install nvidia-cuda-cuobjdump, or put it on PATH)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        return subprocess.run([tool, option, str(path)], check=True, capture_output=True,
                              text=True).stdout


@dataclass(frozen=True)
class Toolkit:
    """One CUDA major's NVRTC library and the include folders its compiles need."""
    major: int
    library: Path
    include: tuple[Path, ...]


def find_toolkit(major: int) -> Toolkit | None:
    """The installed NVRTC of CUDA `major` (12 or 13) with its headers, or None."""
    library, includes = WHEEL_LAYOUT[major]
    for root in _nvidia_dirs():
        dirs = tuple(root / d for d in includes)
        headers = (dirs[0] / "cuda_fp16.h").is_file() and all(d.is_dir() for d in dirs)
        if headers and (root / library).is_file():
            return Toolkit(major, root / library, dirs)
    return None


def toolkit(major: int | None = None) -> Toolkit:
    """The toolkit of CUDA `major`, or with None the newest one installed; KernelCompileError if absent."""
    majors = [major] if major is not None else sorted(WHEEL_LAYOUT, reverse=True)
    for m in majors:
        found = find_toolkit(m)
        if found is not None:
            return found
    wanted = " or ".join(f"CUDA {m} (pip install -r {REQUIREMENTS[m]})" for m in majors)
    raise KernelCompileError(
        f"No NVRTC with its CUDA headers found for {wanted}; looked in "
        f"{', '.join(str(d) for d in _nvidia_dirs())}."
    )


def nvrtc_options(arch: str, defines: tuple[tuple[str, int], ...] = (),
                  kit: Toolkit | None = None) -> list[str]:
    """NVRTC options for a real architecture such as 'sm_90' (NVRTC then emits SASS, not only PTX),
    with the include folders of `kit` (default: the newest toolkit installed)."""
    if not arch.startswith("sm_"):
        raise ValueError(f"arch must look like 'sm_90', got {arch!r}")
    kit = kit or toolkit()
    return [
        f"-arch={arch}",
        "-std=c++17",
        f"-I{KERNEL_DIR}",
        *(f"-I{d}" for d in kit.include),
        *(f"-D{name}={value}" for name, value in defines),
    ]


class _Nvrtc:
    """The few NVRTC entry points we call, bound with ctypes from one libnvrtc.so.N."""

    def __init__(self, library: Path):
        # libnvrtc dlopens its builtins library by soname; the wheel's folder is on no search path,
        # so load it first (a loaded soname is found again). There is one per CUDA minor.
        for builtins in library.parent.glob("libnvrtc-builtins.so.*"):
            ctypes.CDLL(str(builtins), mode=ctypes.RTLD_GLOBAL)
        self.lib = ctypes.CDLL(str(library))
        self.lib.nvrtcGetErrorString.restype = ctypes.c_char_p

    def check(self, result: int, what: str):
        if result != 0:
            raise KernelCompileError(f"{what}: {self.lib.nvrtcGetErrorString(result).decode()}")

    def version(self) -> tuple[int, int]:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.check(self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
        return major.value, minor.value

    def _bytes(self, prog, size_fn, get_fn) -> bytes:
        size = ctypes.c_size_t()
        self.check(size_fn(prog, ctypes.byref(size)), size_fn.__name__)
        buf = ctypes.create_string_buffer(size.value)
        self.check(get_fn(prog, buf), get_fn.__name__)
        return buf.raw

    def compile(self, code: str, name: str, options: list[str]) -> tuple[bool, bytes, str]:
        """(compiled?, cubin, log) of one program."""
        lib = self.lib
        prog = ctypes.c_void_p()
        self.check(lib.nvrtcCreateProgram(ctypes.byref(prog), code.encode(), name.encode(), 0, None, None),
                   "nvrtcCreateProgram")
        try:
            argv = (ctypes.c_char_p * len(options))(*(o.encode() for o in options))
            ok = lib.nvrtcCompileProgram(prog, len(options), argv) == 0
            log = self._bytes(prog, lib.nvrtcGetProgramLogSize, lib.nvrtcGetProgramLog)
            cubin = self._bytes(prog, lib.nvrtcGetCUBINSize, lib.nvrtcGetCUBIN) if ok else b""
            return ok, cubin, log.rstrip(b"\0").decode(errors="replace")
        finally:
            lib.nvrtcDestroyProgram(ctypes.byref(prog))


@lru_cache(maxsize=None)
def _nvrtc(library: Path) -> _Nvrtc:
    try:
        return _Nvrtc(library)
    except OSError as exc:
        raise KernelCompileError(f"{library} could not be loaded: {exc}") from exc


def nvrtc_version(kit: Toolkit) -> tuple[int, int]:
    """(major, minor) that the toolkit's libnvrtc reports."""
    return _nvrtc(kit.library).version()


def missing_header_hint(log: str, major: int) -> str:
    """One line per header of HEADER_WHEELS that NVRTC's log says it could not open, naming the wheel
    of CUDA `major` that ships it; "" when the log names none."""
    lines = []
    for header in dict.fromkeys(_CANNOT_OPEN.findall(log)):
        wheel = HEADER_WHEELS.get(header, {}).get(major)
        if wheel:
            lines.append(f"NVRTC {major} found no {header}: install the wheel {wheel} (pip install -r "
                         f"{REQUIREMENTS[major]}, or pip install {wheel} of the same version as NVRTC).")
    return "\n".join(lines)


def compile_error_message(what: str, log: str, major: int) -> str:
    """The message of a failed compile: `what` (NVRTC could not compile which source, for which target),
    the wheel to install where the log says a header is missing (missing_header_hint), then the log."""
    return "\n".join(line for line in (what, missing_header_hint(log, major), log) if line)


def compile_source_text(code: str, name: str, arch: str, defines: tuple[tuple[str, int], ...] = (),
                        kit: Toolkit | None = None) -> bytes:
    """Compile CUDA source text to a cubin for `arch` with `kit` (default: the newest installed);
    KernelCompileError carries NVRTC's log."""
    kit = kit or toolkit()
    options = nvrtc_options(arch, defines, kit)
    ok, cubin, log = _nvrtc(kit.library).compile(code, name, options)
    if not ok:
        raise KernelCompileError(compile_error_message(
            f"NVRTC {kit.major} could not compile {name} for {arch}.\nOptions: {' '.join(options)}", log, kit.major))
    return cubin


def compile_cubin(source_name: str, arch: str, defines: tuple[tuple[str, int], ...] = (),
                  kit: Toolkit | None = None) -> bytes:
    """Compile kernels/<source_name> for `arch` (e.g. 'sm_90') and return the cubin."""
    path = KERNEL_DIR / source_name
    if not path.is_file():
        raise KernelCompileError(f"No kernel source {source_name!r} in {KERNEL_DIR}.")
    return compile_source_text(path.read_text(), source_name, arch, defines, kit)
