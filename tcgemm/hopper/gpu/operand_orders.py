"""Kernel 5.7, the final Hopper kernel, in every memory-order case of A and B: checked on odd shapes
against the fp32 reference, and timed against cuBLAS and Kernel 5.6 (both operands K-major). The
checks take another kernel of either order (Kernel 5.8) by its key.

`python -m tcgemm.hopper.gpu.operand_orders CASE M N K [OFFSET [KEY [IN,OUT]]]` runs one checked call (the
compute-sanitizer tests), e.g. `python -m tcgemm.hopper.gpu.operand_orders "A^T B" 129 257 75 3 k5.8`, or
`... "A B^T" 129 264 75 0 k5.9 bfloat16,bfloat16` for Kernel 5.9's bf16 build, `... k5.11/64 ...` for
Kernel 5.11's 64-wide tiles.
"""
from __future__ import annotations

import sys

import numpy as np

from tcgemm.engine.catalog import WMMA_CASES
from tcgemm.engine.kernel_types import ORDER_NAMES, GemmKernel
from tcgemm.engine.accuracy import verdict
from tcgemm.engine.report import size_label
from tcgemm.table import Column, Table
from tcgemm.engine.gpu import cublas
from tcgemm.engine.gpu.device import require_gpu
from tcgemm.engine.gpu.gemm import case_operands, check_output, for_this_gpu, kernel_spec, prepare, reference
from tcgemm.engine.gpu.matmul import order_table

KEY = "k5.7"
# The cases in the order the tables list them: K-major first (A row-major, B column-major).
CASES = ("A B^T", "A B", "A^T B^T", "A^T B")
SHAPES = ((129, 257, 75), (1000, 1003, 1007), (1, 4096, 4096))


def spec_for(case: str, key: str = KEY) -> GemmKernel:
    """Kernel `key` (default 5.7) compiled for the memory orders of `case` (tcgemm.engine.catalog.WMMA_CASES)."""
    return for_this_gpu(kernel_spec(key)).with_orders(*WMMA_CASES[case])


def check_kernel_order(case: str, M: int, N: int, K: int, offset: int = 0, seed: int | None = None, key: str = KEY,
                       dtypes: tuple[str, str] | None = None, tile_n: int | None = None,
                       cluster: tuple[int, int] | None = None):
    """Kernel `key` (default 5.7) on fresh random operands of `case` (each a view `offset` elements into
    its allocation), into a NaN-filled C, against the fp32 product (tcgemm.engine.accuracy's tolerance, with
    a 16-bit C's last rounding). `dtypes`: the (input, output) dtypes of a kernel that takes several (5.9);
    `tile_n`: the tile width of a kernel that has several (5.11); `cluster`: the cluster's blocks along M
    and N, of a kernel that has several shapes (5.14)."""
    spec = spec_for(case, key)
    spec = spec.with_dtypes(*dtypes) if dtypes else spec
    spec = spec.with_tile_n(tile_n) if tile_n else spec
    spec = spec.with_cluster(*cluster) if cluster else spec
    A, B, _ = case_operands(case, M, N, K, dtype=spec.in_dtype, offset=offset, seed=seed)
    run = prepare(spec, A, B)
    run()
    return check_output(run.C, reference(A, B), accumulator=spec.accumulator)


def check_kernel_orders(shapes=SHAPES, offsets=(0, 3), key: str = KEY) -> Table:
    """check of Kernel `key` in every case and shape, on arrays that start 16-byte aligned and on views
    that do not: one row per case and shape, one column per offset."""
    rows = [[ORDER_NAMES[WMMA_CASES[case][0]], ORDER_NAMES[WMMA_CASES[case][1]], size_label(*mnk)] +
            [verdict(check_kernel_order(case, *mnk, offset, key=key)) for offset in offsets]
            for case in CASES for mnk in shapes]
    return Table(["A", "B", "M×N×K"] + [Column(f"offset {offset}", verdict=True) for offset in offsets],
                 rows, collapse=True, caption=f"{kernel_spec(key).title}: C = A @ B on fresh random inputs",
                 notes=["offset n: each array starts n elements into its allocation (3: not 16-byte aligned, so "
                        "the launcher copies it into an aligned buffer first, as it does a column-major A "
                        "whose M, or a row-major B whose N, is not a multiple of 8)",
                        "relative error against the fp32 product, within the tolerance of tcgemm.engine.accuracy"])


def order_timings(M: int = 4096, N: int = 4096, K: int = 4096, repeats: int = 2) -> Table:
    """cuBLAS, Kernel 5.6 and Kernel 5.7 in each memory-order case at one size, each checked on its
    output, then timed (median, L2 flushed), the whole list `repeats` times in turn; % of K-major: speed
    relative to Kernel 5.7 with A row-major and B column-major in the same round."""
    cupy = require_gpu()
    A, B, _ = case_operands("A B^T", M, N, K)
    D = cupy.empty((M, N), dtype=np.float32)
    k56 = prepare(for_this_gpu(kernel_spec("k5.6")), A, B)
    runs = [(("cuBLAS (cublasGemmEx)",), "A B^T", cublas.prepare_gemm_ex(A, B, D), A, B, D),
            (("Kernel 5.6",), "A B^T", k56, A, B, k56.C)]
    for case in CASES:
        A, B, _ = case_operands(case, M, N, K)
        run = prepare(spec_for(case), A, B)
        runs.append((("Kernel 5.7",), case, run, A, B, run.C))
    return order_table(runs, ["Kernel"], M, N, K, repeats, base=2, operation="C = A @ B",
                       note="% of K-major: speed relative to Kernel 5.7 with A row-major and B column-major "
                            "(both operands K-major: no transposed wgmma operand) in the same run")


def variant_key(text: str) -> tuple[str, int | None, tuple[int, int] | None]:
    """A kernel key with its tile width and cluster shape where it has several: "k5.11/64" is Kernel 5.11
    at 64 columns, "k5.14/64/1x2" Kernel 5.14 at 64 columns in clusters of 1 x 2 blocks."""
    key, *rest = text.split("/")
    width = int(rest[0]) if rest else None
    cluster = tuple(int(n) for n in rest[1].split("x")) if len(rest) > 1 else None
    return key, width, cluster


def _main(argv) -> None:
    case, M, N, K = argv[0], *(int(x) for x in argv[1:4])
    offset = int(argv[4]) if len(argv) > 4 else 0
    key, width, cluster = variant_key(argv[5] if len(argv) > 5 else KEY)
    dtypes = tuple(argv[6].split(",")) if len(argv) > 6 else None
    result = check_kernel_order(case, M, N, K, offset, key=key, dtypes=dtypes, tile_n=width, cluster=cluster)
    print(key, case, M, N, K, offset, dtypes or "", result)
    if not result.passed:
        raise SystemExit(1)


if __name__ == "__main__":
    _main(sys.argv[1:])
