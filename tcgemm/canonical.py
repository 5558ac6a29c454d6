"""Hopper's shared-memory operands: the swizzle modes of wgmma and TMA, the canonical layouts wgmma
reads (K-major, and MN-major: read with wgmma's transpose immediate), and the 64-bit matrix descriptor
that points wgmma at them. Pure module (numpy).

A swizzle mode of width W bytes (32, 64 or 128) stores a tile in *atoms* of 8 rows x W bytes: the
rows of an atom are W bytes apart, and the 16-byte chunk c of row r (r = 0..7 in the atom) is stored
at chunk ``c ^ (r // (128 // W))``, i.e. address bits 4.. are XORed with address bits 7..: CuTe's
Swizzle<log2(W/16), 4, 3> on byte addresses (tcgemm.layouts.Swizzle). "none"
stores *core matrices* of 8 rows x 16 bytes, 128 contiguous bytes each. The XOR acts on the address,
so an atom must start at a multiple of 8 * W bytes (a 1024-byte boundary for 128B) for the offsets
here to be the addresses the hardware swizzles.

K-major (A row-major, B column-major): the rows of an atom are 8 rows of M or N, each W bytes of K.
MN-major (A column-major, B row-major): the rows of an atom are 8 rows of K, each W bytes of M or N
(W / 2 fp16 elements); "none": 8 rows of K, 16 bytes of M or N each. The descriptor's two offsets swap
roles between the cases (the PTX ISA's canonical layouts, in CuTe notation with T = 16 bytes):
  K-major swizzled   ((8,m),(T,2k)):((W/16 T,SBO),(1,T))     SBO: next 8 rows of M/N; LBO unused
  K-major none       ((8,m),(T,2k)):((T,SBO),(1,LBO))        SBO: next 8 rows; LBO: next 16 bytes of K
  MN-major swizzled  ((T,W/16,m),(8,k)):((1,T,LBO),(W/16 T,SBO))  LBO: next atom along M/N; SBO: next 8 K
  MN-major none      ((T,1,m),(8,k)):((1,T,SBO),(T,LBO))     SBO: next 8 of M/N; LBO: next 8 rows of K

Sources: NVIDIA, "Parallel Thread Execution ISA", sections "Shared Memory Matrix Layout" and "Matrix
Descriptor Format" of wgmma (Asynchronous Warpgroup Level Matrix Multiply-Accumulate); the
CUtensorMapSwizzle enum of the CUDA driver API; CUTLASS/CuTe's GMMA layout atoms.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcgemm.layouts import Layout, Swizzle
from tcgemm.table import Table

CHUNK_BYTES = 16          # one row of a core matrix; the unit every swizzle permutes
ATOM_ROWS = 8
MAJORS = ("K", "MN")      # which dimension of an operand tile is contiguous: K, or M (A) / N (B)


@dataclass(frozen=True)
class SwizzleMode:
    """One swizzle mode, by every name it goes by.

    width: bytes per atom row (16 for "none": one core-matrix row). descriptor_code: bits 62-63 of
    the wgmma matrix descriptor. tma_name / tma_value: the CUtensorMapSwizzle enumerator a tensor
    map is encoded with (cuTensorMapEncodeTiled's swizzle argument).
    """

    name: str
    width: int
    descriptor_code: int
    tma_name: str
    tma_value: int

    @property
    def swizzle(self) -> Swizzle:
        """The XOR on byte addresses: Swizzle<B,4,3> with 2^B = width / 16 chunks per atom row."""
        return Swizzle((self.width // CHUNK_BYTES).bit_length() - 1, 4, 3)

    @property
    def atom_bytes(self) -> int:
        """8 rows of ``width`` bytes: the period of the pattern, and the alignment an atom needs."""
        return ATOM_ROWS * self.width

    @property
    def notation(self) -> str:
        """The swizzle in the explorer's CuTe notation (tcgemm.smem.notation), on byte offsets."""
        s = self.swizzle
        return f"Sw<{s.bits},{s.base},{s.shift}>"


SWIZZLE_MODES: dict[str, SwizzleMode] = {
    m.name: m
    for m in (
        SwizzleMode("none", 16, 0, "CU_TENSOR_MAP_SWIZZLE_NONE", 0),
        SwizzleMode("32B", 32, 3, "CU_TENSOR_MAP_SWIZZLE_32B", 1),
        SwizzleMode("64B", 64, 2, "CU_TENSOR_MAP_SWIZZLE_64B", 2),
        SwizzleMode("128B", 128, 1, "CU_TENSOR_MAP_SWIZZLE_128B", 3),
    )
}


def swizzle_mode(name: str) -> SwizzleMode:
    """The mode called ``name`` ("none", "32B", "64B", "128B"); ValueError naming them otherwise."""
    if name not in SWIZZLE_MODES:
        raise ValueError(f"unknown swizzle mode {name!r}; accepted: {', '.join(SWIZZLE_MODES)}")
    return SWIZZLE_MODES[name]


def _check_bytes(**values) -> None:
    for key, value in values.items():
        if not isinstance(value, (int, np.integer)) or value < 0 or value % CHUNK_BYTES:
            raise ValueError(f"{key} must be a non-negative multiple of 16 bytes, got {value!r}")


def _check_major(major: str) -> None:
    if major not in MAJORS:
        raise ValueError(f"major must be one of {', '.join(map(repr, MAJORS))}, got {major!r}")


def canonical_strides(mode: str, rows: int, k_elems: int, elem_bytes: int = 2, major: str = "K") -> tuple[int, int]:
    """(LBO, SBO) in bytes of a ``rows`` (M or N) x ``k_elems`` tile stored densely in ``mode``.

    K-major. "none": the core matrices of one 8-row group lie side by side in K (LBO = 128), the next
    group follows (SBO = 128 * core matrices per row). Swizzled: the next 8 rows follow the atom (SBO =
    8 * width); LBO is not used by K-major swizzled layouts (the K of one wgmma, 32 bytes, never leaves
    an atom row) and is given as 16, the field value 1 CUTLASS writes.
    MN-major, as a TMA box of rows of K writes it: the atoms of 8 K rows follow one another down K, and
    the next atom along M or N comes after all of them. Swizzled: SBO = 8 * width (next 8 K rows), LBO =
    SBO * k_elems / 8 (next atom along M/N). "none": LBO = 128 (next 8 K rows), SBO = 128 * k_elems / 8
    (next 8 elements of M/N)."""
    m = swizzle_mode(mode)
    _check_major(major)
    if major == "MN":
        _mn_tile_shape(rows, k_elems, elem_bytes)
        atom = ATOM_ROWS * (CHUNK_BYTES if m.name == "none" else m.width)     # 8 rows of K
        column = k_elems // ATOM_ROWS * atom                                   # all of K: next atom along M/N
        return (atom, column) if m.name == "none" else (column, atom)
    _tile_shape(m, rows, k_elems, elem_bytes)
    if m.name == "none":
        return ATOM_ROWS * CHUNK_BYTES, ATOM_ROWS * CHUNK_BYTES * (k_elems * elem_bytes // CHUNK_BYTES)
    return CHUNK_BYTES, m.atom_bytes


def _mn_tile_shape(mn_elems: int, k_rows: int, elem_bytes: int) -> None:
    if k_rows < 1 or k_rows % ATOM_ROWS:
        raise ValueError(f"an MN-major canonical tile has a multiple of 8 rows of K, got {k_rows}")
    if mn_elems < 1 or mn_elems * elem_bytes % CHUNK_BYTES:
        raise ValueError(f"an MN-major tile row must be whole 16-byte chunks, got {mn_elems} x {elem_bytes} bytes")


def _tile_shape(m: SwizzleMode, rows: int, k_elems: int, elem_bytes: int) -> None:
    if rows < 1 or rows % ATOM_ROWS:
        raise ValueError(f"a canonical tile has a multiple of 8 rows, got {rows}")
    k_bytes = k_elems * elem_bytes
    if k_bytes < CHUNK_BYTES or k_bytes % CHUNK_BYTES:
        raise ValueError(f"a tile row must be whole 16-byte chunks, got {k_elems} x {elem_bytes} bytes")
    if m.name != "none" and k_bytes > m.width:
        raise ValueError(f"a {m.name} atom row holds {m.width} bytes; {k_elems} elements of "
                         f"{elem_bytes} bytes do not fit (use one descriptor per atom column)")


def kmajor_layout(mode: str, rows: int, k_elems: int, elem_bytes: int = 2,
                  lbo: int | None = None, sbo: int | None = None) -> Layout:
    """The canonical K-major layout: element (row, k) of a ``rows`` x ``k_elems`` tile (A as M x K, or
    B as N x K) -> its byte offset from a tile start aligned to the mode's atom. LBO and SBO default
    to canonical_strides; they are the descriptor's fields."""
    m = swizzle_mode(mode)
    default_lbo, default_sbo = canonical_strides(mode, rows, k_elems, elem_bytes)
    lbo = default_lbo if lbo is None else lbo
    sbo = default_sbo if sbo is None else sbo
    _check_bytes(lbo=lbo, sbo=sbo)
    chunk_elems = CHUNK_BYTES // elem_bytes
    sw = m.swizzle

    if m.name == "none":
        def offset(r, k):
            return ((r // ATOM_ROWS) * sbo + (k // chunk_elems) * lbo + (r % ATOM_ROWS) * CHUNK_BYTES
                    + (k % chunk_elems) * elem_bytes)
    else:
        def offset(r, k):
            return sw((r // ATOM_ROWS) * sbo + (r % ATOM_ROWS) * m.width + k * elem_bytes)

    return Layout(f"K-major, {mode} swizzle ({m.notation} on bytes)", offset, elem_bytes, k_elems)


def mnmajor_layout(mode: str, mn_elems: int, k_rows: int, elem_bytes: int = 2,
                   lbo: int | None = None, sbo: int | None = None) -> Layout:
    """The canonical MN-major layout: element (k, mn) of a tile of ``k_rows`` rows of K, each
    ``mn_elems`` elements of M (A column-major) or N (B row-major) -> its byte offset from a tile start
    aligned to the mode's atom. LBO and SBO default to canonical_strides(..., major="MN"); they are the
    descriptor's fields, whose roles differ from the K-major ones (see the module's docstring)."""
    m = swizzle_mode(mode)
    default_lbo, default_sbo = canonical_strides(mode, mn_elems, k_rows, elem_bytes, "MN")
    lbo = default_lbo if lbo is None else lbo
    sbo = default_sbo if sbo is None else sbo
    _check_bytes(lbo=lbo, sbo=sbo)
    row_bytes = CHUNK_BYTES if m.name == "none" else m.width     # of M/N per row of an atom
    atom_elems = row_bytes // elem_bytes
    next_atom, next_k_group = (sbo, lbo) if m.name == "none" else (lbo, sbo)
    sw = m.swizzle

    def offset(k, mn):
        return sw((mn // atom_elems) * next_atom + (k // ATOM_ROWS) * next_k_group + (k % ATOM_ROWS) * row_bytes
                  + (mn % atom_elems) * elem_bytes)

    return Layout(f"MN-major, {mode} swizzle ({m.notation} on bytes)", offset, elem_bytes, mn_elems)


def operand_layout(mode: str, shape: tuple[int, int], elem_bytes: int = 2, lbo: int | None = None,
                   sbo: int | None = None, major: str = "K") -> Layout:
    """The canonical layout of a tile of ``shape`` as it lies: K-major (rows of M or N, k) by
    kmajor_layout, MN-major (rows of K, m or n) by mnmajor_layout."""
    _check_major(major)
    rows, cols = shape
    if major == "MN":
        return mnmajor_layout(mode, cols, rows, elem_bytes, lbo, sbo)
    return kmajor_layout(mode, rows, cols, elem_bytes, lbo, sbo)


def smem_image(mode: str, matrix, elem_bytes: int = 2, lbo: int | None = None,
               sbo: int | None = None, major: str = "K") -> np.ndarray:
    """The bytes a tile occupies in shared memory, as uint8: ``matrix`` (values of one ``elem_bytes``
    wide numpy dtype, e.g. float16; as it lies: (rows, k) K-major, (k, columns) MN-major) placed by
    operand_layout, zeros elsewhere."""
    matrix = np.asarray(matrix)
    if matrix.ndim != 2 or matrix.dtype.itemsize != elem_bytes:
        raise ValueError(f"expected a 2-D matrix of {elem_bytes}-byte elements, got shape {matrix.shape} "
                         f"of {matrix.dtype}")
    layout = operand_layout(mode, matrix.shape, elem_bytes, lbo, sbo, major)
    r, k = np.meshgrid(np.arange(matrix.shape[0]), np.arange(matrix.shape[1]), indexing="ij")
    offsets = layout(r, k)
    image = np.zeros(int(offsets.max()) + elem_bytes, dtype=np.uint8)
    image.view(matrix.dtype)[offsets // elem_bytes] = matrix
    return image


# ---------------------------------------------------------------------------------------------
# The 64-bit shared-memory matrix descriptor of wgmma: (first bit, bits, stored as value >> shift).

DESCRIPTOR_FIELDS = {
    "start_address": (0, 14, 4),
    "leading_byte_offset": (16, 14, 4),
    "stride_byte_offset": (32, 14, 4),
    "base_offset": (49, 3, 0),
    "swizzle": (62, 2, 0),
}
_MODE_BY_CODE = {m.descriptor_code: m.name for m in SWIZZLE_MODES.values()}


@dataclass(frozen=True)
class MatrixDescriptor:
    """A wgmma shared-memory matrix descriptor, its fields in bytes (the encoding drops their low 4
    bits). base_offset: 0 when the atoms start on their own alignment (the canonical case)."""

    start_address: int
    leading_byte_offset: int
    stride_byte_offset: int
    swizzle: str = "none"
    base_offset: int = 0

    def __post_init__(self):
        swizzle_mode(self.swizzle)
        _check_bytes(start_address=self.start_address, leading_byte_offset=self.leading_byte_offset,
                     stride_byte_offset=self.stride_byte_offset)
        for name in ("start_address", "leading_byte_offset", "stride_byte_offset"):
            first, bits, shift = DESCRIPTOR_FIELDS[name]
            if getattr(self, name) >> shift >= 1 << bits:
                raise ValueError(f"{name} {getattr(self, name)} does not fit the descriptor's {bits} bits "
                                 f"(bytes >> 4): at most {((1 << bits) - 1) << shift}")
        if not 0 <= self.base_offset < 8:
            raise ValueError(f"base_offset is 3 bits (0..7), got {self.base_offset!r}")

    def _values(self) -> dict[str, int]:
        return {"start_address": self.start_address, "leading_byte_offset": self.leading_byte_offset,
                "stride_byte_offset": self.stride_byte_offset, "base_offset": self.base_offset,
                "swizzle": SWIZZLE_MODES[self.swizzle].descriptor_code}

    def encode(self) -> int:
        """The descriptor as the 64-bit integer wgmma takes."""
        word = 0
        for name, value in self._values().items():
            first, _, shift = DESCRIPTOR_FIELDS[name]
            word |= (value >> shift) << first
        return word

    @classmethod
    def decode(cls, word: int) -> "MatrixDescriptor":
        """The fields of a 64-bit descriptor; ValueError if a bit outside every field is set."""
        if not 0 <= word < 1 << 64:
            raise ValueError(f"a descriptor is a 64-bit unsigned integer, got {word!r}")
        used = sum(((1 << bits) - 1) << first for first, bits, _ in DESCRIPTOR_FIELDS.values())
        if word & ~used:
            raise ValueError(f"descriptor {word:#018x} sets bits outside its fields: {word & ~used:#018x}")
        raw = {name: (word >> first) & ((1 << bits) - 1) for name, (first, bits, _) in DESCRIPTOR_FIELDS.items()}
        values = {name: raw[name] << DESCRIPTOR_FIELDS[name][2] for name in raw}
        values["swizzle"] = _MODE_BY_CODE[raw["swizzle"]]
        return cls(**values)

    def table(self) -> Table:
        """Each field: its bits, the value in bytes (or the mode), and what is stored."""
        rows = []
        for name, value in self._values().items():
            first, bits, shift = DESCRIPTOR_FIELDS[name]
            shown = self.swizzle if name == "swizzle" else value
            rows.append([name, f"{first}-{first + bits - 1}", shown, value >> shift])
        return Table(["Field", "Bits", "Value", "Stored"], rows,
                     caption=f"descriptor {self.encode():#018x}")


def descriptor(mode: str, rows: int, k_elems: int, start_address: int = 0, elem_bytes: int = 2,
               major: str = "K") -> MatrixDescriptor:
    """The descriptor of a canonical ``rows`` (M or N) x ``k_elems`` tile (canonical_strides) at
    ``start_address``, K-major or MN-major."""
    lbo, sbo = canonical_strides(mode, rows, k_elems, elem_bytes, major)
    m = swizzle_mode(mode)
    if start_address % m.atom_bytes and m.name != "none":
        raise ValueError(f"a {mode} tile starts on a multiple of {m.atom_bytes} bytes (its atom), "
                         f"got {start_address}")
    return MatrixDescriptor(start_address, lbo, sbo, mode)


def swizzle_modes_table() -> Table:
    """Per mode: atom shape, the XOR in swizzle notation, the descriptor code and the TMA enumerator."""
    return Table(["Mode", "Atom (rows x bytes)", "Swizzle on bytes", "Descriptor bits 62-63", "TMA swizzle"],
                 [[m.name, f"8 x {m.width}", m.notation, m.descriptor_code, m.tma_name]
                  for m in SWIZZLE_MODES.values()])


def swizzle_mode_of_width(width: int) -> SwizzleMode:
    """The mode that swizzles over ``width`` bytes: 0 (not swizzled), 32, 64 or 128."""
    by_width = {0: SWIZZLE_MODES["none"], **{m.width: m for m in SWIZZLE_MODES.values() if m.name != "none"}}
    if width not in by_width:
        raise ValueError(f"a swizzle spans 0 (none), 32, 64 or 128 bytes, got {width!r}")
    return by_width[width]


def kilobyte_tile(mode: str, elem_bytes: int = 2) -> tuple[int, int]:
    """(rows, k_elems) of the K-major tile that fills the first 1024 bytes of ``mode`` densely: one
    atom row per tile row, as many atoms as fit (none: 8 rows of 8 core matrices side by side)."""
    m = swizzle_mode(mode)
    row_bytes = 8 * CHUNK_BYTES if m.name == "none" else m.width
    return 1024 // row_bytes, row_bytes // elem_bytes


def cute_notation(mode: str, rows: int, k_elems: int, elem_bytes: int = 2) -> str:
    """kmajor_layout (default strides) in the explorer's CuTe notation (tcgemm.smem.notation), strides in
    elements and the swizzle on bytes: none ((8,m),(8,k)):((8,SBO),(1,LBO)), swizzled
    Sw<B,4,3> o ((8,m),k):((width,SBO),1), as the PTX ISA writes the canonical layouts."""
    m = swizzle_mode(mode)
    lbo, sbo = (x // elem_bytes for x in canonical_strides(mode, rows, k_elems, elem_bytes))
    chunk_elems = CHUNK_BYTES // elem_bytes
    if m.name == "none":
        return (f"((8,{rows // ATOM_ROWS}),({chunk_elems},{k_elems // chunk_elems})):"
                f"(({chunk_elems},{sbo}),(1,{lbo}))")
    return f"{m.notation} o ((8,{rows // ATOM_ROWS}),{k_elems}):(({m.width // elem_bytes},{sbo}),1)"
