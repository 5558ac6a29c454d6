"""TMA tensor maps as data. Pure module: what the driver's cuTensorMapEncodeTiled is asked for, checked
against the driver's documented limits before any GPU is touched.

A tensor map describes a matrix in global memory (its shape and row stride) and the box one copy
brings into shared memory (box_rows x box_cols elements, the box's rows packed one after another),
with the swizzle the copy applies on the way (tcgemm.canonical.SWIZZLE_MODES, by its width in
bytes here: 0, 32, 64 or 128); a box row may then be that many bytes at most.
tcgemm.engine.gpu.tma asks the driver for the 128 bytes of the map; the kernel takes it as a
`const __grid_constant__ TensorMap` (kernels/ptx.cuh).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcgemm.canonical import SWIZZLE_MODES, mnmajor_layout, swizzle_mode_of_width
from tcgemm.engine.catalog import configured
from tcgemm.engine.kernel_types import ITEMSIZE, ORDER_NAMES, GemmKernel
from tcgemm.errors import OperandError
from tcgemm.table import Column, Table

# The driver's enums (cuda.h), by the names this module uses.
DATA_TYPE = {"float16": 6, "float32": 7, "bfloat16": 9}        # CU_TENSOR_MAP_DATA_TYPE_FLOAT16, ...
INTERLEAVE_NONE = 0                                              # CU_TENSOR_MAP_INTERLEAVE_NONE
L2_PROMOTION_256B = 3                                            # CU_TENSOR_MAP_L2_PROMOTION_L2_256B
OOB_FILL_ZEROS = 0                                               # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE

MAP_BYTES = 128          # sizeof(CUtensorMap)
MAX_BOX = 256            # elements per box dimension
GLOBAL_ALIGN = 16        # bytes: the matrix's address and its row stride
MAX_STRIDE = 2**40       # bytes
MAX_DIM = 2**32          # elements
SWIZZLE_ROW = 128        # bytes: the widest swizzle's row, the most a swizzled box row may hold


@dataclass(frozen=True)
class TileMap:
    """A rows x cols matrix of `dtype`, row-major with `row_stride` bytes from row to row, copied in
    boxes of box_rows x box_cols elements, swizzled over `swizzle` bytes (0: not swizzled)."""

    dtype: str
    rows: int
    cols: int
    row_stride: int
    box_rows: int
    box_cols: int
    swizzle: int

    @property
    def box_bytes(self) -> int:
        return self.box_rows * self.box_cols * ITEMSIZE[self.dtype]

    def check(self, address: int = 0) -> "TileMap":
        """Raise OperandError naming the first limit of cuTensorMapEncodeTiled this map breaks (with the
        matrix at `address`); return the map."""
        if self.dtype not in DATA_TYPE:
            raise OperandError(f"TMA copies {', '.join(DATA_TYPE)} here, got {self.dtype}")
        widths = sorted({0} | {m.width for m in SWIZZLE_MODES.values() if m.name != "none"})
        if self.swizzle not in widths:
            raise OperandError(f"a TMA swizzle spans {', '.join(map(str, widths))} bytes, got {self.swizzle}")
        row_bytes = self.box_cols * ITEMSIZE[self.dtype]
        for name, size, limit in (("rows", self.rows, MAX_DIM), ("cols", self.cols, MAX_DIM),
                                  ("box_rows", self.box_rows, MAX_BOX), ("box_cols", self.box_cols, MAX_BOX)):
            if not 0 < size <= limit:
                raise OperandError(f"a tensor map's {name} must be 1 to {limit}, got {size}")
        if row_bytes % 16:
            raise OperandError(f"a box row must be a multiple of 16 bytes, got {self.box_cols} x "
                               f"{ITEMSIZE[self.dtype]} = {row_bytes}")
        if self.swizzle and row_bytes > self.swizzle:
            raise OperandError(f"with the {self.swizzle}-byte swizzle a box row may have {self.swizzle} bytes "
                               f"at most, got {row_bytes}")
        if address % GLOBAL_ALIGN:
            raise OperandError(f"TMA reads a matrix that starts on a multiple of {GLOBAL_ALIGN} bytes, got "
                               f"address {address:#x}: pass a copy (cupy.array)")
        if self.row_stride % GLOBAL_ALIGN or not 0 < self.row_stride < MAX_STRIDE:
            raise OperandError(f"TMA needs rows a multiple of {GLOBAL_ALIGN} bytes apart (below 2**40), got "
                               f"{self.row_stride} bytes: with fp16 the contiguous dimension must be a multiple of 8")
        return self

    def encode_args(self, address: int) -> tuple:
        """cuTensorMapEncodeTiled's arguments after the map itself, innermost dimension first."""
        self.check(address)
        return (DATA_TYPE[self.dtype], 2, address, (self.cols, self.rows), (self.row_stride,),
                (self.box_cols, self.box_rows), (1, 1), INTERLEAVE_NONE, swizzle_mode_of_width(self.swizzle).tma_value,
                L2_PROMOTION_256B, OOB_FILL_ZEROS)


