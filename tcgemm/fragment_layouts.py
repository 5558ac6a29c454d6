"""Warp fragment layouts of mma.sync and ldmatrix, as data.

This is the one place in the package that encodes the PTX ISA's fragment rules.
Every layout is a pair of integer tables ``row[lane, element]`` and
``col[lane, element]``: element ``element`` held by lane ``lane`` of the warp is
entry ``(row, col)`` of the matrix the fragment covers.

The formulas are transcribed from the PTX ISA (version 9.0), sections 9.7.14.5.7
"Matrix Fragments for mma.m16n8k8" (.f16/.bf16 and, with other A and B fragments,
.tf32), 9.7.14.5.8 "... mma.m16n8k16 with floating point type" (.f16 and .bf16:
one table), 9.7.14.5.10 "... mma.m16n8k32" (.s8/.u8 and .e4m3/.e5m2: one table)
and "Warp-level matrix load instruction: ldmatrix". They use

    groupID           = lane >> 2
    threadID_in_group = lane % 4
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcgemm.errors import OperandError

WARP_SIZE = 32

MMA_SHAPES: dict[str, tuple[int, int, int]] = {
    "m16n8k8": (16, 8, 8),
    "m16n8k16": (16, 8, 16),
    "m16n8k32": (16, 8, 32),
}
MMA_OPERANDS = ("A", "B", "C", "D")

# Accepted (ab_type, acc_type) per shape; the first pair is the default.
_MMA_TYPES: dict[str, dict[str, tuple[str, ...]]] = {
    "m16n8k8": {"f16": ("f32", "f16"), "tf32": ("f32",)},
    "m16n8k16": {"f16": ("f32", "f16"), "bf16": ("f32",)},
    "m16n8k32": {"s8": ("s32",), "e4m3": ("f32",), "e5m2": ("f32",)},
}
_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "e4m3": 8, "e5m2": 8, "f32": 32, "s32": 32}
# The PTX ISA's target requirement of mma.sync with these A/B types; the others need sm_80 at most.
_MIN_SM = {"e4m3": 89, "e5m2": 89}

MMA_VARIANTS: dict[str, tuple[str, str, str]] = {
    "m16n8k16.f32": ("m16n8k16", "f16", "f32"),
    "m16n8k16.f16": ("m16n8k16", "f16", "f16"),
    "m16n8k8.f32": ("m16n8k8", "f16", "f32"),
    "m16n8k32.s32": ("m16n8k32", "s8", "s32"),
    "m16n8k16.bf16.f32": ("m16n8k16", "bf16", "f32"),
    "m16n8k8.tf32.f32": ("m16n8k8", "tf32", "f32"),
    "m16n8k32.e4m3.f32": ("m16n8k32", "e4m3", "f32"),
    "m16n8k32.e5m2.f32": ("m16n8k32", "e5m2", "f32"),
}
# The fp16 and int8 variants, those of the first chapter; the data-types chapter adds the others.
F16_S8_VARIANTS = ("m16n8k16.f32", "m16n8k16.f16", "m16n8k8.f32", "m16n8k32.s32")

LDMATRIX_NUMS = (1, 2, 4)


@dataclass(frozen=True, eq=False)
class FragmentLayout:
    """Which matrix entry each (lane, element) of a warp fragment holds."""

    name: str
    operand: str
    shape: tuple[int, int]
    elements_per_register: int
    row: np.ndarray
    col: np.ndarray

    def __post_init__(self):
        row = np.array(self.row, dtype=np.int64)
        col = np.array(self.col, dtype=np.int64)
        if row.ndim != 2 or row.shape[0] != WARP_SIZE or row.shape != col.shape:
            raise ValueError(
                f"{self.name}: row and col must both have shape (32, elements_per_lane); "
                f"got {row.shape} and {col.shape}"
            )
        if row.shape[1] % self.elements_per_register:
            raise ValueError(
                f"{self.name}: {row.shape[1]} elements per lane do not fill whole registers "
                f"of {self.elements_per_register} elements"
            )
        rows, cols = self.shape
        if row.min() < 0 or row.max() >= rows or col.min() < 0 or col.max() >= cols:
            raise ValueError(f"{self.name}: an index falls outside the {rows}x{cols} matrix")
        row.setflags(write=False)
        col.setflags(write=False)
        object.__setattr__(self, "row", row)
        object.__setattr__(self, "col", col)
        object.__setattr__(self, "shape", (int(rows), int(cols)))

    @property
    def elements_per_lane(self) -> int:
        return self.row.shape[1]

    @property
    def registers_per_lane(self) -> int:
        return self.elements_per_lane // self.elements_per_register

    def register_of(self, element: int) -> int:
        """The 32-bit register (0-based, within this operand) that holds ``element``."""
        if not 0 <= element < self.elements_per_lane:
            raise ValueError(
                f"{self.name}: element must be in 0..{self.elements_per_lane - 1}, got {element}"
            )
        return element // self.elements_per_register

    def element_label(self, element: int) -> str:
        """The ISA's name of an element: a3, b1, c2; for ldmatrix r1.lo / r1.hi."""
        register = self.register_of(element)
        if self.operand == "ldmatrix":
            return f"r{register}.{'lo' if element % 2 == 0 else 'hi'}"
        letter = "c" if self.operand in ("C", "D") else self.operand.lower()
        return f"{letter}{element}"

    def inverse(self) -> tuple[np.ndarray, np.ndarray]:
        """(lane, element) arrays of shape ``shape``: who holds each matrix entry.

        Raises ValueError unless every entry is held by exactly one (lane, element).
        """
        lane = np.full(self.shape, -1, dtype=np.int64)
        element = np.full(self.shape, -1, dtype=np.int64)
        count = np.zeros(self.shape, dtype=np.int64)
        lanes, elements = np.meshgrid(
            np.arange(WARP_SIZE), np.arange(self.elements_per_lane), indexing="ij"
        )
        np.add.at(count, (self.row, self.col), 1)
        if not np.all(count == 1):
            doubled = int(np.sum(count > 1))
            missing = int(np.sum(count == 0))
            raise ValueError(
                f"{self.name} is not a bijection: {doubled} entries held more than once, "
                f"{missing} entries held by no lane"
            )
        lane[self.row, self.col] = lanes
        element[self.row, self.col] = elements
        return lane, element

    def gather(self, matrix) -> np.ndarray:
        """The (32, elements_per_lane) fragment values a warp holds for ``matrix``."""
        matrix = np.asarray(matrix)
        if matrix.shape != self.shape:
            raise OperandError(
                f"{self.name}: expected a matrix of shape {self.shape}, got {matrix.shape}"
            )
        return matrix[self.row, self.col]

    def scatter(self, values) -> np.ndarray:
        """Inverse of gather: (32, elements_per_lane) fragment values to the full matrix."""
        values = np.asarray(values)
        expected = (WARP_SIZE, self.elements_per_lane)
        if values.shape != expected:
            raise OperandError(
                f"{self.name}: expected fragment values of shape {expected}, got {values.shape}"
            )
        lane, element = self.inverse()
        return values[lane, element]


