"""Every kernel compiles with NVRTC, the compiler the book runs, for every target architecture,
without a GPU; a compile error reaches the reader with NVRTC's log.

Needs cupy-cuda13x and nvidia-cuda-nvrtc (requirements.txt). Without them the tests skip, unless
TCGEMM_REQUIRE_NVRTC=1, when they fail. The SASS check also needs cuobjdump.
"""
from __future__ import annotations

import os

import pytest

from tcgemm.catalog import GEMM_KERNELS, PROBES, TARGET_ARCHS, all_sources, defines_for
from tcgemm.errors import KernelCompileError
from tcgemm.gpu.nvrtc_offline import (
    compile_cubin, compile_source_text, cuda_tool, cuobjdump_sass, nvrtc_options,
)

ARCHS = list(TARGET_ARCHS)
CLAIMS = {k.source: k.sass for k in GEMM_KERNELS.values()}
CLAIMS.update({p.source: p.sass for p in PROBES.values()})


@pytest.fixture(scope="module", autouse=True)
def _nvrtc_available():
    try:
        from cupy_backends.cuda.libs import nvrtc

        nvrtc.getVersion()
    except Exception as exc:
        reason = f"NVRTC not usable ({type(exc).__name__}: {exc})"
        if os.environ.get("TCGEMM_REQUIRE_NVRTC") == "1":
            pytest.fail(reason + "; TCGEMM_REQUIRE_NVRTC=1 makes this a failure")
        pytest.skip(reason)


_cubins: dict[tuple[str, str], bytes] = {}


def _cubin(source: str, arch: str) -> bytes:
    if (source, arch) not in _cubins:
        _cubins[source, arch] = compile_cubin(source, arch, defines_for(source, arch))
    return _cubins[source, arch]


def test_options_name_arch_and_headers():
    opts = nvrtc_options("sm_89")
    assert "-arch=sm_89" in opts
    include_dirs = [o[2:] for o in opts if o.startswith("-I")]
    assert any(os.path.isfile(os.path.join(d, "ptx.cuh")) for d in include_dirs)
    assert any(os.path.isfile(os.path.join(d, "cuda_fp16.h")) for d in include_dirs)
    with pytest.raises(ValueError):
        nvrtc_options("compute_90")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("source", all_sources())
def test_compiles(source, arch):
    cubin = _cubin(source, arch)
    assert cubin[:4] == b"\x7fELF", f"{source} for {arch}: NVRTC returned no cubin"


BROKEN = """#include "ptx.cuh"
extern "C" __global__ void broken(float *out) {
    __shared__ float tile[32];
    out[threadIdx.x] = smem_u32(tile);
    out[threadIdx.x] += undeclared_tile[0];
}
"""


def test_compile_error_carries_the_log():
    with pytest.raises(KernelCompileError) as info:
        compile_source_text(BROKEN, "broken.cu", "sm_90")
    message = str(info.value)
    assert 'broken.cu(5): error: identifier "undeclared_tile" is undefined' in message
    assert "broken.cu(4)" not in message, "ptx.cuh was not found on the include path"


def test_missing_source_is_a_compile_error():
    with pytest.raises(KernelCompileError, match="no_such_kernel.cu"):
        compile_cubin("no_such_kernel.cu", "sm_90")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("source", all_sources())
def test_nvrtc_sass_matches_claims(source, arch):
    if cuda_tool("cuobjdump") is None:
        pytest.skip("cuobjdump not found")
    listing = cuobjdump_sass(_cubin(source, arch))
    missing = [s for s in CLAIMS[source] if s not in listing]
    assert not missing, f"{source} on {arch} (NVRTC): claimed {missing} not in the SASS"