def mn_box(dtype: str) -> int:
    """Elements of M or N in one box of an MN-major operand: one 128-byte swizzle row (fp16: 64)."""
    return SWIZZLE_ROW // ITEMSIZE[dtype]


def operand_map(spec: GemmKernel, operand: str, mn: int, K: int, ld: int | None = None) -> TileMap:
    """The map of operand A (mn = M) or B (mn = N) in the kernel's memory order for it, `ld` elements
    from row to row (default: dense). K-major (A row-major, B column-major): mn rows of K, one box per
    stage's tile, a box row of tile_k elements swizzled over its own width (64 or 128 bytes). MN-major
    (A column-major, B row-major): K rows of mn, boxes of tile_k rows by mn_box elements swizzled over
    128 bytes, so each 8 rows of a box are one canonical MN-major atom (tcgemm.canonical), and the
    kernel copies tile / mn_box of them. In a cluster (Kernel 5.5 on) each block copies its share of B's
    tile (1 / the blocks along M) and multicasts it to them, or where that share is not whole MN-major
    boxes (Kernel 5.11's 64 and 192 columns), the blocks copy B's boxes in turn; likewise A's tile among
    the blocks along N (Kernel 5.14; Kernel 5.15's 64 rows, one box, in turn)."""
    tile = spec.tile_m // spec.cluster_n if operand == "A" else spec.tile_n // spec.cluster_m
    size = ITEMSIZE[spec.in_dtype]
    if not spec.mn_major(operand):
        row = spec.tile_k * size
        return TileMap(spec.in_dtype, mn, K, (K if ld is None else ld) * size, tile, spec.tile_k, row)
    box = mn_box(spec.in_dtype)
    if tile % box:                          # the blocks copy whole boxes of the tile in turn
        tile = spec.tile_m if operand == "A" else spec.tile_n
    if tile < box:
        raise ValueError(f"{spec.title}: an MN-major {operand} tile of {tile} is narrower than a box of {box}; "
                         f"its {'A column' if operand == 'A' else 'B row'}-major operand needs wider tiles")
    if tile % box:
        raise ValueError(f"{spec.title}: an MN-major tile of {tile} is not whole boxes of {box}")
    return TileMap(spec.in_dtype, K, mn, (mn if ld is None else ld) * size, spec.tile_k, box, SWIZZLE_ROW)


def gemm_maps(spec: GemmKernel, M: int, N: int, K: int, lda: int | None = None,
              ldb: int | None = None) -> tuple[TileMap, TileMap]:
    """The maps of a TMA kernel's operands (operand_map), with leading dimensions lda and ldb in
    elements (default: dense)."""
    return operand_map(spec, "A", M, K, lda), operand_map(spec, "B", N, K, ldb)


# Kernel 5.6's boxes of C: a consumer warpgroup's 64 rows by 32 fp32, one row of the 128-byte swizzle.
C_BOX_ROWS, C_BOX_COLS = 64, 32


def c_map(spec: GemmKernel, M: int, N: int) -> TileMap | None:
    """The map of C (M rows of N, row-major) of a kernel that stores C by TMA (Kernel 5.6), in boxes of
    C_BOX_ROWS rows by one 128-byte swizzle row (C_BOX_COLS fp32, twice as many 16-bit values); None where
    C's rows are not a multiple of 16 bytes apart (N % 4 != 0 in fp32, N % 8 != 0 in 16 bits), which TMA
    cannot address: the kernel then stores C itself."""
    if not spec.signature.stores_c_by_tma:
        raise ValueError(f"{spec.title} stores C without TMA")
    row_stride = N * ITEMSIZE[spec.out_dtype]
    if row_stride % GLOBAL_ALIGN:
        return None
    box_cols = SWIZZLE_ROW // ITEMSIZE[spec.out_dtype]      # Kernel 5.9's 16-bit C: 64 columns
    return TileMap(spec.out_dtype, M, N, row_stride, C_BOX_ROWS, box_cols, SWIZZLE_ROW)


