"""The bank-conflict explorer's cases: one settings dict -> one warp access, built with tcgemm.smem.banks.

The explorer widget computes the same thing in JavaScript (tcgemm/widgets/banks.js), so that it
also works in the built HTML book with no Python behind it; tests/test_bank_explorer_js.py runs
both on the same settings and requires identical counts. Pure module.

Settings (all optional; DEFAULTS fills the rest):
  access      a key of ACCESSES
  layout      a key of LAYOUTS
  elem_bytes  1, 2 or 4: the element type of the tile
  row_elems   elements per tile row
  pad_bytes   for "padded": bytes of padding after every row
  B, M, S, unit   for "swizzle": CuTe's Swizzle<B,M,S> on "element" or "byte" offsets
  expr        for "custom": the byte offset of element (row, col) as an integer expression in
              row, col, elem_bytes, row_elems, row_bytes with + - * % ^ & | << >> and parentheses
"""
from __future__ import annotations

import re

import numpy as np

from tcgemm.smem import banks
from tcgemm.source import copies_with_cp_async

# The presets come from the kernels: Kernel 2.0's tiles are 32 fp16 wide (BK = 32).
ACCESSES = {
    "ldmatrix-x4-A": "ldmatrix.x4 of a 16x16 A tile (Kernel 2.0)",
    "ldmatrix-x2-B": "ldmatrix.x2 of an 8x16 B tile (Kernel 2.0)",
    "store-16": f"16-byte stores ({'cp.async' if copies_with_cp_async('k2.0') else 'STS.128'}): "
                "lane t to row t/4, chunk t%4",
    "strided-4": "4 bytes per lane, lane i at the start of row i",
    "strided-8": "8 bytes per lane, lane i at the start of row i",
    "strided-16": "16 bytes per lane, lane i at the start of row i",
    "contiguous-4": "4 bytes per lane, lanes side by side along the rows",
    "contiguous-8": "8 bytes per lane, lanes side by side along the rows",
    "contiguous-16": "16 bytes per lane, lanes side by side along the rows",
}
LAYOUTS = {
    "row-major": "row-major",
    "padded": "row-major + padding",
    "xor": "XOR-permuted (Kernel 2.0)",
    "swizzle": "Swizzle<B,M,S>",
    "custom": "custom expression",
}
DEFAULTS = {
    "access": "ldmatrix-x4-A", "layout": "row-major", "elem_bytes": 2, "row_elems": 32,
    "pad_bytes": 16, "B": 2, "M": 3, "S": 3, "unit": "element",
    # Kernel 2.0's permutation written on address bits: bits 4-5 ^= bits 7-8 of row * 64 + col * 2.
    "expr": "row * row_bytes + ((col * elem_bytes) ^ (((row >> 1) % 4) << 4))",
}
ELEM_BYTES = (1, 2, 4)
EXPR_NAMES = ("row", "col", "elem_bytes", "row_elems", "row_bytes")
_EXPR_CHARS = re.compile(r"^[\sA-Za-z_0-9+\-*%^&|<>()]*$")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def settings(**overrides) -> dict:
    unknown = set(overrides) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown explorer settings {sorted(unknown)}; known: {sorted(DEFAULTS)}")
    return {**DEFAULTS, **overrides}


def check_expr(expr: str) -> str:
    """The custom-layout expression, refused unless it is plain integer arithmetic on EXPR_NAMES."""
    if not isinstance(expr, str) or not expr.strip():
        raise ValueError("the custom layout needs an expression, e.g. row * row_bytes + col * elem_bytes")
    if not _EXPR_CHARS.match(expr) or "**" in expr or re.search(r"[<>]", expr.replace("<<", "").replace(">>", "")):
        raise ValueError("the expression may use only names, integers, + - * % ^ & | << >> and parentheses")
    for name in _IDENTIFIER.findall(expr):
        if name not in EXPR_NAMES:
            raise ValueError(f"unknown name {name!r} in the expression; use {', '.join(EXPR_NAMES)}")
    return expr


