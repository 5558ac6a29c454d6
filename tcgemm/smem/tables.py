"""The bank-conflict chapter's tables of the shared-memory model (tcgemm.smem.kernel_smem): bytes and
conflicts per mma of a launch, and one block's K step in each memory-order case; and, for the Hopper
chapter, ldmatrix's bank conflicts in each swizzle mode of TMA and wgmma. Pure module."""
from __future__ import annotations

import numpy as np

from tcgemm.canonical import ATOM_ROWS, CHUNK_BYTES, SWIZZLE_MODES, kilobyte_tile, kmajor_layout
from tcgemm.engine.catalog import WMMA_CASES, configured
from tcgemm.engine.kernel_types import MMA_ORDERS, ORDER_NAMES
from tcgemm.engine.report import size_label
from tcgemm.hw import mma_count
from tcgemm.layouts import Layout, row_major
from tcgemm.smem.banks import analysis_table, ldmatrix_access
from tcgemm.smem.kernel_smem import block_step, count, predict
from tcgemm.table import Column, Table


def smem_traffic_table(keys, M: int, N: int, K: int, arch: str) -> Table:
    """tcgemm.smem.kernel_smem.predict per kernel, per mma of the launch: bytes read by ldmatrix
    (128 per wavefront), its bank conflicts, and bytes stored by the copies into shared memory."""
    mmas = mma_count(M, N, K)
    rows = []
    for key in keys:
        counts = predict(key, M, N, K, arch=arch)
        rows.append([configured(key, arch).title, counts.ldsm.wavefronts * 128 / mmas, counts.ldsm.conflicts,
                     counts.st.wavefronts * 128 / mmas])
    return Table([Column("Kernel"), Column("ldmatrix bytes per mma", ".0f"), Column("ldmatrix bank conflicts", ","),
                  Column("copy bytes per mma", ".0f")], rows,
                 caption=f"Shared memory at {size_label(M, N, K)}, {arch} configuration")


def order_smem_table(key: str = "k4.7") -> Table:
    """The bank model (tcgemm.smem.kernel_smem) of one block's K step of `key` in each memory-order
    case of A and B: copies into shared memory and ldmatrix (.trans for an MN-major operand), each
    with its wavefronts and bank conflicts."""
    rows = []
    for case, orders in WMMA_CASES.items():
        counts = count(block_step(key, orders=orders))
        trans = [name for name, order, k_major in zip("AB", orders, MMA_ORDERS) if order != k_major]
        rows.append([case, ORDER_NAMES[orders[0]], ORDER_NAMES[orders[1]], " and ".join(trans) or "none",
                     counts.st.wavefronts, counts.st.conflicts, counts.ldsm.wavefronts, counts.ldsm.conflicts])
    return Table([Column("Case"), Column("A"), Column("B"), Column("ldmatrix.trans for"),
                  Column("copy wavefronts"), Column("copy conflicts"), Column("ldmatrix wavefronts"),
                  Column("ldmatrix conflicts")], rows,
                 caption=f"{configured(key).title}: shared memory of one block in one K step (bank model)")


def ldmatrix_table() -> Table:
    """Bank conflicts of an ldmatrix.x4 in each swizzle mode's kilobyte_tile (tcgemm.canonical), after
    the same tile's first 8 rows row-major in 128-byte rows: its four 8-address phases read 8 rows of one
    16-byte chunk each (chunks 0, 1, ... of rows 0-7, then of rows 8-15), the accesses every swizzle is
    built for."""
    def phases(layout: Layout, rows: int, chunks: int):
        order = [(g, c) for g in range(0, rows, ATOM_ROWS) for c in range(chunks)][:4]
        r = np.concatenate([np.arange(g, g + ATOM_ROWS) for g, _ in order])
        k = np.concatenate([np.full(ATOM_ROWS, c * CHUNK_BYTES // 2) for _, c in order])
        return ldmatrix_access(layout, r, k)

    cases = {"row-major, 128-byte rows": phases(row_major(64, 2), 8, 8)}
    for m in SWIZZLE_MODES.values():
        rows, k_elems = kilobyte_tile(m.name)
        cases[f"{m.name} ({m.notation})"] = phases(kmajor_layout(m.name, rows, k_elems), rows, k_elems // 8)
    return analysis_table(cases)
