"""The kernel workbench: a reader's CUDA kernel in a notebook cell, in place of one of the book's. Pure module.

A cell that starts with `%%kernel like=k3.1` (the magic of the book's extension, tcgemm.publish.magic) holds
a CUDA source that stands in for Kernel 3.1: it takes that kernel's entry point, signature, launch geometry,
macros and shape rules from the catalog (tcgemm.engine.catalog), and only the source changes. The
workbench compiles it with NVRTC, sums up its SASS, and where a GPU is usable checks it on fresh random
operands, its C poisoned with NaN and fenced by guard regions it must leave alone, then times it beside
the book's kernel and cuBLAS (tcgemm.practice.gpu.workbench does all that). `start_from("k3.1")` puts
Kernel 3.1's source into a new cell to edit.

Here: the magic's line (`parse_line`), NVRTC's errors at the cell's line numbers (`compile_failure`), the
SASS summary (`sass_summary`), the shapes a kernel is checked at (`check_shapes`), the writes found outside
C (`stray_writes`), and the table of times (`results_table`).
"""
from __future__ import annotations

import html
import re
import statistics
from dataclasses import dataclass

import numpy as np

from tcgemm.arch import TARGET_ARCHS
from tcgemm.engine import sass_loop
from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.engine.kernel_types import GemmKernel
from tcgemm.engine.report import size_label
from tcgemm.engine.rounds import MIN_ROUNDS
from tcgemm.engine.source import kernel_text
from tcgemm.errors import TcgemmError
from tcgemm.hw import tflops
from tcgemm.table import Column, Table

MAGIC = "%%kernel"
DEFAULT_SIZE = (4096, 4096, 4096)
DEFAULT_ARCH = "sm_80"
DEFAULT_ROUNDS = 5
OPTIONS = {
    "like": "the book kernel it stands in for (its entry point, signature, launch and shape rules): like=k3.1",
    "against": "the book kernel it is timed beside (default: the one it is like), of the same types",
    "size": "the problem it is timed on: size=4096 (a cube) or size=4096x4096x2048 (M x N x K)",
    "arch": f"the target compiled for (default: this GPU's; without one {DEFAULT_ARCH}, or the kernel's own); "
            "another than this GPU's is compiled and read, not run",
    "rounds": f"interleaved timing rounds (default {DEFAULT_ROUNDS}, at least {MIN_ROUNDS})",
}
YOURS = "Your kernel"
# A shape of odd M and K for the kernels that take any shape; N a multiple of 4, as a TMA store of fp32 C needs
# (its rows whole 16 bytes): the shape tests/gpu/test_sanitizer.py runs those kernels on.
RAGGED = (129, 260, 75)


class WorkbenchError(TcgemmError):
    """The workbench's answer when a cell cannot go on (a bad line, a compile error, a write outside C, a
    wrong result): its message alone, without a traceback, in a notebook."""

    def _render_traceback_(self):  # IPython shows these lines instead of a traceback
        return str(self).splitlines()


def usage() -> str:
    return f"{MAGIC} " + " ".join(f"{name}=..." for name in OPTIONS) + "\n" + \
        "\n".join(f"  {name}: {what}" for name, what in OPTIONS.items())


@dataclass(frozen=True)
class Options:
    """What the magic's line asks for."""
    like: str
    against: str
    size: tuple[int, int, int] = DEFAULT_SIZE
    arch: str | None = None      # None: DEFAULT_ARCH, or the kernel's first architecture if not that
    rounds: int = DEFAULT_ROUNDS

    @property
    def spec(self) -> GemmKernel:
        return GEMM_KERNELS[self.like]

    @property
    def offline_arch(self) -> str:
        """The architecture compiled for where there is no GPU."""
        archs = self.spec.archs
        return self.arch or (DEFAULT_ARCH if DEFAULT_ARCH in archs else archs[0])


