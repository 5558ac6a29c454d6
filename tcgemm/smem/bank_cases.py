"""The bank-conflict explorer's cases: one settings dict -> one warp access, built with tcgemm.smem.banks.

The explorer widget computes the same thing in JavaScript (tcgemm/widgets/banks.js), so that it
also works in the built HTML book with no Python behind it; tests/test_bank_explorer_js.py runs
both on the same settings and requires identical counts, addresses and refusals. Pure module.

Settings (all optional; DEFAULTS fills the rest):
  access      a key of ACCESSES
  layout      a key of LAYOUTS
  elem_bytes  1, 2 or 4: the element type of the tile
  row_elems   elements per tile row (not for "cute": the layout's column mode sets it)
  pad_bytes   for "padded": bytes of padding after every row
  B, M, S     for "swizzle": CuTe's Swizzle<B,M,S>
  unit        for "swizzle" and "cute": the swizzle acts on "element" (CuTe's way) or "byte" offsets
  expr        for "custom": the byte offset of element (row, col) as an integer expression
              (tcgemm.smem.notation.GRAMMAR's ``expr``)
  cute        for "cute": a CuTe layout, strides in elements, with an optional swizzle
              (GRAMMAR's ``cute``), e.g. "Swizzle<2,3,3> o (64,32):(32,1)"
"""
from __future__ import annotations

import math

import numpy as np

from tcgemm import layouts
from tcgemm.canonical import SWIZZLE_MODES, cute_notation
from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.smem import banks, notation
from tcgemm.engine.source import copies_with_cp_async

# The accesses (the explorer's menu; no kernel named: a preset names its own, see describe).
# Kernel 2.0's tiles are 32 fp16 wide (BK = 32).
ACCESSES = {
    "ldmatrix-x4-A": "ldmatrix.x4 of a 16x16 A tile",
    "ldmatrix-x2-B": "ldmatrix.x2 of an 8x16 B tile",
    "ldmatrix-x4-trans-B": "ldmatrix.x4.trans of a 16x16 B tile stored [k][n]",
    "stmatrix-x4": "stmatrix.x4 of a 16x16 C tile (sm_90 and later)",
    "store-16": f"16-byte stores ({'cp.async' if copies_with_cp_async('k2.0') else 'STS.128'}): "
                "lane t to row t/4, chunk t%4",
    "fragment-4": "4-byte mma fragment loads (LDS.32): lane t at row t/4, pair t%4",
    "fragment-8": "8-byte mma C fragment stores (fp32 pairs): lane t at row t/4, pair t%4",
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
    "cute": "CuTe layout",
    "custom": "custom expression",
}
# The settings each layout reads besides access and elem_bytes (the explorer shows only these).
LAYOUT_SETTINGS = {
    "row-major": ("row_elems",), "padded": ("row_elems", "pad_bytes"), "xor": ("row_elems",),
    "swizzle": ("row_elems", "B", "M", "S", "unit"), "cute": ("cute", "unit"), "custom": ("row_elems", "expr"),
}
DEFAULTS = {
    "access": "ldmatrix-x4-A", "layout": "row-major", "elem_bytes": 2, "row_elems": 32,
    "pad_bytes": 16, "B": 2, "M": 3, "S": 3, "unit": "element",
    # Kernel 2.0's permutation written on address bits: bits 4-5 ^= bits 7-8 of row * 64 + col * 2.
    "expr": "row * row_bytes + ((col * elem_bytes) ^ (((row >> 1) % 4) << 4))",
    "cute": "Swizzle<2,3,3> o (64,32):(32,1)",
}
ELEM_BYTES = (1, 2, 4)
MAX_ROW_ELEMS = 1024
MATRIX_ACCESSES = {"ldmatrix-x4-A": "ldmatrix", "ldmatrix-x2-B": "ldmatrix", "ldmatrix-x4-trans-B": "ldmatrix",
                   "stmatrix-x4": "stmatrix"}
STORES = ("store-16", "fragment-8")


def _preset(label: str, kernel: str | None = None, op: str | None = None, source: str | None = None,
            **overrides) -> dict:
    return {"label": label, "kernel": kernel, "op": op, "source": source or kernel,
            "settings": {**DEFAULTS, **overrides}}


