"""Show kernel sources in the book: a whole kernel, a PTX wrapper, or the diff of two kernels. Pure module.

Listings come back as `Listing` objects: collapsed under a one-line summary in notebooks and in the
book (click to open), the plain text in a terminal."""
from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass

from tcgemm import KERNEL_DIR
from tcgemm.catalog import GEMM_KERNELS

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
        return f"{self.title}, {self.lines} lines (click to show)"

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(self.text)

    def _repr_html_(self) -> str:
        return (f'<details class="tcgemm-listing"><summary style="cursor:pointer">{html.escape(self.summary)}'
                f'</summary><pre style="overflow-x:auto;max-width:100%">{html.escape(self.text)}</pre></details>')


def kernel_text(key: str) -> str:
    return (KERNEL_DIR / GEMM_KERNELS[key].source).read_text()


def wrapper_text(name: str, header: str = HEADER) -> str:
    """The definition of the device function `name` in kernels/<header> (with its `template` line,
    if any), up to its closing brace."""
    text = (KERNEL_DIR / header).read_text()
    match = re.search(rf"^(?:{TEMPLATE})?[^\n]*\b{re.escape(name)}\s*\(", text, flags=re.M)
    if not match:
        raise KeyError(f"no function {name!r} in kernels/{header}")
    depth, i = 0, text.index("{", match.end())
    while True:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            return text[match.start():i]


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


def show_kernel(key: str, with_wrappers: bool = True) -> Listing:
    """The kernel's source file and, with_wrappers, the header's functions it calls."""
    path = f"kernels/{GEMM_KERNELS[key].source}"
    parts = [f"// ---- {path}", kernel_text(key).rstrip()]
    used = wrappers_used(key) if with_wrappers else []
    for name in used:
        parts += [f"\n// ---- from kernels/{HEADER}", wrapper_text(name)]
    title = path + (f" and {len(used)} functions of kernels/{HEADER}" if used else "")
    return Listing(title, "\n".join(parts))


def diff_kernels(old: str, new: str) -> Listing:
    """The unified diff of two kernels' sources, one line of context."""
    a, b = f"kernels/{GEMM_KERNELS[old].source}", f"kernels/{GEMM_KERNELS[new].source}"
    lines = list(difflib.unified_diff(kernel_text(old).splitlines(), kernel_text(new).splitlines(),
                                      fromfile=a, tofile=b, lineterm="", n=1))
    added = sum(line.startswith("+") and not line.startswith("+++") for line in lines)
    removed = sum(line.startswith("-") and not line.startswith("---") for line in lines)
    return Listing(f"diff {a} → {b}: {added} lines added, {removed} removed", "\n".join(lines))
