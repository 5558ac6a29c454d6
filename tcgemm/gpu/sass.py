"""A catalog kernel's SASS as NVRTC compiles it for a target architecture, and its hot loop.
Needs NVRTC and cuobjdump, not a GPU."""
from __future__ import annotations

from typing import Callable

from tcgemm import sass_loop
from tcgemm.catalog import configured
from tcgemm.gpu.nvrtc_offline import (REQUIREMENTS, compile_cubin, compile_source_text, cuda_tool, cuobjdump_sass,
                                      find_toolkit)
from tcgemm.source import kernel_text, strided_copy_loops
from tcgemm.table import Table


def sass_tools_missing() -> str | None:
    """Why this machine cannot read the kernels' SASS (no NVRTC with its headers, or no cuobjdump), in
    one line; None when it can."""
    if all(find_toolkit(major) is None for major in REQUIREMENTS):
        return f"No SASS here: no NVRTC with its CUDA headers (pip install -r {REQUIREMENTS[13]})"
    if cuda_tool("cuobjdump") is None:
        return "No SASS here: no cuobjdump (pip install -r requirements-sass.txt)"
    return None


def kernel_sass(key: str, arch: str, rewrite: Callable[[str], str] | None = None) -> str:
    """`cuobjdump -sass` of kernel `key` compiled for `arch`, configured as its launcher does there.
    `rewrite`, if given, edits the source text first (to read a variant without a second file)."""
    spec = configured(key, arch)
    if rewrite is None:
        cubin = compile_cubin(spec.source, arch, spec.defines)
    else:
        cubin = compile_source_text(rewrite(kernel_text(key)), spec.source, arch, spec.defines)
    return cuobjdump_sass(cubin)


def kernel_hot_loop(key: str, arch: str, opcode: str = "FFMA",
                    rewrite: Callable[[str], str] | None = None) -> list[sass_loop.Instruction]:
    """The loop of kernel `key` on `arch` with the most `opcode` instructions (sass_loop.hot_loop)."""
    return sass_loop.hot_loop(kernel_sass(key, arch, rewrite), configured(key, arch).entry, opcode)


def copy_loop_table(key: str, archs=("sm_80", "sm_90")) -> Table:
    """Kernel 1.0 or 1.1 as written and with its copy loops in the strided form (source.strided_copy_loops):
    per target, the global loads (LDG) its main loop issues before the first shared store (STS), and
    the branches before the first barrier (the copy loops that stayed loops)."""
    spec = configured(key)
    per_step = (spec.tile_m + spec.tile_n) * spec.tile_k // spec.threads   # one fp16 element per load
    forms = {"as written, a fixed trip count": None, "strided, for (i = tid; ...)": strided_copy_loops}
    rows = []
    for form, rewrite in forms.items():
        for arch in archs:
            body = kernel_hot_loop(key, arch, "HMMA", rewrite)
            rows.append([form, arch, per_step, sass_loop.count_before(body, "LDG", "STS"),
                         sass_loop.count_before(body, "BRA", "BAR")])
    return Table(["Copy loops", "Target", "Loads per thread and step", "LDG before the first STS",
                  "Branches before the barrier"], rows, caption=f"{spec.title}: the main loop's SASS (NVRTC)")
