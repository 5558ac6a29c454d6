"""A catalog kernel's SASS as NVRTC compiles it for a target architecture, and its hot loop.
Needs NVRTC and cuobjdump, not a GPU."""
from __future__ import annotations

from tcgemm import sass_loop
from tcgemm.catalog import configured
from tcgemm.gpu.nvrtc_offline import compile_cubin, cuobjdump_sass


def kernel_sass(key: str, arch: str) -> str:
    """`cuobjdump -sass` of kernel `key` compiled for `arch`, configured as its launcher does there."""
    spec = configured(key, arch)
    return cuobjdump_sass(compile_cubin(spec.source, arch, spec.defines))


def kernel_hot_loop(key: str, arch: str, opcode: str = "FFMA") -> list[sass_loop.Instruction]:
    """The loop of kernel `key` on `arch` with the most `opcode` instructions (sass_loop.hot_loop)."""
    return sass_loop.hot_loop(kernel_sass(key, arch), configured(key, arch).entry, opcode)
