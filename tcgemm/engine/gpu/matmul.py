"""tcgemm.matmul: D = alpha * A @ B + beta * C on ordinary arrays, row- or column-major.

fp16 A and B run Kernel 4.7, the book's fastest mma.sync kernel compiled for their memory orders
(an operand that is not K-major is read with ldmatrix.trans), with its tile planned per problem here
(tcgemm.engine.plan.plan_kernel, for this GPU's shape) before the launcher (tcgemm.engine.gpu.gemm) is asked.
Nothing is copied unless an operand's rows are not 16-byte aligned (a leading dimension that is
not a multiple of 8, or a view starting between 16-byte boundaries): that operand is copied into
an aligned buffer on each call. int8 A and B run the WMMA IMMA kernel (exact int32 results), which
needs M, N and K multiples of 16: other shapes are zero-padded into buffers (copies) around it.

`python -m tcgemm.engine.gpu.matmul CASE M N K [TILE/SPLITS] [OFFSET]` runs one checked call (the
compute-sanitizer tests), e.g. `python -m tcgemm.engine.gpu.matmul "A B" 129 257 75 16x64/3 3`.
"""
from __future__ import annotations

import sys

import numpy as np

from tcgemm.engine.catalog import WMMA_CASES, WMMA_KERNELS
from tcgemm.engine.kernel_types import ORDER_NAMES
from tcgemm.errors import OperandError
from tcgemm.engine.plan import plan_kernel, tile_named
from tcgemm.engine.operands import check_device, memory_order
from tcgemm.fragments.gpu import wmma
from tcgemm.engine.gpu.compile import current_arch
from tcgemm.engine.gpu.device import require_gpu
from tcgemm.engine.gpu.gemm import (case_operands, check_output, for_this_gpu, gpu_shape, kernel_spec, poisoned, prepare,
                              prepared, reference, zero_padded)

DEFAULT_KERNELS = {"float16": "k4.7", "int8": "w1.1"}
WMMA_TILE = 16


def matmul(A, B, *, out=None, alpha=1, beta=0, C=None, kernel: str | None = None):
    """D = alpha * A @ B + beta * C, into `out` (or a new row-major array); returns D.

    A: (M, K) and B: (K, N), both float16 (D float32) or both int8 (D int32), each row-major or
    column-major (a .T view of a row-major array is column-major), with any offset. C: (M, N)
    row-major in D's dtype, read only where beta != 0; out=C updates C in place. `kernel`: a key of
    tcgemm.engine.catalog (default Kernel 4.7 for fp16, W1.1 for int8); a kernel that reads fixed memory
    orders refuses other ones. A repeated call with the same arrays and out reuses its checks."""
    cupy = require_gpu()
    device = cupy.cuda.runtime.getDevice()
    for name, x in (("A", A), ("B", B)):
        check_device(name, x, device)
    if A.dtype != B.dtype or str(A.dtype) not in DEFAULT_KERNELS:
        raise OperandError(f"A is {A.dtype} and B is {B.dtype}; tcgemm.matmul takes two float16 or two int8 "
                           f"matrices (convert with .astype('float16'))")
    key = kernel or DEFAULT_KERNELS[str(A.dtype)]
    if key in WMMA_KERNELS:
        return _padded_wmma(key, A, B, out, alpha, beta, C)
    spec = for_this_gpu(kernel_spec(key))
    if spec.either_order:
        spec = spec.with_orders(memory_order("A", A, spec.a_order), memory_order("B", B, spec.b_order))
    if spec.planned and A.ndim == B.ndim == 2 and min(A.shape + B.shape) > 0:   # else prepare says what is wrong
        spec = plan_kernel(spec, A.shape[0], B.shape[1], A.shape[1], gpu_shape(), current_arch())
    run = prepared(spec, A, B, out, alpha=alpha, beta=beta, addend=C)
    run()
    return run.C


def _padded(x, rows: int, cols: int, order: str):
    """x, or a zero-filled (rows, cols) array in x's memory order holding x in its top-left corner."""
    if x.shape == (rows, cols) and x.data.ptr % 32 == 0:
        return x
    padded, corner = zero_padded(x, rows, cols, order)
    corner[...] = x
    return padded


