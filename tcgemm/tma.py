"""TMA tensor maps as data. Pure module: what the driver's cuTensorMapEncodeTiled is asked for, checked
against the driver's documented limits before any GPU is touched.

A tensor map describes a matrix in global memory (its shape and row stride) and the box one copy
brings into shared memory (box_rows x box_cols elements, the box's rows packed one after another),
with the swizzle the copy applies on the way (tcgemm.smem.canonical.SWIZZLE_MODES, by its width in
bytes here: 0, 32, 64 or 128); a box row may then be that many bytes at most.
tcgemm.gpu.tma asks the driver for the 128 bytes of the map; the kernel takes it as a
`const __grid_constant__ TensorMap` (kernels/ptx.cuh).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tcgemm.catalog import ITEMSIZE, GemmKernel, configured
from tcgemm.errors import OperandError
from tcgemm.smem.canonical import SWIZZLE_MODES, kmajor_layout, swizzle_mode_of_width
from tcgemm.smem.kernel_smem import block_step, count, permuted_chunk
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


def gemm_maps(spec: GemmKernel, M: int, N: int, K: int) -> tuple[TileMap, TileMap]:
    """The maps of a TMA kernel's operands: A as M rows of K, B (column-major) as N rows of K, each box
    one stage's tile, a tile row of tile_k elements swizzled over its own width (64 or 128 bytes). In a
    cluster (Kernel 5.5) each block copies 1/cluster of B's tile and multicasts it to all."""
    row = spec.tile_k * ITEMSIZE[spec.in_dtype]
    stride = K * ITEMSIZE[spec.in_dtype]
    return (TileMap(spec.in_dtype, M, K, stride, spec.tile_m, spec.tile_k, row),
            TileMap(spec.in_dtype, N, K, stride, spec.tile_n // spec.cluster, spec.tile_k, row))


def swizzled_as_permuted_chunk(rows: int, tile_k: int, width: int | None = None) -> bool:
    """Whether TMA's swizzle over `width` bytes (default: a tile row's own width, 2 tile_k bytes, as
    Kernel 5.0's tensor maps ask) puts every fp16 element of a rows x tile_k tile where Kernel 4.4's
    permuted_chunk puts it, which is what Kernel 5.0's ldmatrix addressing assumes. Element (r, k) is
    in chunk k // 8 of row r, 2 (k % 8) bytes in."""
    mode = swizzle_mode_of_width(tile_k * ITEMSIZE["float16"] if width is None else width)
    r, k = np.meshgrid(np.arange(rows), np.arange(tile_k), indexing="ij")
    written = kmajor_layout(mode.name, rows, tile_k)(r, k)
    read = permuted_chunk(r, k // 8, tile_k // 8) * 16 + (k % 8) * ITEMSIZE["float16"]
    return bool(np.array_equal(written, read))


def tile_table(key: str = "k5.0", arch: str = "sm_90") -> Table:
    """Kernel `key`'s tiles as TMA writes them (configured for `arch`): the swizzle, whether it is Kernel
    4.4's permutation, and the bank model of one block's ldmatrix reads in one K step (tcgemm.smem)."""
    spec = configured(key, arch)
    counts = {array: count(i for i in block_step(key, arch=arch) if i.array == array) for array in ("As", "Bs")}
    rows = []
    for operand, array, tile_rows in (("A", "As", spec.tile_m), ("B", "Bs", spec.tile_n)):
        mode = swizzle_mode_of_width(spec.tile_k * ITEMSIZE[spec.in_dtype])
        ldsm = counts[array].ldsm
        rows.append([operand, f"{tile_rows} x {spec.tile_k}", f"{mode.name} {mode.notation}",
                     "yes" if swizzled_as_permuted_chunk(tile_rows, spec.tile_k) else "NO",
                     ldsm.requests, ldsm.wavefronts, ldsm.conflicts])
    return Table([Column("Operand"), Column("Tile"), Column("TMA swizzle"), Column("= 4.4's XOR"),
                  Column("ldmatrix"), Column("Wavefronts"), Column("Conflicts")], rows,
                 caption=f"{spec.title} ({spec.variant}): one block, one K step, bank model")