# Named cases. ``kernel`` and ``op`` (a tcgemm.smem.kernel_smem op class) name the kernel whose
# every instruction of that class is this access (tests/test_bank_cases.py checks it), so the
# explorer can show Nsight Compute's counts of them beside the model's. ``source`` (``kernel`` where
# given) is the kernel whose instruction and tile the case is, maybe on another layout; the summary
# names it (describe). None: no kernel of the book makes this access.
PRESETS = {
    "k2.0-ldmatrix-A": _preset("Kernel 2.0: ldmatrix.x4 of A, XOR layout", "k2.0", "ldsm", layout="xor"),
    "k2.0-ldmatrix-B": _preset("Kernel 2.0: ldmatrix.x2 of B, XOR layout", "k2.0", "ldsm",
                               access="ldmatrix-x2-B", layout="xor"),
    "k2.0-store": _preset("Kernel 2.0: 16-byte stores, XOR layout", "k2.0", "st", access="store-16", layout="xor"),
    "k1.1-fragment": _preset("Kernel 1.1: fragment loads (LDS.32), 32-byte rows", "k1.1", "ld",
                             access="fragment-4", row_elems=16),
    "row-major-ldmatrix": _preset("ldmatrix.x4 of A without the XOR: 4-way", source="k2.0"),
    "padded-ldmatrix": _preset("ldmatrix.x4 of A, rows padded by 16 bytes", source="k2.0", layout="padded"),
    "cute-k2.0": _preset("Kernel 2.0's tile in CuTe notation", source="k2.0", layout="cute"),
    "ldmatrix-trans": _preset("ldmatrix.x4.trans of B [k][n], 128-byte rows, Swizzle<3,3,3>",
                              access="ldmatrix-x4-trans-B", layout="swizzle", row_elems=64, B=3, M=3, S=3),
    "stmatrix": _preset("stmatrix.x4 of C in fp16, 128-byte rows, Swizzle<3,3,3>",
                        access="stmatrix-x4", layout="swizzle", row_elems=64, B=3, M=3, S=3),
    "fragment-8-row-major": _preset("8-byte C fragment stores, fp32 row-major: 4-way",
                                    access="fragment-8", elem_bytes=4),
    "fragment-8-padded": _preset("8-byte C fragment stores, fp32 rows padded by 32 bytes",
                                 access="fragment-8", elem_bytes=4, layout="padded", pad_bytes=32),
    # The swizzle modes of TMA and wgmma (tcgemm.canonical), one tile row per atom row.
    **{f"tma-{m.width}B": _preset(f"TMA / wgmma {m.width}-byte swizzle ({m.swizzle.name} on bytes), ldmatrix.x4",
                                  layout="swizzle", row_elems=m.width // DEFAULTS["elem_bytes"], B=m.swizzle.bits,
                                  M=m.swizzle.base, S=m.swizzle.shift, unit="byte")
       for m in SWIZZLE_MODES.values() if m.name != "none"},
    # One wgmma's K slice of A (16 rows of 16 fp16) in each canonical layout, as the PTX ISA writes it.
    **{f"wgmma-{m.name}": _preset(f"wgmma's canonical K-major layout, {m.name} swizzle, in CuTe notation",
                                  layout="cute", cute=cute_notation(m.name, 16, 16), unit="byte")
       for m in SWIZZLE_MODES.values()},
}
# Nsight Compute counters (tcgemm.engine.gpu.ncu.METRICS keys) of each op class: the instruction count first.
MEASURED_COUNTERS = {
    "ld": ("smem_ld_inst", "smem_ld_wavefronts", "smem_ld_conflicts"),
    "st": ("smem_st_inst", "smem_st_wavefronts", "smem_st_conflicts", "smem_st_conflicts_sass"),
    "ldsm": ("smem_ldsm_inst_sass", "smem_ldsm_wavefronts", "smem_ldsm_conflicts", "smem_ldsm_conflicts_sass"),
}


def settings(**overrides) -> dict:
    unknown = set(overrides) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown explorer settings {sorted(unknown)}; known: {sorted(DEFAULTS)}")
    return {**DEFAULTS, **overrides}