def _lane_coordinates(elements_per_lane: int):
    """groupID, threadID_in_group and element index, broadcast to (32, elements_per_lane)."""
    lane = np.arange(WARP_SIZE)[:, None]
    element = np.arange(elements_per_lane)[None, :]
    return lane >> 2, lane % 4, element


# --- PTX ISA rules, one function per (shape, operand, element width) -----------------
# Each returns (row, col) for groupID g, threadID_in_group t and element index i. The rules
# depend on the width only: bf16 shares f16's, e4m3 and e5m2 share s8's.

def _a_m16n8k8_f16(g, t, i):
    row = np.where(i < 2, g, g + 8)
    col = t * 2 + (i & 1)
    return row, col


def _b_m16n8k8_f16(g, t, i):
    return t * 2 + i, g


def _a_m16n8k8_tf32(g, t, i):
    """One 32-bit element per register: a0..a3 walk the blocks top-left, bottom-left, top-right,
    bottom-right of 8 x 4 each (f16's a0..a3 are two registers of one row pair instead)."""
    row = np.where(i % 2 == 0, g, g + 8)
    col = np.where(i < 2, t, t + 4)
    return row, col


def _b_m16n8k8_tf32(g, t, i):
    return np.where(i == 0, t, t + 4), g


def _a_m16n8k16_f16(g, t, i):
    row = np.where((i < 2) | ((4 <= i) & (i < 6)), g, g + 8)
    col = np.where(i < 4, t * 2 + (i & 1), t * 2 + (i & 1) + 8)
    return row, col


def _b_m16n8k16_f16(g, t, i):
    row = np.where(i < 2, t * 2 + (i & 1), t * 2 + (i & 1) + 8)
    return row, g


def _a_m16n8k32_s8(g, t, i):
    row = np.where((i < 4) | ((8 <= i) & (i < 12)), g, g + 8)
    col = np.where(i < 8, t * 4 + (i & 3), t * 4 + (i & 3) + 16)
    return row, col


