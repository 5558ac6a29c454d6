"""Every kernel compiles with NVRTC, the compiler the book runs, for every target architecture,
without a GPU, with both CUDA sets the book supports: NVRTC 13 (requirements-nvrtc13.txt, in the
venv) and NVRTC 12 (requirements-nvrtc12.txt, which `make test` installs in .venv/nvrtc12). A compile
error reaches the reader with NVRTC's log.

Without an NVRTC the tests of that CUDA major skip, unless TCGEMM_REQUIRE_NVRTC=1 (CI), when they
fail. The SASS check (CUDA 13, whose SASS the book quotes) also needs cuobjdump.
"""
from __future__ import annotations

import os
from dataclasses import replace

import pytest

from tcgemm.engine.catalog import TARGET_ARCHS, all_sources, build_target, defines_for, sass_claims, source_archs
from tcgemm.errors import KernelCompileError
from tcgemm.engine.gpu.nvrtc_offline import (
    WHEEL_LAYOUT, compile_cubin, compile_error_message, compile_source_text, cuda_tool, cuobjdump_sass,
    find_toolkit, missing_header_hint, nvrtc_options, nvrtc_version, toolkit,
)
from required import skip_or_fail

ARCHS = list(TARGET_ARCHS)
MAJORS = sorted(WHEEL_LAYOUT, reverse=True)
CLAIMS = sass_claims()
BUILDS = [(source, arch) for source in all_sources() for arch in source_archs(source)]   # Kernel 5.0: sm_90 only


def _kit(major: int):
    try:
        kit = toolkit(major)
        nvrtc_version(kit)
    except KernelCompileError as exc:
        skip_or_fail("TCGEMM_REQUIRE_NVRTC", str(exc))
    return kit


_cubins: dict[tuple[str, str, int], bytes] = {}


def _cubin(source: str, arch: str, major: int) -> bytes:
    if (source, arch, major) not in _cubins:
        _cubins[source, arch, major] = compile_cubin(source, build_target(source, arch), defines_for(source, arch),
                                                     _kit(major))
    return _cubins[source, arch, major]


@pytest.mark.parametrize("major", MAJORS)
def test_toolkit_is_the_cuda_major_it_claims(major):
    kit = _kit(major)
    assert nvrtc_version(kit)[0] == major
    opts = nvrtc_options("sm_89", kit=kit)
    assert "-arch=sm_89" in opts
    include_dirs = [o[2:] for o in opts if o.startswith("-I")]
    assert any(os.path.isfile(os.path.join(d, "ptx.cuh")) for d in include_dirs)
    assert any(os.path.isfile(os.path.join(d, "cuda_fp16.h")) for d in include_dirs)
    assert all(str(d).startswith(str(kit.library.parents[2])) for d in kit.include), "headers of another CUDA"
    with pytest.raises(ValueError):
        nvrtc_options("compute_90", kit=kit)


def test_default_toolkit_is_the_newest_installed():
    installed = [m for m in MAJORS if find_toolkit(m) is not None]
    if not installed:
        pytest.skip("no NVRTC installed")
    assert toolkit().major == installed[0]


@pytest.mark.slow     # every kernel, twice: minutes in all (`make test-fast` leaves them out)
@pytest.mark.parametrize("major", MAJORS)
@pytest.mark.parametrize("source, arch", BUILDS)
def test_compiles(source, arch, major):
    cubin = _cubin(source, arch, major)
    assert cubin[:4] == b"\x7fELF", f"{source} for {arch}: NVRTC {major} returned no cubin"


BROKEN = """#include "ptx.cuh"
extern "C" __global__ void broken(float *out) {
    __shared__ float tile[32];
    out[threadIdx.x] = smem_u32(tile);
    out[threadIdx.x] += undeclared_tile[0];
}
"""


@pytest.mark.parametrize("major", MAJORS)
def test_compile_error_carries_the_log(major):
    with pytest.raises(KernelCompileError) as info:
        compile_source_text(BROKEN, "broken.cu", "sm_90", kit=_kit(major))
    message = str(info.value)
    assert f"NVRTC {major} could not compile broken.cu for sm_90" in message
    assert 'broken.cu(5): error: identifier "undeclared_tile" is undefined' in message
    assert "broken.cu(4)" not in message, "ptx.cuh was not found on the include path"