def _kernel_key(option: str, key: str) -> str:
    if key not in GEMM_KERNELS:
        raise WorkbenchError(f"{option}={key}: no such kernel; the kernels are: {', '.join(GEMM_KERNELS)}")
    return key


def _size(text: str) -> tuple[int, int, int]:
    parts = text.lower().split("x")
    if len(parts) not in (1, 3) or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise WorkbenchError(f"size={text}: give one size for a cube (size=4096) or M x N x K (size=4096x4096x2048)")
    return tuple(int(p) for p in parts * (3 // len(parts)))


def _types(spec: GemmKernel) -> tuple[str, str]:
    return spec.in_dtype, spec.out_dtype


def parse_line(line: str) -> Options:
    """The options of a `%%kernel` line, e.g. "like=k3.1 size=2048 rounds=3"; WorkbenchError names what is
    wrong and what would do."""
    found = {}
    for word in line.split():
        name, equals, value = word.partition("=")
        if not equals or not value:
            raise WorkbenchError(f"{word!r}: the options are name=value\n{usage()}")
        if name not in OPTIONS:
            raise WorkbenchError(f"{name}=: no such option\n{usage()}")
        if name in found:
            raise WorkbenchError(f"{name}= given twice")
        found[name] = value
    if "like" not in found:
        raise WorkbenchError(f"say which book kernel the cell stands in for, e.g. {MAGIC} like=k3.1\n{usage()}")
    like = _kernel_key("like", found["like"])
    against = _kernel_key("against", found.get("against", like))
    if _types(GEMM_KERNELS[against]) != _types(GEMM_KERNELS[like]):
        theirs, yours = (GEMM_KERNELS[k] for k in (against, like))
        raise WorkbenchError(f"against={against}: {theirs.short_title} computes {' -> '.join(_types(theirs))}, "
                             f"{yours.short_title} {' -> '.join(_types(yours))}: time it beside a kernel of its types")
    arch = found.get("arch")
    if arch is not None and arch not in GEMM_KERNELS[like].archs:
        raise WorkbenchError(f"arch={arch}: {GEMM_KERNELS[like].title} compiles for "
                             f"{', '.join(a for a in TARGET_ARCHS if a in GEMM_KERNELS[like].archs)}")
    rounds = found.get("rounds", str(DEFAULT_ROUNDS))
    if not rounds.isdigit() or int(rounds) < MIN_ROUNDS:
        raise WorkbenchError(f"rounds={rounds}: a whole number, at least {MIN_ROUNDS} (one round has no spread)")
    size = _size(found["size"]) if "size" in found else DEFAULT_SIZE
    return Options(like, against, size, arch, int(rounds))


def start_from(key: str):
    """Kernel `key`'s source under a `%%kernel like=key` line, to edit: in a notebook, put into a new cell
    below this one (and None returned); elsewhere, returned."""
    text = f"{MAGIC} like={_kernel_key('like', key)}\n{kernel_text(key)}"
    try:
        from IPython import get_ipython
    except ImportError:
        return text
    shell = get_ipython()
    if shell is None:
        return text
    shell.set_next_input(text)
    return None


# ---- compile errors at the cell's lines ---------------------------------------------------------

# A diagnostic of NVRTC's log: `name(12): error: ...`, then the source line and a caret under it.
_DIAGNOSTIC = re.compile(r"^(?P<file>[^\s()]+)\((?P<line>\d+)\): (?P<rest>(?:catastrophic )?error.*)$")


def compile_failure(message: str, name: str, target: str, line_offset: int = 0) -> str:
    """The errors of a failed compile (a KernelCompileError's message, which carries NVRTC's log) of the
    text named `name`: each at its line of the cell, `line_offset` lines below the text's (the magic's own
    line is the cell's line 1), with the source line and caret NVRTC quotes; errors in a header keep their
    file and line. Without any error line, the message as it is."""
    lines, out = message.splitlines(), []
    for i, line in enumerate(lines):
        match = _DIAGNOSTIC.match(line)
        if not match:
            continue
        where = match["file"]
        place = f"cell line {int(match['line']) + line_offset}" if where == name else f"{where} line {match['line']}"
        out.append(f"{place}: {match['rest']}")
        out += [quoted for quoted in lines[i + 1:i + 3] if quoted.strip() and not _DIAGNOSTIC.match(quoted)]
    if not out:
        return message
    return "\n".join([f"The cell does not compile for {target}:", *out])


# ---- the SASS summary ------------------------------------------------------------------------------

COUNTED = ("HMMA", "LDSM", "LDGSTS", "LDS", "STS", "LDG", "STG", "BAR")
# Shown where the kernel has any: wgmma, int8 mma, the SGEMM's FMA, TMA copies, stmatrix.
ALSO = ("HGMMA", "IMMA", "FFMA", "UTMALDG", "UTMASTG", "STSM")
MAIN_OPCODES = ("HGMMA", "HMMA", "IMMA", "FFMA")   # the main loop is the loop with the most of the first found


def opcode_roots(body: list[sass_loop.Instruction], roots) -> dict[str, int]:
    """How many instructions of `body` have each opcode root ("LDS" counts LDS.128, not LDSM)."""
    counts = {root: 0 for root in roots}
    for ins in body:
        root = ins.opcode.split(".")[0]
        if root in counts:
            counts[root] += 1
    return counts


@dataclass(frozen=True)
class SassSummary:
    """What a compiled kernel is made of: its instructions by opcode, in all and in its main loop (one pass,
    None where it has no loop), and the resources one thread and one block take."""
    title: str
    target: str
    registers: int
    local_bytes: int                 # per thread: spills, or an array the compiler could not keep in registers
    static_smem: int                 # per block, bytes
    dynamic_smem: int
    whole: dict[str, int]
    loop: dict[str, int] | None
    lengths: tuple[int, int | None]  # instructions in all, in one pass of the main loop

    @property
    def resources(self) -> str:
        local = f"{self.local_bytes} bytes of local memory per thread (spills?)" if self.local_bytes else \
            "no local memory (no spills)"
        smem = (self.static_smem + self.dynamic_smem) / 1024
        return (f"{self.registers} registers per thread, {local}, {smem:.1f} KB of shared memory per block "
                f"({self.static_smem / 1024:.1f} static + {self.dynamic_smem / 1024:.1f} dynamic)")

    @property
    def table(self) -> Table:
        shown = [op for op in self.whole if op in COUNTED or self.whole[op]]
        rows = [["the whole kernel", self.lengths[0], *(self.whole[op] for op in shown)]]
        if self.loop is not None:
            rows.append(["its main loop, one pass", self.lengths[1], *(self.loop[op] for op in shown)])
        return Table(["SASS", "instructions", *shown], rows,
                     caption=f"{self.title}, compiled for {self.target} by NVRTC: {self.resources}")

    def __str__(self) -> str:
        return str(self.table)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        return self.table._repr_html_()


def sass_summary(listing: str, resources: dict, spec: GemmKernel, target: str) -> SassSummary:
    """The summary of `spec`'s entry in a `cuobjdump -sass` listing, with its resources as
    tcgemm.pipelines.occupancy.parse_res_usage reads them from `cuobjdump -res-usage`."""
    code = sass_loop.instructions(sass_loop.function_listing(listing, spec.entry))
    roots = COUNTED + ALSO
    whole = opcode_roots(code, roots)
    main = next((op for op in MAIN_OPCODES if whole[op]), None)
    bodies = sass_loop.loops(code)
    body = max(bodies, key=lambda b: opcode_roots(b, (main,))[main]) if bodies and main else None
    loop = opcode_roots(body, roots) if body else None
    return SassSummary(spec.title, target, resources["registers"], resources["local"], resources["shared"],
                       spec.smem_bytes, whole, loop, (len(code), len(body) if body else None))


# ---- the check ---------------------------------------------------------------------------------------

def check_shapes(spec: GemmKernel, size: tuple[int, int, int]) -> list[tuple[int, int, int]]:
    """The problems a kernel like `spec` is checked at: a few tiles of each (3 along N, 5 along K), the
    RAGGED shape where it takes any shape, and the size it is timed at."""
    shapes = [(2 * spec.tile_m, 3 * spec.tile_n, 5 * spec.tile_k)] + ([RAGGED] if spec.any_shape else [])
    return list(dict.fromkeys(shapes + [tuple(size)]))


def stray_writes(front: np.ndarray, back: np.ndarray, sentinel: int, M: int, N: int) -> str | None:
    """Where a kernel wrote outside its M x N row-major C, from the guard regions just before and just after
    C (1-D arrays of C's elements as unsigned integers, filled with `sentinel` before the launch); None
    where both still hold it. C's element i is row i // N, column i % N (negative: before C)."""
    before = np.flatnonzero(front != sentinel) - len(front)
    after = np.flatnonzero(back != sentinel) + M * N
    found = []
    for indices, side in ((before[::-1], "before its start"), (after, "past its end")):
        if len(indices):
            first = int(indices[0])
            found.append(f"{len(indices)} element{'s' * (len(indices) > 1)} {side}, the nearest at "
                         f"C[{first // N}][{first % N}] (element {first})")
    return f"{'; '.join(found)}; C is {M} x {N}" if found else None


# ---- the results -------------------------------------------------------------------------------------

def results_table(times: dict[str, list[float]], book: str, cublas: str, M: int, N: int, K: int,
                  book_label: str) -> Table:
    """One row per kernel timed (`times`: its median seconds per round, every kernel in every round): its
    median time over the rounds, its TFLOP/s, and its speed as a share of the book kernel's and of cuBLAS's,
    each the median over the rounds of their time over its time in that round."""
    def share(name: str, of: str) -> float:
        return 100 * statistics.median(b / t for b, t in zip(times[of], times[name]))

    rows = []
    for name, per_round in times.items():
        seconds = statistics.median(per_round)
        rows.append([name, 1e6 * seconds, tflops(M, N, K, seconds), share(name, book), share(name, cublas)])
    rounds = len(times[book])
    return Table([Column("kernel"), Column("µs", ".0f"), Column("TFLOP/s", ".1f"),
                  Column(f"% of {book_label}", ".1f", unit="%"), Column("% of cuBLAS", ".1f", unit="%")], rows,
                 caption=f"C = A @ B at {size_label(M, N, K)}: {rounds} interleaved rounds",
                 notes=("µs: the median over the rounds of each kernel's median time (L2 flushed before each run); "
                        "% of a kernel: its time over this one's, in each round, the median over the rounds.",))


@dataclass(frozen=True)
class WorkbenchResult:
    """What the workbench found: the SASS summary (or why there is none), the problems the kernel passed its
    check at and the table of times (where a GPU is usable), or the line that says why it was neither checked
    nor timed."""
    sass: SassSummary | None
    no_sass: str = ""
    checked: tuple[tuple[int, int, int], ...] = ()
    times: Table | None = None
    not_run: str = ""

    @property
    def check_line(self) -> str:
        if not self.checked:
            return self.not_run
        sizes = ", ".join(size_label(*s) for s in self.checked)
        return f"Checked at {sizes}: PASS (fresh random A and B, C poisoned with NaN, nothing written outside C)"

    def parts(self) -> list:
        """What a notebook shows, in order: tables and lines of text."""
        return [p for p in (self.sass or self.no_sass, self.check_line, self.times) if p]

    def __str__(self) -> str:
        return "\n\n".join(str(p) for p in self.parts())

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        return "".join(p._repr_html_() if hasattr(p, "_repr_html_") else f"<p>{html.escape(p)}</p>"
                       for p in self.parts())
