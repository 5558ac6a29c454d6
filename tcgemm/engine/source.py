"""Show kernel sources in the book: a whole kernel, a PTX wrapper, or the diff of two kernels. Pure module.

Listings come back as `Listing` objects: collapsed under a one-line summary in notebooks and in the
book (click to open, click again to close), the plain text in a terminal."""
from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass

from tcgemm import KERNEL_DIR
from tcgemm.engine.catalog import GEMM_KERNELS, WMMA_KERNELS

HEADER = "ptx.cuh"
TEMPLATE = r"template\s*<[^>]*>\s*"     # a `template <...>` line before a function


@dataclass(frozen=True)
class Listing:
    """A titled block of source (a kernel, a diff, SASS), shown collapsed by default."""
    title: str
    text: str

    @property
    def lines(self) -> int:
        return len(self.text.splitlines())

    @property
    def summary(self) -> str:
        return f"{self.title}, {self.lines} lines"

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(self.text)

    def _repr_html_(self) -> str:
        # The summary says what a click does: "(click to show)", and once open "(click to hide)" (the
        # style; where none applies, as in an untrusted notebook, it keeps saying "click to show").
        # Its bar and frame take the theme's colours in the book (_static/tcgemm.css).
        return (f'<style>{LISTING_STYLE}</style><details class="tcgemm-listing"><summary style="cursor:pointer">'
                f'{html.escape(self.summary)} <span class="tcgemm-listing-action">(click to show)</span></summary>'
                f'<pre style="overflow-x:auto;max-width:100%">{html.escape(self.text)}</pre></details>')


LISTING_STYLE = ('details.tcgemm-listing[open] > summary .tcgemm-listing-action { display: none; } '
                 'details.tcgemm-listing[open] > summary::after { content: "(click to hide)"; }')


def source_of(key: str) -> str:
    """The file in kernels/ of a GEMM or WMMA kernel of tcgemm.engine.catalog."""
    spec = GEMM_KERNELS.get(key) or WMMA_KERNELS.get(key)
    if spec is None:
        raise KeyError(f"unknown kernel {key!r}; the kernels are: {', '.join([*GEMM_KERNELS, *WMMA_KERNELS])}")
    return spec.source


def kernel_text(key: str) -> str:
    return (KERNEL_DIR / source_of(key)).read_text()


def wrapper_text(name: str, header: str = HEADER) -> str:
    """The definition of the device function `name` in kernels/<header> (with its `template` line,
    if any), up to its closing brace."""
    text = (KERNEL_DIR / header).read_text()
    match = re.search(rf"^(?:{TEMPLATE})?[^\n]*\b{re.escape(name)}\s*\(", text, flags=re.M)
    if not match:
        raise KeyError(f"no function {name!r} in kernels/{header}")
    return through_closing_brace(text, match.start(), match.end())


def through_closing_brace(text: str, start: int, after: int) -> str:
    """text[start:] up to the brace that closes the first "{" at or after `after` (a C++ body)."""
    depth, i = 0, text.index("{", after)
    while True:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            return text[start:i]


def wrappers_used(key: str) -> list[str]:
    """The functions of the shared header that a kernel calls (templated ones as `f<...>(`), in
    header order."""
    header = (KERNEL_DIR / HEADER).read_text()
    names = re.findall(r"__device__\s+__forceinline__\s+\w+\s+(\w+)\s*\(", header)
    body = kernel_text(key)
    return [n for n in names if re.search(rf"\b{n}\s*(?:<[^<>()]*>\s*)?\(", body)]


def copies_with_cp_async(key: str) -> bool:
    """Whether the kernel copies global tiles into shared memory with cp.async (the header's
    cp_async_16 wrappers) rather than through registers and st.shared."""
    return any(name.startswith("cp_async_16") for name in wrappers_used(key))


# A copy loop with a trip count the compiler knows (Kernels 1.0 and 1.1): its header and index line.
FIXED_COPY_LOOP = re.compile(r"for \(int r = 0; r < (\w+ \* \w+) / THREADS; \+\+r\) \{\n"
                             r"\s*const int i = tid \+ r \* THREADS;\n")


def strided_copy_loops(text: str) -> str:
    """Kernel source `text` with every fixed-count copy loop, `for (int r = 0; r < BM * BK / THREADS; ++r)`
    with `i = tid + r * THREADS`, written in the strided form `for (int i = tid; i < BM * BK; i += THREADS)`:
    the same copies, but a trip count that depends on tid. For reading the SASS of both forms."""
    out, found = FIXED_COPY_LOOP.subn(r"for (int i = tid; i < \1; i += THREADS) {\n", text)
    if not found:
        raise ValueError("no copy loop `for (int r = 0; r < X * Y / THREADS; ++r)` with "
                         "`const int i = tid + r * THREADS;` in the source")
    return out


def show_kernel(key: str, with_wrappers: bool = True) -> Listing:
    """The kernel's source file and, with_wrappers, the header's functions it calls."""
    path = f"kernels/{source_of(key)}"
    parts = [f"// ---- {path}", kernel_text(key).rstrip()]
    used = wrappers_used(key) if with_wrappers else []
    for name in used:
        parts += [f"\n// ---- from kernels/{HEADER}", wrapper_text(name)]
    title = path + (f" and {len(used)} functions of kernels/{HEADER}" if used else "")
    return Listing(title, "\n".join(parts))


def diff_kernels(old: str, new: str) -> Listing:
    """The unified diff of two kernels' sources, one line of context."""
    a, b = f"kernels/{source_of(old)}", f"kernels/{source_of(new)}"
    lines = list(difflib.unified_diff(kernel_text(old).splitlines(), kernel_text(new).splitlines(),
                                      fromfile=a, tofile=b, lineterm="", n=1))
    added = sum(line.startswith("+") and not line.startswith("+++") for line in lines)
    removed = sum(line.startswith("-") and not line.startswith("---") for line in lines)
    return Listing(f"diff {a} → {b}: {added} lines added, {removed} removed", "\n".join(lines))