def test_missing_source_is_a_compile_error():
    with pytest.raises(KernelCompileError, match="no_such_kernel.cu"):
        compile_cubin("no_such_kernel.cu", "sm_90")


def test_missing_toolkit_says_what_to_install(monkeypatch):
    monkeypatch.setattr("tcgemm.engine.gpu.nvrtc_offline._nvidia_dirs", lambda: [])
    with pytest.raises(KernelCompileError, match=r"CUDA 12 \(pip install -r requirements-nvrtc12.txt\)"):
        toolkit(12)


# NVRTC's log where <mma.h> is found but the crt/mma.h it includes is not (CuPy and the runtime headers
# installed without nvidia-cuda-crt, as on stock images).
NO_CRT_LOG = """site-packages/nvidia/cu13/include/mma.h(55): catastrophic error: cannot open source file "crt/mma.h"
  #include "crt/mma.h"
                      ^

1 catastrophic error detected in the compilation of "w1.0_wmma_hmma.cu".
Compilation terminated.
"""


@pytest.mark.parametrize("major, wheel", [(13, "nvidia-cuda-crt"), (12, "nvidia-cuda-nvcc-cu12")])
def test_a_missing_crt_header_names_the_wheel_to_install(major, wheel):
    what = "NVRTC could not compile kernels/w1.0_wmma_hmma.cu for sm_90."
    message = compile_error_message(what, NO_CRT_LOG, major)
    assert message.startswith(what + "\n") and message.endswith(NO_CRT_LOG)
    hint = message.splitlines()[1]
    assert f"install the wheel {wheel}" in hint and f"requirements-nvrtc{major}.txt" in hint, hint
    assert compile_error_message(what, "x.cu(5): error: identifier \"y\" is undefined", major).count("\n") == 1


def test_the_launcher_names_the_wheel_too(monkeypatch):
    """tcgemm.engine.gpu.compile (CuPy's RawModule) builds its message the same way, from CuPy's exception."""
    import cupy
    from tcgemm.engine.gpu import compile as kernels

    class NoCrt:
        def __init__(self, **_):
            pass

        def compile(self):
            raise cupy.cuda.compiler.CompileException(NO_CRT_LOG, "", "w1.0_wmma_hmma.cu", ())

    try:
        from cupy_backends.cuda.libs import nvrtc
        major = nvrtc.getVersion()[0]
    except Exception as exc:      # no libnvrtc for CuPy: the offline path is checked below
        skip_or_fail("TCGEMM_REQUIRE_NVRTC", f"CuPy cannot load its NVRTC ({exc})")
    _kit(major)
    monkeypatch.setattr(cupy, "RawModule", NoCrt)
    with pytest.raises(KernelCompileError) as info:
        kernels._compile.__wrapped__("w1.0_wmma_hmma.cu", "", "digest", "sm_90")
    wheel = {13: "nvidia-cuda-crt", 12: "nvidia-cuda-nvcc-cu12"}[major]
    assert str(info.value).splitlines()[:2] == [
        "NVRTC could not compile kernels/w1.0_wmma_hmma.cu for sm_90.",
        missing_header_hint(NO_CRT_LOG, major)] and wheel in str(info.value)


def test_nvrtc_without_crt_says_which_wheel_ships_it(tmp_path):
    """The real log of NVRTC 13, given CUDA's headers without crt/: the error names nvidia-cuda-crt."""
    kit = _kit(13)
    for folder in kit.include:
        for entry in folder.iterdir():
            if entry.name != "crt" and not (tmp_path / entry.name).exists():
                (tmp_path / entry.name).symlink_to(entry)
    with pytest.raises(KernelCompileError, match=r'cannot open source file "crt/mma.h"') as info:
        compile_cubin("w1.0_wmma_hmma.cu", "sm_80", kit=replace(kit, include=(tmp_path,)))
    assert "install the wheel nvidia-cuda-crt (pip install -r requirements-nvrtc13.txt" in str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize("source, arch", BUILDS)
def test_nvrtc_sass_matches_claims(source, arch):
    if cuda_tool("cuobjdump") is None:
        pytest.skip("cuobjdump not found")
    listing = cuobjdump_sass(_cubin(source, arch, 13))
    missing = [s for s in CLAIMS[source] if s not in listing]
    assert not missing, f"{source} on {arch} (NVRTC 13): claimed {missing} not in the SASS"