def _b_m16n8k32_s8(g, t, i):
    row = np.where(i < 4, t * 4 + (i & 3), t * 4 + (i & 3) + 16)
    return row, g


def _c_m16n8(g, t, i):
    """Accumulator C/D of every m16n8kK shape, whatever the accumulator type."""
    row = np.where(i < 2, g, g + 8)
    col = t * 2 + (i & 1)
    return row, col


_OPERAND_RULES = {
    ("m16n8k8", "A", 16): _a_m16n8k8_f16,
    ("m16n8k8", "B", 16): _b_m16n8k8_f16,
    ("m16n8k8", "A", 32): _a_m16n8k8_tf32,
    ("m16n8k8", "B", 32): _b_m16n8k8_tf32,
    ("m16n8k16", "A", 16): _a_m16n8k16_f16,
    ("m16n8k16", "B", 16): _b_m16n8k16_f16,
    ("m16n8k32", "A", 8): _a_m16n8k32_s8,
    ("m16n8k32", "B", 8): _b_m16n8k32_s8,
}


def mma_types(shape: str, ab_type: str | None = None,
              acc_type: str | None = None) -> tuple[str, str]:
    """Check an (ab_type, acc_type) pair for ``shape``; None picks the first accepted type."""
    if shape not in MMA_SHAPES:
        raise ValueError(f"unknown mma shape {shape!r}; accepted: {', '.join(MMA_SHAPES)}")
    accepted = _MMA_TYPES[shape]
    if ab_type is None:
        ab_type = next(iter(accepted))
    if ab_type not in accepted:
        raise ValueError(
            f"mma.{shape} does not take A/B type {ab_type!r}; accepted: {', '.join(accepted)}"
        )
    if acc_type is None:
        acc_type = accepted[ab_type][0]
    if acc_type not in accepted[ab_type]:
        raise ValueError(
            f"mma.{shape} with .{ab_type} inputs does not take accumulator type {acc_type!r}; "
            f"accepted: {', '.join(accepted[ab_type])}"
        )
    return ab_type, acc_type


def mma_layout(
    shape: str, operand: str, ab_type: str | None = None, acc_type: str | None = None
) -> FragmentLayout:
    """The fragment layout of one operand of ``mma.sync.aligned.<shape>.row.col``.

    shape: "m16n8k8" (ab_type "f16" with acc_type "f32" or "f16"; "tf32" with "f32"), "m16n8k16"
    ("f16" with "f32" or "f16"; "bf16" with "f32") or "m16n8k32" ("s8" with "s32"; "e4m3" or
    "e5m2" with "f32"). None picks the first accepted type.
    operand: "A" (m x k), "B" (k x n), "C" or "D" (m x n).
    """
    ab_type, acc_type = mma_types(shape, ab_type, acc_type)
    if operand not in MMA_OPERANDS:
        raise ValueError(f"unknown mma operand {operand!r}; accepted: {', '.join(MMA_OPERANDS)}")
    m, n, k = MMA_SHAPES[shape]
    if operand in ("C", "D"):
        matrix_shape, rule, element_type = (m, n), _c_m16n8, acc_type
    else:
        matrix_shape = (m, k) if operand == "A" else (k, n)
        rule, element_type = _OPERAND_RULES[(shape, operand, _BITS[ab_type])], ab_type
    elements_per_lane = matrix_shape[0] * matrix_shape[1] // WARP_SIZE
    row, col = rule(*_lane_coordinates(elements_per_lane))
    return FragmentLayout(
        name=f"mma.{shape} .{element_type} {operand}",
        operand=operand,
        shape=matrix_shape,
        elements_per_register=32 // _BITS[element_type],
        row=np.broadcast_to(row, (WARP_SIZE, elements_per_lane)),
        col=np.broadcast_to(col, (WARP_SIZE, elements_per_lane)),
    )


def mma_layouts(variant_key: str) -> dict[str, FragmentLayout]:
    """The A, B, C and D layouts of one entry of MMA_VARIANTS."""
    shape, ab_type, acc_type = _variant(variant_key)
    return {op: mma_layout(shape, op, ab_type, acc_type) for op in MMA_OPERANDS}


def _variant(variant_key: str) -> tuple[str, str, str]:
    if variant_key not in MMA_VARIANTS:
        raise ValueError(
            f"unknown mma variant {variant_key!r}; accepted: {', '.join(MMA_VARIANTS)}"
        )
    return MMA_VARIANTS[variant_key]