def _custom_layout(expr: str, elem_bytes: int, row_elems: int) -> banks.Layout:
    try:
        code = compile(check_expr(expr), "<layout expression>", "eval")
    except SyntaxError as error:
        raise ValueError(f"the expression does not parse: {error.msg}") from None
    row_bytes = row_elems * elem_bytes

    def offset(row, col):
        value = eval(code, {"__builtins__": {}},  # noqa: S307 - checked: integer arithmetic only
                     {"row": row, "col": col, "elem_bytes": elem_bytes, "row_elems": row_elems, "row_bytes": row_bytes})
        return np.broadcast_to(np.asarray(value, dtype=np.int64), np.broadcast(row, col).shape)

    return banks.custom(offset, f"custom: {expr}", elem_bytes, row_elems)


def build_layout(s: dict) -> banks.Layout:
    eb, re_ = s["elem_bytes"], s["row_elems"]
    if eb not in ELEM_BYTES:
        raise ValueError(f"element width must be one of {ELEM_BYTES} bytes, got {eb!r}")
    if not isinstance(re_, int) or re_ < 1:
        raise ValueError(f"row length must be a positive number of elements, got {re_!r}")
    kind = s["layout"]
    if kind == "row-major":
        return banks.row_major(re_, eb)
    if kind == "padded":
        return banks.padded(re_, eb, s["pad_bytes"])
    if kind == "xor":
        row_bytes = re_ * eb
        chunks = row_bytes // 16
        if row_bytes % 16 or chunks not in (1, 2, 4, 8):
            raise ValueError(f"the XOR layout needs rows of 16, 32, 64 or 128 bytes, got {row_bytes}")
        return banks.xor_permuted(tile_chunks=chunks, elem_bytes=eb)
    if kind == "swizzle":
        return banks.swizzle_layout(s["B"], s["M"], s["S"], re_, eb, s["unit"])
    if kind == "custom":
        return _custom_layout(s["expr"], eb, re_)
    raise ValueError(f"unknown layout {kind!r}; choose one of {list(LAYOUTS)}")


def _width(access: str) -> int:
    return int(access.rsplit("-", 1)[1])


def _lane_coordinates(access: str, eb: int, re_: int):
    """(rows, cols, width in bytes) of the lanes of ``access``; the ldmatrix ones are 16-byte rows."""
    lane = np.arange(banks.WARP)
    chunk = 16 // eb
    if access == "ldmatrix-x4-A":  # lanes 0-15: rows 0-15 at chunk 0; lanes 16-31: at chunk 1
        return lane % 16, (lane // 16) * chunk, 16
    if access == "ldmatrix-x2-B":  # lanes 0-7: rows 0-7 at chunk 0; lanes 8-15: at chunk 1
        lane = lane[:16]
        return lane % 8, (lane // 8) * chunk, 16
    if access == "store-16":       # thread t copies chunk t % 4 of tile row t / 4
        return lane // 4, (lane % 4) * chunk, 16
    if access.startswith("strided-"):
        return lane, np.zeros_like(lane), _width(access)
    if access.startswith("contiguous-"):
        width = _width(access)
        first = lane * max(1, width // eb)
        return first // re_, first % re_, width
    raise ValueError(f"unknown access {access!r}; choose one of {list(ACCESSES)}")


def build_access(s: dict) -> banks.Access:
    layout = build_layout(s)
    access, eb, re_ = s["access"], s["elem_bytes"], s["row_elems"]
    rows, cols, width = _lane_coordinates(access, eb, re_)
    end = int(np.max(cols)) + max(1, width // eb)
    if end > re_:
        raise ValueError(f"{access} reaches column {end - 1}, past the end of a row of {re_} elements")
    if access.startswith("ldmatrix"):
        return banks.ldmatrix_access(layout, rows, cols)
    return banks.layout_access(layout, rows, cols, width, "st" if access == "store-16" else "ld")


def analyze(s: dict | None = None, **overrides) -> banks.Report:
    """The bank report of the explorer's case for these settings."""
    return banks.analyze(build_access(settings(**{**(s or {}), **overrides})))