def c_staging_offsets(lanes: int = 128) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where Kernel 5.6's store_tile_tma puts its accumulators in one box buffer, as the kernel computes
    it: for thread t of the warpgroup and its pair j (0-3 along the box's 32 columns) and half h, the
    row r = 16 warp + lane / 4 + 8 h, the 16-byte chunk q = 2 j + (lane % 4) / 2, and the byte address
    128 r + 16 (q ^ r % 8) + 8 (lane % 2). Returns (rows, cols, byte offsets), shaped (threads, j, h);
    the pair's second float is 4 bytes on."""
    t, j, h = np.meshgrid(np.arange(lanes), np.arange(C_BOX_COLS // 8), np.arange(2), indexing="ij")
    warp, lane = t // 32, t % 32
    r, q = 16 * warp + lane // 4 + 8 * h, 2 * j + lane % 4 // 2
    return r, 8 * j + 2 * (lane % 4), 128 * r + 16 * (q ^ r % 8) + 8 * (lane % 2)


def box_offsets(tile_map: TileMap, boxes: int, rows, cols) -> np.ndarray:
    """Where TMA puts element (row, col) of `boxes` boxes copied side by side along the map's columns
    into consecutive box-sized pieces of shared memory (as Kernel 5.7 copies an MN-major tile): byte
    offsets from the first box, swizzled over the map's swizzle width as the copy does."""
    rows, cols = np.asarray(rows), np.asarray(cols)
    if np.any(cols >= boxes * tile_map.box_cols) or np.any(rows >= tile_map.box_rows):
        raise ValueError(f"(row, col) outside {boxes} boxes of {tile_map.box_rows} x {tile_map.box_cols}")
    size = ITEMSIZE[tile_map.dtype]
    row_bytes = tile_map.box_cols * size
    linear = cols // tile_map.box_cols * tile_map.box_bytes + rows * row_bytes + cols % tile_map.box_cols * size
    return swizzle_mode_of_width(tile_map.swizzle).swizzle(linear)


def boxes_as_canonical(spec: GemmKernel, operand: str) -> tuple[bool, int, int]:
    """Whether the boxes TMA writes for one consumer's share of an MN-major operand tile (A: wgmma's
    64 rows; B: the whole tile) are the canonical MN-major layout at the (LBO, SBO) returned: the
    descriptor fields Kernel 5.7 gives wgmma."""
    if not spec.mn_major(operand):
        raise ValueError(f"{spec.variant or spec.title} reads {operand} K-major")
    extent = 64 if operand == "A" else spec.tile_n
    tile_map = operand_map(spec, operand, extent, spec.tile_k)
    boxes = extent // tile_map.box_cols
    lbo, sbo = tile_map.box_bytes, 8 * SWIZZLE_ROW
    k, mn = np.meshgrid(np.arange(spec.tile_k), np.arange(extent), indexing="ij")
    canonical = mnmajor_layout("128B", extent, spec.tile_k, ITEMSIZE[spec.in_dtype], lbo, sbo)(k, mn)
    return bool(np.array_equal(box_offsets(tile_map, boxes, k, mn), canonical)), lbo, sbo


def mn_major_table(key: str = "k5.7") -> Table:
    """Kernel `key`'s MN-major operands (A column-major, B row-major) as TMA copies them: the box, how
    many per stage's tile, and whether those boxes are the canonical MN-major layout at the descriptor's
    LBO and SBO (boxes_as_canonical)."""
    base = configured(key, "sm_90")
    rows = []
    for operand, orders, extent in (("A", ("F", "F"), base.tile_m), ("B", ("C", "C"), base.tile_n)):
        spec = base.with_orders(*orders)
        tile_map = operand_map(spec, operand, extent, spec.tile_k)
        same, lbo, sbo = boxes_as_canonical(spec, operand)
        rows.append([operand, f"{ORDER_NAMES[orders[operand == 'B']]}", f"{tile_map.box_rows} of K × {tile_map.box_cols} of {'M' if operand == 'A' else 'N'}",
                     extent // tile_map.box_cols, lbo, sbo, "yes" if same else "NO"])
    return Table(["Operand", "Order", "Box", "Boxes per tile", Column("LBO (bytes)"), Column("SBO (bytes)"),
                  "= MN-major layout"], rows,
                 caption=f"{base.title}: MN-major operands, copied by TMA in the 128B swizzle")