def variant_identifier(variant_key: str) -> str:
    """The variant key as a C identifier, m16n8k16.bf16.f32 -> m16n8k16_bf16_f32: the kernels of
    kernels/probe_mma.cu and probe_mma_ceiling.cu are named with it."""
    _variant(variant_key)
    return variant_key.replace(".", "_")


def element_bits(element_type: str) -> int:
    """Bits per element of an mma operand type: f16 16, tf32 32 (one per register), e4m3 8, ..."""
    if element_type not in _BITS:
        raise ValueError(f"unknown mma element type {element_type!r}; accepted: {', '.join(_BITS)}")
    return _BITS[element_type]


def min_sm(variant_key: str) -> int:
    """The lowest compute capability (as 80, 89, ...) whose mma.sync takes the variant's A/B type:
    89 for e4m3 and e5m2 (PTX ISA: sm_89 or higher), 80 for the others."""
    return _MIN_SM.get(_variant(variant_key)[1], 80)


def unsupported(variant_key: str, arch: str) -> str | None:
    """None when a GPU of `arch` ("sm_86", "sm_90", ...) executes the variant; else one line why not."""
    if not arch.startswith("sm_") or not arch[3:].isdigit():
        raise ValueError(f"arch must look like 'sm_90', got {arch!r}")
    need = min_sm(variant_key)
    if int(arch[3:]) >= need:
        return None
    return (f"this GPU ({arch}) has no .{_variant(variant_key)[1]} mma.sync (sm_{need} and later): "
            f"{variant_key} skipped")


def ptx_instruction(variant_key: str) -> str:
    """The mma instruction of a variant: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32, ..."""
    return mma_instruction(*_variant(variant_key))


def mma_instruction(shape: str, ab_type: str | None = None, acc_type: str | None = None) -> str:
    """The mma instruction for a shape and types (D and C share acc_type, A and B ab_type)."""
    ab_type, acc_type = mma_types(shape, ab_type, acc_type)
    return f"mma.sync.aligned.{shape}.row.col.{acc_type}.{ab_type}.{ab_type}.{acc_type}"


def _validate_num(num: int) -> None:
    if num not in LDMATRIX_NUMS:
        raise ValueError(
            f"ldmatrix loads 1, 2 or 4 matrices (.x1/.x2/.x4); got num={num!r}"
        )


def ldmatrix_layout(num: int, trans: bool = False) -> FragmentLayout:
    """Where ``ldmatrix.sync.aligned.m8n8.x<num>[.trans].b16`` puts each stored element.

    The matrix is the ``num`` 8x8 matrices as stored in shared memory, stacked:
    matrix j is rows 8j..8j+7. Register j of every lane holds two b16 elements of
    matrix j (elements 2j and 2j+1). Without .trans, lane l gets row l//4,
    columns 2*(l%4) and 2*(l%4)+1; with .trans, the same positions of the
    transposed matrix, i.e. stored rows 2*(l%4) and 2*(l%4)+1 of column l//4.
    """
    _validate_num(num)
    g, t, element = _lane_coordinates(2 * num)
    matrix, half = element >> 1, element & 1
    if trans:
        row, col = 8 * matrix + t * 2 + half, g
    else:
        row, col = 8 * matrix + g, t * 2 + half
    return FragmentLayout(
        name=f"ldmatrix.m8n8.x{num}{'.trans' if trans else ''} .b16",
        operand="ldmatrix",
        shape=(8 * num, 8),
        elements_per_register=2,
        row=np.broadcast_to(row, (WARP_SIZE, 2 * num)),
        col=np.broadcast_to(col, (WARP_SIZE, 2 * num)),
    )


def ldmatrix_placed(num: int, trans: bool, origins, shape, stored_transposed: bool = False) -> FragmentLayout:
    """ldmatrix's layout with its stored matrix j placed at ``origins[j]`` = (row0, col0) of a tile.

    With ``stored_transposed`` the stored rows are the tile's columns: an operand kept in shared
    memory with its first index contiguous (B as [n][k]); stored (row r, col c) of matrix j is then
    tile entry (row0 + c, col0 + r). Comparing the result with ``mma_layout`` shows which loads
    produce an mma fragment directly.
    """
    _validate_num(num)
    if len(origins) != num:
        raise ValueError(f"ldmatrix.x{num} places {num} matrices, got {len(origins)} origins")
    stored = ldmatrix_layout(num, trans)
    matrix, r, c = stored.row // 8, stored.row % 8, stored.col
    origin = np.asarray(origins, dtype=np.int64)[matrix]
    if stored_transposed:
        r, c = c, r
    return FragmentLayout(
        name=f"{stored.name} placed in a {shape[0]}x{shape[1]} tile",
        operand="ldmatrix",
        shape=tuple(shape),
        elements_per_register=2,
        row=origin[..., 0] + r,
        col=origin[..., 1] + c,
    )


