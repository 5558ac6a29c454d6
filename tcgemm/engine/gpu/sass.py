"""A catalog kernel's SASS as NVRTC compiles it for a target architecture, and its hot loop.
Needs NVRTC and cuobjdump, not a GPU."""
from __future__ import annotations

import re
from collections import Counter
from typing import Callable

from tcgemm.engine import sass_loop
from tcgemm.arch import TARGET_ARCHS
from tcgemm.engine.catalog import configured
from tcgemm.engine.gpu.nvrtc_offline import (REQUIREMENTS, compile_cubin, compile_source_text, cuda_tool, cuobjdump_sass,
                                             find_toolkit)
from tcgemm.engine.source import kernel_text, strided_copy_loops
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


MAIN_LOOP_GROUPS = {"HMMA": "HMMA", "LDSM": "LDSM", "LDGSTS": "LDGSTS", "integer": sass_loop.INTEGER}


def main_loop_table(keys, arch: str = "sm_90") -> Table:
    """Per Tensor Core kernel, its main loop (the loop with the most HMMA) as compiled for `arch`: the
    instructions per K tile, and how many of them are HMMA, LDSM, LDGSTS and integer arithmetic."""
    rows = []
    for key in keys:
        body = kernel_hot_loop(key, arch, "HMMA")
        rows.append([configured(key, arch).title, len(body), *sass_loop.tally(body, MAIN_LOOP_GROUPS).values()])
    return Table(["Main loop", "Instructions per K tile", *MAIN_LOOP_GROUPS], rows,
                 caption=f"Compiled for {arch} by NVRTC")


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


_MMA_OPS = re.compile(r"\b(?:[HIQ]MMA|F2FP)\.[\w.]+")


def function_ops(listing: str, pattern: re.Pattern = _MMA_OPS) -> dict[str, Counter]:
    """Per function of a `cuobjdump -sass` listing, how often each instruction matching `pattern` occurs
    (default: the Tensor Core instructions and the fp8 -> fp16 conversions F2FP)."""
    parts = re.split(r"Function : (\S+)", listing)[1:]
    return {name: Counter(pattern.findall(body)) for name, body in zip(parts[::2], parts[1::2])}


def mma_sass_table(archs=TARGET_ARCHS) -> Table:
    """kernels/probe_mma.cu compiled by NVRTC for each target: per mma variant, the instructions its
    probe entry becomes ("none" where the target has no such mma)."""
    from tcgemm.engine.catalog import PROBES
    from tcgemm.fragment_layouts import MMA_VARIANTS
    from tcgemm.engine.gpu.probes import probe_entry

    ops = {arch: function_ops(cuobjdump_sass(compile_cubin(PROBES["mma"].source, arch))) for arch in archs}
    helpers = set()     # instructions other than the mma itself: by their root name, spelled out in a note

    def name(op: str) -> str:
        if "MMA" in op:
            return op
        helpers.add(op)
        return op.split(".")[0]
    cell = lambda found: ", ".join(f"{n} {name(op)}" if n > 1 else name(op) for op, n in sorted(found.items())) or "none"
    cells = {v: [cell(ops[arch][probe_entry(v)]) for arch in archs] for v in MMA_VARIANTS}
    groups = []     # consecutive targets with the same instructions for every variant share a column
    for i, arch in enumerate(archs):
        if groups and all(cells[v][i] == cells[v][groups[-1][0]] for v in MMA_VARIANTS):
            groups[-1].append(i)
        else:
            groups.append([i])
    label = lambda v: "{} {} -> {}".format(*MMA_VARIANTS[v])    # shape, A/B type, accumulator type
    return Table(["Variant", *(", ".join(archs[i] for i in g) for g in groups)],
                 [[label(v), *(cells[v][g[0]] for g in groups)] for v in MMA_VARIANTS],
                 caption="The SASS of one mma.sync of each variant (kernels/probe_mma.cu, NVRTC)",
                 notes=[f"In full: {', '.join(sorted(helpers))}"] if helpers else [])


# wgmma and the instructions around it: HGMMA (wgmma.mma_async), WARPGROUP.ARRIVE (wgmma.fence),
# WARPGROUP.DEPBAR (wgmma.wait_group) and FENCE.VIEW.ASYNC (fence.proxy.async).
WGMMA_OPS = re.compile(r"\b(?:HGMMA|WARPGROUP|FENCE)\.[\w.]+")


def wgmma_sass_table(archs=("sm_90", "sm_90a")) -> Table:
    """kernels/probe_wgmma.cu compiled by NVRTC for each target: per entry, the wgmma instructions
    and fences it becomes ("none" where the target has no wgmma)."""
    from tcgemm.engine.catalog import PROBES

    probe = PROBES["wgmma"]
    ops = {arch: function_ops(cuobjdump_sass(compile_cubin(probe.source, arch)), WGMMA_OPS) for arch in archs}
    cell = lambda found: ", ".join(sorted(found)) or "none"
    return Table(["Entry", *archs], [[entry, *(cell(ops[arch][entry]) for arch in archs)] for entry in probe.entries],
                 caption="The SASS of the wgmma probe (kernels/probe_wgmma.cu, NVRTC)")