def _elementwise(name: str, offset_at, elem_bytes: int, row_elems: int) -> layouts.Layout:
    """A layout computed element by element, in lane order, with Python integers (as banks.js does)."""
    def offset(rows, cols):
        rows, cols = np.broadcast_arrays(rows, cols)
        values = [offset_at(int(r), int(c)) for r, c in zip(rows.ravel(), cols.ravel())]
        return np.array(values, dtype=np.int64).reshape(rows.shape)

    return layouts.custom(offset, name, elem_bytes, row_elems)


def _custom_layout(expr: str, elem_bytes: int, row_elems: int) -> layouts.Layout:
    tree = notation.parse_expr(expr)
    names = {"elem_bytes": elem_bytes, "row_elems": row_elems, "row_bytes": row_elems * elem_bytes}

    def offset_at(row: int, col: int) -> int:
        return layouts.check_offset(notation.evaluate(tree, {**names, "row": row, "col": col}), row, col)

    return _elementwise(f"custom: {expr}", offset_at, elem_bytes, row_elems)


def _cute_layout(text: str, elem_bytes: int, unit: str) -> layouts.Layout:
    cute = notation.parse_cute(text)
    if not 1 <= cute.cols <= MAX_ROW_ELEMS:
        raise ValueError(f"the layout's column mode must hold 1..{MAX_ROW_ELEMS} elements, got {cute.cols}")
    swizzle = layouts.Swizzle(*cute.swizzle) if cute.swizzle else (lambda offset: offset)
    before, after = (1, elem_bytes) if unit == "element" else (elem_bytes, 1)  # bytes per unit, each side

    def offset_at(row: int, col: int) -> int:
        value = layouts.check_offset(cute.element_offset(row, col) * before, row, col)
        return layouts.check_offset(int(swizzle(value)) * after, row, col)

    return _elementwise(f"CuTe {cute} on {unit}s", offset_at, elem_bytes, cute.cols)


def _check_unit(unit: str) -> None:
    if unit not in ("element", "byte"):
        raise ValueError(f"unit must be 'element' or 'byte', got {unit!r}")


def build_layout(s: dict) -> layouts.Layout:
    eb, re_, kind = s["elem_bytes"], s["row_elems"], s["layout"]
    if eb not in ELEM_BYTES:
        raise ValueError(f"element width must be one of {ELEM_BYTES} bytes, got {eb}")
    if kind == "cute":
        _check_unit(s["unit"])
        return _cute_layout(s["cute"], eb, s["unit"])
    if not isinstance(re_, int) or not 1 <= re_ <= MAX_ROW_ELEMS:
        raise ValueError(f"row length must be 1..{MAX_ROW_ELEMS} elements, got {re_}")
    if kind == "row-major":
        return layouts.row_major(re_, eb)
    if kind == "padded":
        return layouts.padded(re_, eb, s["pad_bytes"])
    if kind == "xor":
        row_bytes = re_ * eb
        chunks = row_bytes // 16
        if row_bytes % 16 or chunks not in (1, 2, 4, 8):
            raise ValueError(f"the XOR layout needs rows of 16, 32, 64 or 128 bytes, got {row_bytes}")
        return layouts.xor_permuted(tile_chunks=chunks, elem_bytes=eb)
    if kind == "swizzle":
        _check_unit(s["unit"])
        return layouts.swizzle_layout(s["B"], s["M"], s["S"], re_, eb, s["unit"])
    if kind == "custom":
        return _custom_layout(s["expr"], eb, re_)
    raise ValueError(f"unknown layout {kind!r}; choose one of {list(LAYOUTS)}")


def _width(access: str) -> int:
    return int(access.rsplit("-", 1)[1])