def same_positions(a: FragmentLayout, b: FragmentLayout) -> bool:
    """Whether two layouts put every (lane, element) at the same matrix entry."""
    return a.row.shape == b.row.shape and bool(np.array_equal(a.row, b.row) and np.array_equal(a.col, b.col))


def placement_verdicts(candidates) -> str:
    """One line per (name, fragment, loaded): whether ``loaded`` puts every (lane, element) at the
    matrix entry where the mma ``fragment`` wants it (``same_positions``)."""
    width = max(len(name) for name, _, _ in candidates)
    return "\n".join(f"{name:<{width}}   "
                     f"{'is the mma fragment' if same_positions(loaded, fragment) else 'is NOT the fragment'}"
                     for name, fragment, loaded in candidates)


def ldmatrix_address_lane(num: int) -> np.ndarray:
    """For each stacked row r = 8j + row, the lane whose address operand points at it.

    Lanes 0-7 address the rows of matrix 0, lanes 8-15 those of matrix 1, and so on;
    the addresses in the remaining lanes are not used.
    """
    _validate_num(num)
    return np.arange(8 * num)


def ldmatrix_instruction(num: int, trans: bool = False) -> str:
    _validate_num(num)
    return f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16"


def _affine_term(constant: int, g_coeff: int, t_coeff: int) -> str:
    parts = []
    for coeff, symbol in ((g_coeff, "g"), (t_coeff, "t")):
        if coeff:
            parts.append(symbol if coeff == 1 else f"{coeff}{symbol}")
    if constant or not parts:
        parts.append(str(constant))
    return " + ".join(parts)


def _affine_formula(table: np.ndarray, element: int) -> str | None:
    """table[:, element] written as c + a*g + b*t, or None when it is not of that form."""
    lanes = np.arange(WARP_SIZE)
    g, t = lanes >> 2, lanes % 4
    column = table[:, element]
    constant = int(column[0])
    g_coeff = int(column[4] - column[0])
    t_coeff = int(column[1] - column[0])
    if not np.array_equal(column, constant + g_coeff * g + t_coeff * t):
        return None
    return _affine_term(constant, g_coeff, t_coeff)


def describe(layout: FragmentLayout) -> str:
    """The layout's index formulas as text, one line per element, read off the tables."""
    lines = [
        f"{layout.name}: {layout.shape[0]}x{layout.shape[1]} matrix, "
        f"{layout.elements_per_lane} elements in {layout.registers_per_lane} registers per lane",
        "g = lane >> 2 (groupID), t = lane % 4 (threadID_in_group)",
    ]
    width = max(len(layout.element_label(i)) for i in range(layout.elements_per_lane))
    for i in range(layout.elements_per_lane):
        row = _affine_formula(layout.row, i) or "(not affine in g, t)"
        col = _affine_formula(layout.col, i) or "(not affine in g, t)"
        label = layout.element_label(i).ljust(width)
        lines.append(f"{label} (R{layout.register_of(i)}): row = {row:<10} col = {col}")
    return "\n".join(lines)


def warp_tile_step(variant_key: str, warp_tile_m: int, warp_tile_n: int) -> tuple[int, float]:
    """A warp tile of warp_tile_m x warp_tile_n made of `variant_key` mma: the mma it issues per k
    step, and the A and B fragment elements each lane loads per mma when every fragment is loaded
    once per step and used for a whole row or column of the tile."""
    layouts = mma_layouts(variant_key)
    (m, _), n = layouts["A"].shape, layouts["B"].shape[1]
    if warp_tile_m <= 0 or warp_tile_n <= 0 or warp_tile_m % m or warp_tile_n % n:
        raise ValueError(f"a {variant_key} warp tile is a positive multiple of {m} x {n}, "
                         f"got {warp_tile_m} x {warp_tile_n}")
    tiles_m, tiles_n = warp_tile_m // m, warp_tile_n // n
    loads = tiles_m * layouts["A"].elements_per_lane + tiles_n * layouts["B"].elements_per_lane
    return tiles_m * tiles_n, loads / (tiles_m * tiles_n)

