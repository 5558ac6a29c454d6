"""Is the tile TMA writes the tile Kernel 4.4's ldmatrix reads? TMA's swizzle (tcgemm.canonical)
against Kernel 4.4's permuted chunks (tcgemm.smem.kernel_smem), element by element, for the Hopper
chapter. Pure module."""
from __future__ import annotations

import numpy as np

from tcgemm.canonical import kmajor_layout, swizzle_mode_of_width
from tcgemm.engine.catalog import configured
from tcgemm.engine.kernel_types import ITEMSIZE
from tcgemm.smem.kernel_smem import block_step, count, permuted_chunk
from tcgemm.table import Column, Table


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