def _padded_wmma(key: str, A, B, out, alpha, beta, C):
    """The WMMA kernel on A, B (and C) zero-padded to whole 16 x 16 tiles and 32-byte aligned."""
    spec = WMMA_KERNELS[key]
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise OperandError(f"A @ B needs 2-D A (M, K) and B (K, N), got shapes {tuple(A.shape)} and {tuple(B.shape)}")
    (M, K), N = A.shape, B.shape[1]
    Mp, Np, Kp = (-(-size // WMMA_TILE) * WMMA_TILE for size in (M, N, K))
    Ap = _padded(A, Mp, Kp, memory_order("A", A))
    Bp = _padded(B, Kp, Np, memory_order("B", B))
    Cp = None
    if beta != 0:
        if C is None or C.shape != (M, N):
            raise OperandError(f"beta={beta} needs a C of shape ({M}, {N}) to scale")
        Cp = _padded(C, Mp, Np, "C")
    D = wmma.run_wmma(key, Ap, Bp, Cp, alpha=alpha, beta=beta)[:M, :N]
    if out is None:
        return require_gpu().ascontiguousarray(D)
    if out.shape != (M, N) or out.dtype != np.dtype(spec.out_dtype):
        raise OperandError(f"out must be a ({M}, {N}) {spec.out_dtype} array, got {tuple(out.shape)} {out.dtype}")
    out[...] = D
    return out



# ---- checks and timings -----------------------------------------------------------------------

def check_matmul_order(case: str, M: int, N: int, K: int, alpha=1, beta=0, *, dtype: str = "float16", offset: int = 0,
          tile: str | None = None, seed: int | None = None):
    """tcgemm.matmul on fresh random operands of `case`, into a poisoned output, against the
    reference (fp16: fp32 tolerance of tcgemm.engine.accuracy; int8: bit for bit). `tile` ("64x128/3"): force
    that tile and split of Kernel 4.7 instead of the planned one."""
    A, B, C = case_operands(case, M, N, K, dtype, offset, seed)
    out = poisoned((M, N), C.dtype)
    if tile is None:
        matmul(A, B, out=out, alpha=alpha, beta=beta, C=C)
    else:
        name, splits = tile.split("/")
        spec = kernel_spec("k4.7").with_orders(*WMMA_CASES[case]).with_tile(tile_named(name), int(splits))
        prepare(spec, A, B, out, alpha=alpha, beta=beta, addend=C)()
    return check_output(out, reference(A, B, C, alpha, beta))


def order_timings(M: int = 4096, N: int = 4096, K: int = 4096, repeats: int = 2) -> "Table":
    """cuBLAS, Kernel 4.6 (fixed orders) and tcgemm.matmul (Kernel 4.7) in each memory-order case at one
    size, each checked on its output, then timed (median, L2 flushed), the whole list `repeats` times
    in turn so that a drift of the clock shows as a spread; the table has each run's median.
    % of K-major: relative to Kernel 4.7 with A row-major and B column-major (the orders mma.sync
    reads), in the same round."""
    from tcgemm.engine.gpu import cublas

    cupy = require_gpu()
    runs = []
    A, B, _ = case_operands("A B^T", M, N, K)
    D = cupy.empty((M, N), dtype=np.float32)
    runs.append(("cuBLAS (cublasGemmEx)", "", "A B^T", cublas.prepare_gemm_ex(A, B, D), A, B, D))
    k46 = prepare(for_this_gpu(kernel_spec("k4.6")), A, B)
    runs.append(("Kernel 4.6", k46.spec.variant, "A B^T", k46, A, B, k46.C))
    for case in ("A B^T", "A B", "A^T B^T", "A^T B"):
        A, B, _ = case_operands(case, M, N, K)
        run = prepare(for_this_gpu(kernel_spec("k4.7")).with_orders(*WMMA_CASES[case]), A, B,
                      cupy.empty((M, N), dtype=np.float32))
        runs.append(("Kernel 4.7", run.spec.with_orders("C", "F").variant, case, run, A, B, run.C))
    # The alternative to ldmatrix.trans for a row-major B: copy it into column-major order, then run.
    A, B, _ = case_operands("A B", M, N, K)
    Bf = cupy.empty((K, N), dtype=np.float16, order="F")
    k_major = prepare(for_this_gpu(kernel_spec("k4.7")), A, Bf, cupy.empty((M, N), dtype=np.float32))

    def copy_then_run(B=B):
        Bf[...] = B
        k_major()
    runs.append(("Kernel 4.7 after copying B column-major", k_major.spec.variant, "A B", copy_then_run, A, B,
                 k_major.C))
    runs = [((name, tile), case, run, A, B, out) for name, tile, case, run, A, B, out in runs]
    return order_table(runs, ["Kernel", "Tile"], M, N, K, repeats, base=2, operation="D = A @ B",
                       note="% of K-major: speed relative to Kernel 4.7 with A row-major and B column-major in "
                            "the same run (both operands K-major: no ldmatrix.trans)")


def order_table(runs, label_columns, M: int, N: int, K: int, repeats: int, base: int, operation: str,
                note: str) -> "Table":
    """Each run (labels, case, launch, A, B, its output) checked on its output against the fp32
    product, then timed (median, L2 flushed), the whole list `repeats` times in turn so that a drift of
    the clock shows as a spread; one row per run and round, its speed relative to run `base` (note says
    which that is) in the same round."""
    from tcgemm.engine.report import size_label
    from tcgemm.table import Column, Table
    from tcgemm.engine.gpu.device import device_info
    from tcgemm.engine.gpu.timing import median_rounds

    verdicts = []
    for _, _, run, A, B, out in runs:
        run()
        verdicts.append(wmma.verdict(check_output(out, reference(A, B))))
    rows = []
    for round_, times in enumerate(median_rounds([run[2] for run in runs], repeats)):
        for (labels, case, *_), seconds, verdict in zip(runs, times, verdicts):
            a, b = (ORDER_NAMES[o] for o in WMMA_CASES[case])
            rows.append([round_ + 1, *labels, a, b, seconds * 1e6, 2 * M * N * K / seconds / 1e12,
                         100 * times[base] / seconds, verdict])
    return Table(["Run", *label_columns, "A", "B", Column("µs", ".0f"), Column("TFLOP/s", ".1f"),
                  Column("% of K-major", ".0f", unit="%"), Column("Check", detail=True, verdict=True)], rows,
                 caption=f"{device_info().name}, {operation}, fp16 in, fp32 out, at {size_label(M, N, K)}",
                 notes=[f"µs: median of timed runs, L2 flushed before each; the list runs {repeats} times in turn",
                        note])


def _short(result) -> str:
    from tcgemm.table import Verdict

    if not result.passed:
        return wmma.verdict(result)
    return Verdict.of(result, f"PASS ({result.rel_fro:.0e})" if hasattr(result, "rel_fro") else "PASS (exact)")


def check_matmul_orders(shapes=((129, 257, 75), (1000, 1003, 1007), (1, 4096, 4096)), offsets=(0, 3)) -> "Table":
    """tcgemm.matmul in every memory-order case, fp16 and int8, at odd shapes, on arrays that start
    16-byte aligned and on views that do not (offset in elements), with alpha = 2, beta = -1 and a C:
    one row per input type, case and shape, one column per offset."""
    from tcgemm.engine.report import size_label
    from tcgemm.table import Column, Table

    rows = [[dtype, case, size_label(*mnk)] + [_short(check_matmul_order(case, *mnk, 2, -1, dtype=dtype, offset=offset))
                                               for offset in offsets]
            for dtype in ("float16", "int8") for case in WMMA_CASES for mnk in shapes]
    return Table(["Inputs", "Case", "M×N×K"] + [Column(f"offset {offset}", verdict=True) for offset in offsets],
                 rows, collapse=True, caption="tcgemm.matmul: D = 2 A B - C on fresh random inputs",
                 notes=["offset n: each array starts n elements into its allocation (3: not 16-byte aligned, so "
                        "the launcher copies it into an aligned buffer first)",
                        "fp16: relative error, within the fp32 tolerance of tcgemm.engine.accuracy; int8: every int32 "
                        "equal to the exact result"])


def _main(argv) -> None:
    case, M, N, K = argv[0], *(int(x) for x in argv[1:4])
    tile = argv[4] if len(argv) > 4 and argv[4] != "planned" else None
    offset = int(argv[5]) if len(argv) > 5 else 0
    result = check_matmul_order(case, M, N, K, 2, -1, offset=offset, tile=tile)
    print(case, M, N, K, tile or "planned", offset, result)
    if not result.passed:
        raise SystemExit(1)


if __name__ == "__main__":
    _main(sys.argv[1:])
