"""`python -m tcgemm sweep`: tcgemm.matmul against cuBLAS of the same input and output types over the
shapes of tcgemm.engine.sweep, each call checked on fresh random operands first. GPU time: a call into a
given `out` (nothing allocated) captured in a CUDA graph, the graph's launches timed by CUDA events, L2
flushed (tcgemm.engine.gpu.timing), so the host's part of the call is not in it; whole call: back-to-back
calls that allocate D, as a reader's code does, timed on the host until the GPU is done; the same for the
array library's own A @ B (cupy.matmul for fp16 C, torch.matmul for bf16)."""
from __future__ import annotations

import time
from typing import Callable

import numpy as np

from tcgemm.engine.sweep import SHAPES, TYPES, SweepRow
from tcgemm.engine.gpu.bench import runner
from tcgemm.engine.gpu.device import require_gpu
from tcgemm.engine.gpu.gemm import check_output, poisoned, random_operands, reference
from tcgemm.engine.gpu.matmul import _matmul, chosen, matmul
from tcgemm.engine.gpu.timing import time_launches

BASELINES = {("float16", "float16"): "cublas-fp16-c", ("bfloat16", "bfloat16"): "cublas-bf16-c",
             ("float16", "float32"): "cublas", ("bfloat16", "float32"): "cublas-bf16"}
CALL_SECONDS = 0.02      # back-to-back calls per whole-call timing: about this long, 10 to 200 calls


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _bf16_tensor(torch, x):
    return torch.from_dlpack(x.view(np.int16)).view(torch.bfloat16)


def _per_call_us(fn: Callable[[], object], n: int, host_only: bool = False, warmup: int = 1) -> float:
    """µs per call of n calls issued back to back (after `warmup` calls): until the GPU has done them all
    (a whole call), or, `host_only`, until the host has issued the last (the GPU keeping up)."""
    cupy = require_gpu()
    for _ in range(warmup):
        fn()
    cupy.cuda.Device().synchronize()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    if not host_only:
        cupy.cuda.Device().synchronize()
    seconds = time.perf_counter() - start
    cupy.cuda.Device().synchronize()
    return seconds / n * 1e6


def _graph_time(fn: Callable[[], object], reps: int | None) -> float:
    """The median GPU seconds of fn's work: fn captured once in a CUDA graph on a stream of its own, the
    graph's launches timed (time_launches)."""
    cupy = require_gpu()
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        fn()
        stream.synchronize()
        stream.begin_capture()
        fn()
        graph = stream.end_capture()
        seconds = time_launches(graph.launch, reps).median
    stream.synchronize()
    return seconds


def sweep_row(M: int, N: int, K: int, in_dtype: str, out_dtype: str, kernel: str | None = None,
              reps: int | None = 50) -> SweepRow:
    """One shape and type pair: checked, then timed (see the module's docstring)."""
    torch = _torch()
    A, B = random_operands(M, N, K, dtype=in_dtype)
    D = poisoned((M, N), out_dtype)
    into = lambda: _matmul(A, B, D, 1, 0, None, in_dtype, out_dtype, kernel)   # matmul's path after the views
    if in_dtype == "bfloat16" and torch is not None:       # the public call takes bf16 as torch tensors
        At, Bt = (_bf16_tensor(torch, x) for x in (A, B))
        call = lambda: matmul(At, Bt, kernel=kernel, out_dtype=out_dtype)
        library = (lambda: torch.matmul(At, Bt)) if out_dtype == "bfloat16" else None
    elif in_dtype == "bfloat16":
        call, library = into, None
    else:
        call = lambda: matmul(A, B, kernel=kernel, out_dtype=out_dtype)
        library = (lambda: require_gpu().matmul(A, B)) if out_dtype == "float16" else None
    into()
    check = check_output(D, reference(A, B), K, accumulator="float32")
    gpu = _graph_time(into, reps)
    base = runner(BASELINES[(in_dtype, out_dtype)])
    cublas = time_launches(base.prepare_launch(A, B, base.new_output(M, N)), reps).median
    n = int(min(200, max(10, CALL_SECONDS / max(gpu, 1e-5))))
    d = chosen(M, N, K, in_dtype, out_dtype, kernel=kernel)
    return SweepRow(M, N, K, in_dtype, out_dtype, d.label,
                    gpu * 1e6, cublas * 1e6, _per_call_us(call, n), _per_call_us(library, n) if library else None,
                    "PASS" if check.passed else f"FAIL ({check})")


def sweep(shapes=SHAPES, types=TYPES, kernel: str | None = None, reps: int | None = 50,
          log: Callable[[str], None] | None = None) -> list[SweepRow]:
    rows = []
    for in_dtype, out_dtype in types:
        for M, N, K in shapes:
            rows.append(row := sweep_row(M, N, K, in_dtype, out_dtype, kernel, reps))
            if log:
                log(f"{row.types} {M}x{N}x{K} {row.kernel}: {row.gpu_us:.1f} us, cuBLAS {row.cublas_us:.1f} us "
                    f"({row.pct_cublas:.0f}%), call {row.call_us:.1f} us, {row.check}")
    return rows


# Host time: problems small enough that the GPU keeps up with the host, one per path of a repeated call.
HOST_SHAPES = ((256, 256, 256), (64, 256, 256))
HOST_CALLS = 2000


def _host_us(fn: Callable[[], object]) -> float:
    """Host µs per call of HOST_CALLS calls issued back to back without waiting for the GPU."""
    return _per_call_us(fn, HOST_CALLS, host_only=True, warmup=20)


def host_times(shapes=HOST_SHAPES) -> "Table":
    """The host's µs per repeated call of tcgemm.matmul beside the array library's own A @ B, on fp16 CuPy
    arrays and on bf16 PyTorch tensors (where PyTorch has CUDA), each allocating its D."""
    from tcgemm.table import Column, Table

    cupy = require_gpu()
    torch = _torch()
    rows = []
    for M, N, K in shapes:
        A, B = random_operands(M, N, K, dtype="float16")
        runs = [("float16", "fp16 CuPy arrays", lambda: matmul(A, B), "cupy.matmul", lambda: cupy.matmul(A, B))]
        if torch is not None:
            At, Bt = (_bf16_tensor(torch, x) for x in random_operands(M, N, K, dtype="bfloat16"))
            runs.append(("bfloat16", "bf16 PyTorch tensors", lambda: matmul(At, Bt), "torch.matmul",
                         lambda: torch.matmul(At, Bt)))
        for dtype, what, call, name, library in runs:
            d = chosen(M, N, K, dtype, dtype)
            rows.append([f"{M}×{N}×{K}", what, d.label,
                         _host_us(call), name, _host_us(library)])
    return Table(["M×N×K", "Inputs", "Kernel", Column("tcgemm µs", ".1f"), "Library", Column("library µs", ".1f")],
                 rows, caption="Host time per repeated call, D allocated by each call",
                 notes=[f"µs: {HOST_CALLS} calls issued back to back, the host's time per call (the GPU keeps up at "
                        "these sizes)", "k4.7 and d1 (Kernels 4.7 and D1) write fp32, then a second launch rounds it to 16 bits; "
                        "k5.11/64: Kernel 5.11 with 64-wide tiles"])
