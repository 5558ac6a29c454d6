"""The kernel workbench on this machine (tcgemm.practice.workbench says what it is): compile the cell, read its
SASS, and where a GPU is usable check it and time it beside the book's kernel and cuBLAS.

The cell's source takes the place of the book kernel's file in that kernel's catalog entry (GemmKernel.text),
so it is launched, checked and timed through the engine's own paths: tcgemm.engine.gpu.gemm.prepare launches
it, its operands, poisoned output, reference and comparison are tcgemm.engine.gpu.gemm's, and
tcgemm.engine.gpu.bench.runners_in_rounds times it. With a GPU, the SASS summed up is that of the very cubin
launched (tcgemm.engine.gpu.compile.text_cubin); without one the cell is compiled for the target asked.

`python -m tcgemm.practice.gpu.workbench FILE like=k3.1 size=256 [--bare]` checks the source in FILE once
at that size (no timing): what tests/gpu/test_workbench.py runs under compute-sanitizer, with --bare C in an
allocation of its own (CuPy's memory pool off) and no guard, so that memcheck (with --padding) sees a write past it.
"""
from __future__ import annotations

import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np

from tcgemm.arch import arch_specific_target
from tcgemm.engine.catalog import GEMM_KERNELS, configured
from tcgemm.engine.gpu import device
from tcgemm.engine.gpu.bench import GROUPS, Runner, group_of, runner, runners_in_rounds, why_not
from tcgemm.engine.gpu.compile import current_arch, text_cubin, text_target
from tcgemm.engine.gpu.gemm import check_output, for_this_gpu, poisoned, prepare, random_operands, reference
from tcgemm.engine.gpu.nvrtc_offline import compile_source_text, cuobjdump_res_usage, cuobjdump_sass
from tcgemm.engine.gpu.sass import sass_tools_missing
from tcgemm.engine.kernel_types import GemmKernel
from tcgemm.engine.report import size_label
from tcgemm.errors import KernelCompileError
from tcgemm.pipelines.occupancy import parse_res_usage
from tcgemm.practice.workbench import (YOURS, Options, SassSummary, WorkbenchError, WorkbenchResult, check_shapes,
                                       compile_failure, parse_line, results_table, sass_summary, stray_writes)

GUARD_ROWS = 2           # rows of C (GUARD_MIN elements at least) in each guard region, before and after C,
GUARD_MIN = 4096         # rounded up to GUARD_ALIGN elements, so that C starts where its allocation would
GUARD_ALIGN = 256


def run(line: str, text: str, line_offset: int = 0) -> WorkbenchResult:
    """The workbench on CUDA source `text` with the options of a `%%kernel` line (tcgemm.practice.workbench.
    parse_line); `line_offset`: the cell's lines above the text (the magic's own line: 1). WorkbenchError
    where it cannot go on: a compile error, no entry point, a write outside C, a wrong result."""
    options = parse_line(line)
    not_run = _not_run(options)
    spec, target = _spec(options, text, not_run)
    cubin = _compiled(spec, target, on_gpu=not not_run, line_offset=line_offset)
    sass, no_sass = _summary(cubin, spec, target)
    if not_run:
        return WorkbenchResult(sass, no_sass, not_run=not_run)
    checked = check(spec, check_shapes(spec, options.size))
    return WorkbenchResult(sass, no_sass, checked, time_beside(spec, options))


def _not_run(options: Options) -> str:
    """The line that says why the cell is not checked and timed here; "" where it is."""
    reason = device.gpu_unavailable_reason()
    if reason is not None:
        return f"Checking and timing need a GPU: {reason}."
    arch = current_arch()
    if reason := options.spec.unsupported(arch):
        return f"Not checked or timed: {reason}."
    if options.arch not in (None, arch):
        return f"Not checked or timed: compiled for arch={options.arch}, and this GPU is {arch}."
    return ""


def _spec(options: Options, text: str, not_run: str) -> tuple[GemmKernel, str]:
    """The catalog entry the cell stands in for, configured as its launcher configures it (on this GPU, or
    offline for the target asked), with the cell as its source; and the target its cubin is built for."""
    if not_run:
        spec = configured(options.like, options.offline_arch)
        target = arch_specific_target(options.offline_arch) if spec.arch_specific else options.offline_arch
    else:
        spec = for_this_gpu(options.spec)
        target = text_target(spec.arch_specific)
    return replace(spec, text=text, title=f"{YOURS} (like {spec.short_title})"), target


def _compiled(spec: GemmKernel, target: str, on_gpu: bool, line_offset: int) -> bytes:
    """The cell's cubin: with a GPU the one its launch loads, else compiled offline by the newest NVRTC."""
    try:
        if on_gpu:
            return text_cubin(spec.text, spec.source, target, spec.defines)
        return compile_source_text(spec.text, spec.source, target, spec.defines)
    except KernelCompileError as exc:
        raise WorkbenchError(compile_failure(str(exc), spec.source, target, line_offset)) from None


