"""The WMMA kernels of tcgemm.engine.catalog.WMMA_KERNELS on the GPU: launched through tcgemm.engine.gpu.gemm.prepare,
as every kernel is (`gemm` picks the build for the memory orders of A and B), checked against exact or
fp32 references, timed against cuBLAS and Kernel 4.4; and the WMMA fragment probe.

`report()` prints everything the WMMA chapter measures (the probe's map, the checks, the timings and
the SASS of every case) and saves the probe's observation as JSON, for one run on the GPU machine:
    PYTHONPATH=$PWD python -c "from tcgemm.fragments.gpu.wmma import report; report('tests/data')"
`python -m tcgemm.fragments.gpu.wmma KEY CASE M N K` runs one checked launch (the compute-sanitizer tests).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from tcgemm.engine.catalog import PROBES, WMMA_CASES, WMMA_KERNELS
from tcgemm.engine.kernel_types import MMA_ORDERS, WmmaKernel
from tcgemm.fragments.wmma import WMMA_KINDS, WmmaVerdict, observed_layout, probe_entry, verdict_table
from tcgemm.engine.report import size_label
from tcgemm.table import Column, Table
from tcgemm.engine import operands
from tcgemm.engine.accuracy import verdict
from tcgemm.engine.operands import check_device
from tcgemm.engine.gpu import gemm as launcher
from tcgemm.engine.gpu.compile import get_function
from tcgemm.engine.gpu.device import device_info, observation_path, require_gpu
from tcgemm.engine.gpu.gemm import case_operands, check_output, for_this_gpu, kernel_spec, prepare, random_operands
from tcgemm.engine.gpu.timing import time_launches

_PROBE_SOURCE = PROBES["wmma"].source
_PROBE_DTYPES = {"f16": np.float16, "f32": np.float32, "s8": np.int8, "s32": np.int32}


def wmma_spec(key: str) -> WmmaKernel:
    try:
        return WMMA_KERNELS[key]
    except KeyError:
        raise KeyError(f"unknown WMMA kernel {key!r}; the WMMA kernels are: {', '.join(WMMA_KERNELS)}") from None


def memory_order(name: str, x) -> str:
    return operands.memory_order(name, x, title="the WMMA kernels")


def run_wmma(key: str, A, B, C=None, *, alpha=1, beta=0):
    """D = alpha * A @ B + beta * C with the WMMA kernel `key`, in a new row-major array.

    A (M, K) and B (K, N) may each be row- or column-major (e.g. At.T for a row-major (K, M) At): their
    memory orders pick the fragment layouts the kernel is compiled with; nothing is copied. M, N and K
    must be multiples of 16, the WMMA tile. D starts filled with a poison value (NaN, or INT32_MIN),
    so an element the kernel fails to write cannot pass a check. The launch is tcgemm.engine.gpu.gemm.prepare's,
    as for every other kernel."""
    spec = wmma_spec(key)
    device = require_gpu().cuda.runtime.getDevice()
    for name, x in (("A", A), ("B", B)):
        check_device(name, x, device)       # before their memory orders are read
    run = prepare(spec.with_orders(memory_order("A", A), memory_order("B", B)), A, B, alpha=alpha, beta=beta,
                  addend=C)
    run()
    return run.C


# ---- checks -------------------------------------------------------------------------------------

def random_case(spec: WmmaKernel, case: str, M: int, N: int, K: int, seed: int | None = None):
    """A (M, K), B (K, N) in the memory orders of `case` (a key of WMMA_CASES) and a C (M, N), random, as
    `spec` takes them (tcgemm.engine.gpu.gemm.case_operands): fp16 uniform in [-1, 1), int8 uniform over all 256
    values, int32 C in [-2^20, 2^20)."""
    return case_operands(case, M, N, K, spec.in_dtype, seed=seed)


def reference(spec: WmmaKernel, A, B, C, alpha, beta):
    """tcgemm.engine.gpu.gemm.reference: fp32 D rounded from an fp64 product, int32 D exact (`spec` picks neither:
    A's dtype does)."""
    return launcher.reference(A, B, C, alpha, beta)


def exact_reference(out_dtype, A, B, C, alpha, beta):
    """Alias of tcgemm.engine.gpu.gemm.reference (its old name; out_dtype follows from A's dtype)."""
    return launcher.reference(A, B, C, alpha, beta)


def compare_result(out_dtype, D, ref):
    """Alias of tcgemm.engine.gpu.gemm.check_output (its old name; out_dtype is D's): fp32 D within the fp32
    tolerance of tcgemm.engine.accuracy, int32 D bit for bit."""
    return check_output(D, ref)


def check_wmma_case(key: str, case: str, M: int, N: int, K: int, alpha=1, beta=0, seed: int | None = None):
    """Run `key` on one case on fresh random inputs and compare: fp16 by tcgemm.engine.accuracy.compare_outputs's fp32
    tolerance, int8 bit for bit (tcgemm.engine.accuracy.compare_exact)."""
    A, B, C = random_case(wmma_spec(key), case, M, N, K, seed)
    D = run_wmma(key, A, B, C, alpha=alpha, beta=beta)
    return check_output(D, launcher.reference(A, B, C, alpha, beta))


def check_wmma_cases(keys=tuple(WMMA_KERNELS), shapes=((48, 80, 32), (1024, 1024, 1024)), scalars=((1, 0), (2, -3))) -> Table:
    """Every case of each kernel at each (M, N, K) and (alpha, beta), each on fresh random inputs."""
    rows = [[wmma_spec(key).title.split(":")[0], case, "×".join(map(str, mnk)), alpha, beta,
             verdict(check_wmma_case(key, case, *mnk, alpha=alpha, beta=beta))]
            for key in keys for case in WMMA_CASES for mnk in shapes for alpha, beta in scalars]
    return Table(["Kernel", "Case", Column("M×N×K", align="right"), "α", "β", Column("Check", verdict=True)],
                 rows, collapse=True,
                 notes="PASS: fp16 when the relative Frobenius error against an fp32 reference is at most 1e-4 "
                       "and the largest element error at most 1e-3 of max |reference|; int8 only when every "
                       "int32 element equals the exact result")


# ---- timing ---------------------------------------------------------------------------------------

BASELINES = {"float16": "cuBLAS (cublasGemmEx, COMPUTE_32F)", "int8": "cuBLAS (cublasGemmEx, COMPUTE_32I)"}


def _row(name: str, case: str, fn, check, M: int, N: int, K: int, baseline: float | None) -> tuple[list, float]:
    """Run fn once, compare its output (check() -> a Check), then time it: one row of timings() and
    the median time in seconds."""
    fn()
    result = verdict(check())
    seconds = time_launches(fn).median
    return [name, case, seconds * 1e6, 2 * M * N * K / seconds / 1e12,
            100 * (baseline or seconds) / seconds, result], seconds


def timings(M: int = 4096, N: int = 4096, K: int = 4096) -> Table:
    """cuBLAS for each input type, for fp16 Kernel 4.4, and every WMMA kernel of that type in every case,
    at one size, each checked on its own output, then timed. TFLOP/s for fp16, TOP/s for int8 (a
    multiply-add counts 2)."""
    from tcgemm.engine.gpu import cublas

    cupy = require_gpu()
    rows = []
    for dtype, baseline in BASELINES.items():
        specs = [s for s in WMMA_KERNELS.values() if s.in_dtype == dtype]
        A, B = random_operands(M, N, K, dtype=dtype, orders=WMMA_CASES["A B^T"])   # cuBLAS's TN form
        D = cupy.empty((M, N), dtype=specs[0].out_dtype)
        row, base = _row(baseline, "A B^T", lambda: cublas.gemm_ex(A, B, D),
                         lambda: check_output(D, launcher.reference(A, B)), M, N, K, None)
        rows.append(row)
        if dtype == "float16":
            k44 = for_this_gpu(kernel_spec("k4.4"))
            Ak, Bk = random_operands(M, N, K)
            run = prepare(k44, Ak, Bk)
            rows.append(_row(f"{k44.title} ({k44.variant})", "A B^T", run,
                             lambda: check_output(run.C, launcher.reference(Ak, Bk)), M, N, K, base)[0])
        for spec in specs:
            for case, orders in WMMA_CASES.items():
                A, B = random_operands(M, N, K, dtype=dtype, orders=orders)
                run = prepare(spec.with_orders(*orders), A, B)
                rows.append(_row(spec.title, case, run, lambda: check_output(run.C, launcher.reference(A, B)),
                                 M, N, K, base)[0])
    return Table(["Kernel", "Case", Column("µs", ".0f"), Column("T(FL)OP/s", ".1f"),
                  Column("% of cuBLAS", ".0f", unit="%"), Column("Check", detail=True, verdict=True)], rows,
                 caption=f"{device_info().name}, D = A @ B at {size_label(M, N, K)}: fp16 kernels first, then int8",
                 notes=["µs: median of timed runs, L2 flushed before each; % of cuBLAS: of the cuBLAS row of the "
                        "same input type", "Case A B^T: A row-major, B column-major, the orders mma.sync reads"])


# ---- the fragment probe ------------------------------------------------------------------------

def run_probe(kind: str, matrix: np.ndarray) -> np.ndarray:
    """load_matrix_sync of this fragment kind from the 16 x 16 `matrix`; every lane's x[i], (32, n)."""
    cupy = require_gpu()
    dtype, operand, order = WMMA_KINDS[kind]
    stored = matrix if order == "row" else matrix.T   # leading dimension 16 in the fragment's order
    src = cupy.asarray(np.ascontiguousarray(stored, dtype=_PROBE_DTYPES[dtype]))
    out = cupy.zeros(32 * 32, dtype=_PROBE_DTYPES[dtype])
    count = cupy.zeros(1, dtype=np.int32)
    get_function(_PROBE_SOURCE, probe_entry(kind))((1,), (32,), (src, out, count))
    n = int(count.get()[0])
    got = cupy.asnumpy(out[:32 * n]).reshape(32, n)
    if not np.all((got >= 0) & (got < 16)):   # a slot that holds no element of the matrix (NaN included)
        raise ValueError(f"{kind}: {int(np.sum(~((got >= 0) & (got < 16))))} of the {got.size} x[i] hold a value "
                         f"that is no tag of the matrix, e.g. lane 0 holds {got[0].tolist()}")
    return got.astype(np.int64)


def observe(kind: str):
    """The observed layout of one kind: the matrix tagged with its row indices, then with its columns."""
    rows = np.repeat(np.arange(16)[:, None], 16, axis=1)
    return observed_layout(kind, run_probe(kind, rows), run_probe(kind, rows.T))


def observe_all() -> list[WmmaVerdict]:
    return [WmmaVerdict(kind, observe(kind)) for kind in WMMA_KINDS]


def observation_json(verdicts) -> dict:
    """The probe's observation as recorded data (tests/data/wmma_fragments_*.json)."""
    info = device_info()
    return {"device": info.name, "arch": info.arch,
            "kinds": {v.kind: {"row": v.observed.row.tolist(), "col": v.observed.col.tolist()} for v in verdicts}}


# ---- SASS per case -----------------------------------------------------------------------------------

def sass_table(arch: str) -> Table:
    """The Tensor Core, shared-memory, global-load and repacking instructions of every case of every WMMA
    kernel compiled for `arch` (NVRTC offline, as the launcher compiles it), with their counts."""
    import re
    from collections import Counter

    from tcgemm.engine.gpu.nvrtc_offline import compile_cubin, cuobjdump_sass

    rows = []
    for spec in WMMA_KERNELS.values():
        for case, (a, b) in WMMA_CASES.items():
            listing = cuobjdump_sass(compile_cubin(spec.source, arch, spec.defines(a, b)))
            ops = Counter(re.findall(r"\b(?:HMMA|IMMA|LDSM|LDS|LDG|MOVM|PRMT)(?:\.[\w.]+)?(?=\s)", listing))
            native = "yes" if (a, b) == MMA_ORDERS else "no"
            rows.append([spec.title.split(":")[0], case, native, ", ".join(f"{n} {op}" for op, n in sorted(ops.items()))])
    return Table(["Kernel", "Case", "mma's orders", "Instructions (count in the kernel)"], rows,
                 caption=f"SASS of the WMMA kernels for {arch}")


def report(out_dir: str | Path | None = None) -> None:
    """Print the probe's map, the checks, the timings at 4096³ and the SASS of every case; write the
    observation to <out_dir>/wmma_fragments_<gpu>.json (default: $OUT, else the current folder;
    tests/data is where tests/test_wmma_fragments.py reads it)."""
    info = device_info()
    print(f"{info.name} ({info.arch})")
    verdicts = observe_all()
    print(verdict_table(verdicts))
    for v in verdicts:
        print(f"\n{v.kind}: row[lane][i] / col[lane][i] observed")
        for lane in range(32):
            print(f"  lane {lane:2d}: " + " ".join(f"{r},{c}" for r, c in zip(v.observed.row[lane], v.observed.col[lane])))
    path = observation_path("wmma_fragments", out_dir)
    path.write_text(json.dumps(observation_json(verdicts)) + "\n")
    print(f"\nobservation written to {path}")
    print(check_wmma_cases())
    print(timings())
    print(sass_table(info.arch))


def _main(argv) -> None:
    """One checked launch: KEY CASE M N K (for compute-sanitizer); exits 1 when the check fails."""
    key, case, *mnk = argv
    result = check_wmma_case(key, case, *map(int, mnk), alpha=2, beta=-1)
    require_gpu().cuda.runtime.deviceSynchronize()
    print(result)
    sys.exit(0 if result.passed else 1)


if __name__ == "__main__":
    _main(sys.argv[1:])