def _lane_coordinates(access: str, eb: int, re_: int):
    """(rows, cols, width in bytes) of the lanes of ``access``; the matrix ones are 16-byte rows."""
    lane = np.arange(banks.WARP)
    chunk = 16 // eb
    if access in ("ldmatrix-x4-A", "ldmatrix-x4-trans-B", "stmatrix-x4"):
        return lane % 16, (lane // 16) * chunk, 16  # lanes 0-15: rows 0-15 at chunk 0; 16-31: chunk 1
    if access == "ldmatrix-x2-B":  # lanes 0-7: rows 0-7 at chunk 0; lanes 8-15: at chunk 1
        lane = lane[:16]
        return lane % 8, (lane // 8) * chunk, 16
    if access == "store-16":       # thread t copies chunk t % 4 of tile row t / 4
        return lane // 4, (lane % 4) * chunk, 16
    if access.startswith("fragment-"):  # mma fragments: lane t holds pair t % 4 of row t / 4
        width = _width(access)
        return lane // 4, (lane % 4) * max(1, width // eb), width
    if access.startswith("strided-"):
        return lane, np.zeros_like(lane), _width(access)
    if access.startswith("contiguous-"):
        width = _width(access)
        first = lane * max(1, width // eb)
        return first // re_, first % re_, width
    raise ValueError(f"unknown access {access!r}; choose one of {list(ACCESSES)}")


def build_access(s: dict) -> banks.Access:
    layout = build_layout(s)
    access, eb, re_ = s["access"], s["elem_bytes"], layout.row_elems
    rows, cols, width = _lane_coordinates(access, eb, re_)
    end = int(np.max(cols)) + max(1, width // eb)
    if end > re_:
        raise ValueError(f"{access} reaches column {end - 1}, past the end of a row of {re_} elements")
    if access in MATRIX_ACCESSES:
        return banks.ldmatrix_access(layout, rows, cols, MATRIX_ACCESSES[access])
    return banks.layout_access(layout, rows, cols, width, "st" if access in STORES else "ld")


def analyze(s: dict | None = None, **overrides) -> banks.Report:
    """The bank report of the explorer's case for these settings."""
    return banks.analyze(build_access(settings(**{**(s or {}), **overrides})))


def lane_elements(s: dict) -> dict[int, list[tuple[int, int]]]:
    """The tile elements (row, col) that each used lane's request covers, as the explorer outlines them."""
    layout = build_layout(s)
    rows, cols, width = _lane_coordinates(s["access"], s["elem_bytes"], layout.row_elems)
    span = max(1, width // s["elem_bytes"])
    return {lane: [(int(r), int(c) + i) for i in range(span)] for lane, (r, c) in enumerate(zip(rows, cols))}


def tile_rows(s: dict) -> int:
    """The rows of the tile the explorer draws: those the access reaches, rounded up to a multiple of 8."""
    layout = build_layout(s)
    rows, _, _ = _lane_coordinates(s["access"], s["elem_bytes"], layout.row_elems)
    return -(-(int(np.max(rows)) + 1) // 8) * 8


def cute_equivalent(s: dict) -> dict | None:
    """The case's layout as the settings of a "cute" layout (``cute`` and ``unit``): strides in
    elements over the tile the explorer draws, a swizzle on element offsets where it can be (on
    bytes only for a byte swizzle below the element size). None where CuTe has no such layout:
    a custom expression, or padding that is not a whole number of elements."""
    s = settings(**s)
    eb, layout = s["elem_bytes"], s["layout"]
    if layout == "cute":
        return {"cute": str(notation.parse_cute(s["cute"])), "unit": s["unit"]}
    rows, cols = tile_rows(s), s["row_elems"]
    if layout == "padded":
        if s["pad_bytes"] % eb:
            return None
        return {"cute": f"({rows},{cols}):({cols + s['pad_bytes'] // eb},1)", "unit": "element"}
    plain = f"({rows},{cols}):({cols},1)"
    if layout == "row-major":
        return {"cute": plain, "unit": "element"}
    if layout == "xor":
        B, M, S, unit = int(math.log2(cols * eb // 16)), 4, 3, "byte"
    elif layout == "swizzle":
        B, M, S, unit = s["B"], s["M"], s["S"], s["unit"]
    else:
        return None
    shift = int(math.log2(eb))
    if unit == "byte" and M >= shift:
        M, unit = M - shift, "element"
    return {"cute": f"Swizzle<{B},{M},{S}> o {plain}", "unit": unit}


# ---- what the explorer says (banks.js has the same words: tests/test_bank_explorer_js.py) ----------

ELEMENT_NAMES = {1: "int8", 2: "fp16", 4: "fp32"}
MATRIX_WORDS = {"ldmatrix-x4-A": ("ldmatrix.x4", "A tile"), "ldmatrix-x2-B": ("ldmatrix.x2", "B tile"),
                "ldmatrix-x4-trans-B": ("ldmatrix.x4.trans", "B tile stored [k][n]"),
                "stmatrix-x4": ("stmatrix.x4", "C tile")}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _article(n: int) -> str:
    return "an" if str(n).startswith("8") or n in (11, 18) else "a"


def preset_of(s: dict) -> str:
    """The preset whose settings these are (those the layout reads), or "" (the explorer's presetOf)."""
    relevant = ["access", "layout", "elem_bytes", *LAYOUT_SETTINGS.get(s["layout"], ())]
    return next((name for name, p in PRESETS.items()
                 if all(str(p["settings"][k]) == str(s[k]) for k in relevant)), "")


def access_text(s: dict) -> str:
    """The access in words, from the settings: instruction or width, loads or stores, the element type
    and the tile (rows x columns of elements) its lanes cover."""
    access, eb = s["access"], s["elem_bytes"]
    rows, cols, width = _lane_coordinates(access, eb, build_layout(s).row_elems)
    span = max(1, width // eb)
    R, C, elem = int(np.max(rows)) + 1, int(np.max(cols)) + span, ELEMENT_NAMES[eb]
    tile = f"{_article(R)} {R}x{C} {elem}"
    verb = "stores" if access in STORES else "loads"
    if access in MATRIX_WORDS:
        instr, operand = MATRIX_WORDS[access]
        return f"{instr} of {tile} {operand}"
    if access == "store-16":
        return f"16-byte stores of {tile} tile, lane t to row t/4, chunk t%4"
    if access.startswith("fragment-"):
        column = f"{span}*(t%4)" if span > 1 else "t%4"
        return f"{width}-byte mma fragment {verb} of {tile} tile, lane t at row t/4, column {column}"
    if access.startswith("strided-"):
        return f"{width}-byte {verb} at the start of {R} {elem} rows, lane i in row i"
    return f"{width}-byte {verb} of {32 * span} consecutive {elem} elements, lanes side by side"


def describe(s: dict) -> str:
    """The case in words, from its settings: the access, the layout and, for a preset's settings, the
    kernel the access comes from ("Kernel 2.0's ldmatrix.x4 of a 16x16 fp16 A tile; layout row-major ...")."""
    s = settings(**s)
    preset = PRESETS.get(preset_of(s))
    source = preset and preset["source"]
    origin = f"{GEMM_KERNELS[source].short_title}'s " if source else ""
    return f"{origin}{access_text(s)}; layout {build_layout(s).name}"


def summary(s: dict) -> str:
    """The explorer's summary line: describe, then the report's counts."""
    r = analyze(s)
    return (f"{describe(s)}: {_plural(len(r.phases), 'phase')}, {_plural(r.wavefronts, 'wavefront')} "
            f"(ideal {r.ideal}), {_plural(r.conflicts, 'bank conflict')}, worst bank {r.ways}-way")


def phase_label(s: dict, p: int) -> str:
    """The explorer's words for phase ``p`` (numbered from 0: banks.phase_name), beside its ◀ ▶."""
    access = build_access(settings(**s))
    report = banks.analyze(access)
    phase, n = report.phases[p], len(report.phases)
    which = "the only phase" if n == 1 else f"of phases 0-{n - 1}"
    lanes = f"lanes {int(phase.lanes[0])}-{int(phase.lanes[-1])}" if phase.lanes.size else "no lane"
    matrix = f"matrix {p}, " if access.kind in banks.MATRIX_KINDS else ""
    return f"{banks.phase_name(p)} ({which}): {matrix}{lanes}, {_plural(phase.wavefronts, 'wavefront')}"


def phase_row_label(p: int, wavefronts: int) -> str:
    """The row header of phase ``p`` in the explorer's table of phases x banks (under "phase \\ bank")."""
    return f"{p} ({wavefronts}x)"


def measured_state(comparisons: dict, device: str, arch: str, size: str) -> dict:
    """What the explorer shows of Nsight Compute's counts: ``comparisons`` is {kernel key: the
    tcgemm.smem.gpu.predictions.predicted_vs_measured list}, as the chapter's recorded cell makes it."""
    kernels = {}
    for key, rows in comparisons.items():
        kernels[key] = {row.counter: {"metric": row.metric, "predicted": int(row.predicted),
                                      "measured": None if math.isnan(row.measured) else int(row.measured)}
                        for row in rows}
    return {"device": device, "arch": arch, "size": size, "kernels": kernels}