def _summary(cubin: bytes, spec: GemmKernel, target: str) -> tuple[SassSummary | None, str]:
    """The SASS summary of the cell's entry point, or the line saying why this machine cannot read SASS.
    WorkbenchError where the cell has no such entry point."""
    if missing := sass_tools_missing():
        return None, f"{missing}."
    resources = parse_res_usage(cuobjdump_res_usage(cubin))
    if spec.entry not in resources:
        raise WorkbenchError(f"The cell has no extern \"C\" __global__ function {spec.entry}, the entry point the "
                             f"workbench launches (as {GEMM_KERNELS[spec.key].short_title} does); it has: "
                             f"{', '.join(resources) or 'none'}.")
    return sass_summary(cuobjdump_sass(cubin), resources[spec.entry], spec, target), ""


class GuardedOutput:
    """A poisoned M x N row-major C (tcgemm.engine.gpu.gemm.poisoned) inside one allocation with a guard region
    before and after it, every bit of which is set (a NaN in fp32, fp16 and bf16; -1 in int32); `stray()` says
    where a launch wrote in them."""

    def __init__(self, M: int, N: int, dtype: str):
        self.M, self.N = M, N
        self.guard = -(-max(GUARD_ROWS * N, GUARD_MIN) // GUARD_ALIGN) * GUARD_ALIGN
        whole = poisoned((2 * self.guard + M * N,), dtype)
        self._bits = whole.view(f"uint{8 * whole.itemsize}")
        self.sentinel = int(np.iinfo(self._bits.dtype).max)
        self._bits[:self.guard].fill(self.sentinel)
        self._bits[-self.guard:].fill(self.sentinel)
        self.C = whole[self.guard:self.guard + M * N].reshape(M, N)

    def stray(self) -> str | None:
        """Where the kernel wrote outside C (tcgemm.practice.workbench.stray_writes); None: nowhere."""
        cupy = device.checked_cupy()
        front, back = cupy.asnumpy(self._bits[:self.guard]), cupy.asnumpy(self._bits[-self.guard:])
        return stray_writes(front, back, self.sentinel, self.M, self.N)


def _cuda_errors() -> tuple[type, ...]:
    """The exceptions CuPy raises for a failed launch or a fault found later (an illegal address)."""
    cupy = device.checked_cupy()
    return cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError


def check(spec: GemmKernel, shapes, guard: bool = True) -> tuple[tuple[int, int, int], ...]:
    """The kernel checked at each (M, N, K) of `shapes` on fresh random operands into a NaN-poisoned C, guarded
    (GuardedOutput) unless `guard` is False: the shapes, all passed; else WorkbenchError saying where it wrote
    outside C, or how its result is wrong, or that it faulted."""
    for M, N, K in shapes:
        size = size_label(M, N, K)
        if reason := why_not(spec, M, N, K):
            raise WorkbenchError(f"{spec.title} cannot run {size}: {reason}")
        A, B = random_operands(M, N, K, dtype=spec.in_dtype)
        out = GuardedOutput(M, N, spec.out_dtype) if guard else None
        C = out.C if guard else poisoned((M, N), spec.out_dtype)
        try:
            prepare(spec, A, B, C)()
            ref = reference(A, B)
            stray = out.stray() if guard else None
        except _cuda_errors() as exc:
            raise WorkbenchError(f"{spec.title} faulted at {size}: {exc}. The GPU's context is lost: restart the "
                                 "notebook's kernel.") from None
        if stray:
            raise WorkbenchError(f"{spec.title} is refused: at {size} it wrote outside C, {stray}.")
        if not (found := check_output(C, ref, K, spec.accumulator)).passed:
            raise WorkbenchError(f"{spec.title} is wrong at {size}: {found}")
    return tuple(tuple(s) for s in shapes)


def time_beside(spec: GemmKernel, options: Options):
    """The cell's kernel, the book kernel of options.against and their cuBLAS baseline, timed in interleaved
    rounds at options.size (each checked once more first): tcgemm.practice.workbench.results_table."""
    M, N, K = options.size
    book, baseline = runner(options.against), runner(GROUPS[group_of(options.against)].baseline)
    if reason := why_not(book.spec, M, N, K):
        raise WorkbenchError(f"against={options.against} cannot run {size_label(M, N, K)}: {reason}")
    yours = Runner(YOURS, spec.out_dtype, partial(prepare, spec), spec, spec.in_dtype, spec.accumulator)
    times = runners_in_rounds([baseline, book, yours], M, N, K, options.rounds)
    return results_table(times, book.name, baseline.name, M, N, K, book.spec.short_title)


def main(argv: list[str]) -> int:
    """FILE [options of a %%kernel line] [--bare]: the source in FILE checked once at size= (see the module's
    docstring); exit status 1 with the workbench's message where it is refused or wrong."""
    bare = "--bare" in argv
    path, *words = [a for a in argv if a != "--bare"]
    options = parse_line(" ".join(words))
    cupy = device.require_gpu()
    if bare:
        cupy.cuda.set_allocator(None)   # each array its own cudaMalloc, so that memcheck knows where C ends
    spec, _ = _spec(options, Path(path).read_text(), "")
    try:
        check(spec, [options.size], guard=not bare)
    except WorkbenchError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"{spec.title}: checked at {size_label(*options.size)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
