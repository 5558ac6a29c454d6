"""The bank-conflict chapter's tables of the shared-memory model (tcgemm.smem.kernel_smem): bytes and
conflicts per mma of a launch, and one block's K step in each memory-order case. Pure module."""
from __future__ import annotations

from tcgemm.engine.catalog import WMMA_CASES, configured
from tcgemm.engine.kernel_types import MMA_ORDERS, ORDER_NAMES
from tcgemm.engine.report import size_label
from tcgemm.hw import mma_count
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
