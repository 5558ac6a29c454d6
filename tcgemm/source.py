"""Show kernel sources in the book: a whole kernel, a PTX wrapper, or the diff of two kernels. Pure module."""
from __future__ import annotations

import difflib
import re

from tcgemm import KERNEL_DIR
from tcgemm.catalog import GEMM_KERNELS

HEADER = "ptx.cuh"


def kernel_text(key: str) -> str:
    return (KERNEL_DIR / GEMM_KERNELS[key].source).read_text()


def wrapper_text(name: str, header: str = HEADER) -> str:
    """The definition of the device function `name` in kernels/<header>, up to its closing brace."""
    text = (KERNEL_DIR / header).read_text()
    match = re.search(rf"^[^\n]*\b{re.escape(name)}\s*\(", text, flags=re.M)
    if not match:
        raise KeyError(f"no function {name!r} in kernels/{header}")
    depth, i = 0, text.index("{", match.end())
    while True:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            return text[match.start():i]


def wrappers_used(key: str) -> list[str]:
    """The functions of the shared header that a kernel calls, in header order."""
    header = (KERNEL_DIR / HEADER).read_text()
    names = re.findall(r"__device__\s+__forceinline__\s+\w+\s+(\w+)\s*\(", header)
    body = kernel_text(key)
    return [n for n in names if re.search(rf"\b{n}\s*\(", body)]


def show_kernel(key: str, with_wrappers: bool = True) -> None:
    print(f"// ---- kernels/{GEMM_KERNELS[key].source}")
    print(kernel_text(key).rstrip())
    if with_wrappers:
        for name in wrappers_used(key):
            print(f"\n// ---- from kernels/{HEADER}")
            print(wrapper_text(name))


def diff_kernels(old: str, new: str) -> None:
    a, b = GEMM_KERNELS[old].source, GEMM_KERNELS[new].source
    lines = difflib.unified_diff(kernel_text(old).splitlines(), kernel_text(new).splitlines(),
                                 fromfile=f"kernels/{a}", tofile=f"kernels/{b}", lineterm="", n=1)
    print("\n".join(lines))
