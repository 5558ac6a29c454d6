"""The WMMA kernels of tcgemm.catalog.WMMA_KERNELS on the GPU: a checked launcher, checks against exact
or fp32 references, timing against cuBLAS and Kernel 4.4, and the WMMA fragment probe.

`report()` prints everything the WMMA chapter measures (the probe's map, the checks, the timings and
the SASS of every case) and saves the probe's observation as JSON, for one run on the GPU machine:
    PYTHONPATH=$PWD python -c "from tcgemm.gpu.wmma import report; report('tests/data')"
`python -m tcgemm.gpu.wmma KEY CASE M N K` runs one checked launch (the compute-sanitizer tests).
"""
from __future__ import annotations

import json
import sys
from numbers import Integral, Real
from pathlib import Path

import numpy as np

from tcgemm.catalog import MMA_ORDERS, PROBES, WMMA_CASES, WMMA_KERNELS, WmmaKernel
from tcgemm.check import compare, compare_exact
from tcgemm.errors import OperandError
from tcgemm.fragments.wmma import WMMA_KINDS, WmmaVerdict, observed_layout, probe_entry, verdict_table
from tcgemm.report import size_label
from tcgemm.table import Column, Table
from tcgemm import validate
from tcgemm.validate import check_device, describe_layout, check_gemm_shape
from tcgemm.gpu.compile import get_function
from tcgemm.gpu.device import device_info, observation_path, require_gpu
from tcgemm.gpu.timing import time_launches

INT32 = np.iinfo(np.int32)
_PROBE_SOURCE = PROBES["wmma"].source
_PROBE_DTYPES = {"f16": np.float16, "f32": np.float32, "s8": np.int8, "s32": np.int32}


def wmma_spec(key: str) -> WmmaKernel:
    try:
        return WMMA_KERNELS[key]
    except KeyError:
        raise KeyError(f"unknown WMMA kernel {key!r}; the WMMA kernels are: {', '.join(WMMA_KERNELS)}") from None


def memory_order(name: str, x) -> str:
    return validate.memory_order(name, x, title="the WMMA kernels")


def _check_scalar(spec: WmmaKernel, name: str, value) -> None:
    if spec.out_dtype == "int32":
        if isinstance(value, bool) or not isinstance(value, Integral) or not INT32.min <= value <= INT32.max:
            raise OperandError(f"{name}={value!r}: {spec.title} takes integer alpha and beta in int32's range")
    elif isinstance(value, bool) or not isinstance(value, Real):
        raise OperandError(f"{name}={value!r}: {spec.title} takes real alpha and beta")


def _check_aligned(name: str, x) -> None:
    """load_matrix_sync wants every tile's address 256-bit aligned: with M, N, K multiples of 16 that
    holds for every tile if it holds for the array's first element."""
    if x.data.ptr % 32:
        raise OperandError(f"{name} starts at an address that is not a multiple of 32 bytes; WMMA loads "
                           f"tiles from 32-byte aligned addresses only: pass a copy, cupy.array({name})")


def check_operands(spec: WmmaKernel, A, B, C, alpha, beta) -> tuple[int, int, int]:
    """Validate D = alpha * A @ B + beta * C for `spec`; return (M, N, K). A C is needed where beta != 0."""
    device = require_gpu().cuda.runtime.getDevice()
    for name, x, dtype in (("A", A, spec.in_dtype), ("B", B, spec.in_dtype)):
        check_device(name, x, device)
        if x.dtype != np.dtype(dtype):
            raise OperandError(f"{name} has dtype {x.dtype}; {spec.title} takes {dtype} A and B "
                               f"(convert with {name}.astype('{dtype}'))")
        if x.ndim != 2:
            raise OperandError(f"{name} must be a 2-D matrix, got shape {tuple(x.shape)}")
        memory_order(name, x)
        _check_aligned(name, x)
    (M, K), (Kb, N) = A.shape, B.shape
    if K != Kb:
        raise OperandError(f"inner dimensions differ: A is {M}x{K} but B is {Kb}x{N}; A.shape[1] must equal B.shape[0]")
    check_gemm_shape(spec, M, N, K)
    _check_scalar(spec, "alpha", alpha)
    _check_scalar(spec, "beta", beta)
    if beta != 0:
        if C is None:
            raise OperandError(f"beta={beta} needs a C to scale: pass C, a ({M}, {N}) {spec.out_dtype} array")
        check_device("C", C, device)
        if C.shape != (M, N) or C.dtype != np.dtype(spec.out_dtype) or not C.flags.c_contiguous:
            raise OperandError(f"C must be a row-major ({M}, {N}) {spec.out_dtype} array, got a "
                               f"{describe_layout(C)} {tuple(C.shape)} {C.dtype} one")
        _check_aligned("C", C)
    return M, N, K


def gemm(key: str, A, B, C=None, *, alpha=1, beta=0):
    """D = alpha * A @ B + beta * C with the WMMA kernel `key`, in a new row-major array.

    A (M, K) and B (K, N) may each be row- or column-major (e.g. At.T for a row-major (K, M) At): their
    memory orders pick the fragment layouts the kernel is compiled with; nothing is copied. M, N and K
    must be multiples of 16, the WMMA tile. D starts filled with a poison value (NaN, or INT32_MIN),
    so an element the kernel fails to write cannot pass a check."""
    spec = wmma_spec(key)
    M, N, _ = check_operands(spec, A, B, C, alpha, beta)
    poison = np.nan if spec.out_dtype == "float32" else INT32.min
    D = require_gpu().full((M, N), poison, dtype=spec.out_dtype)
    prepare(spec, A, B, C, D, alpha, beta)()
    return D


def prepare(spec: WmmaKernel, A, B, C, D, alpha=1, beta=0):
    """The launch on validated operands, with its compiled function (compiled for the memory orders of
    A and B) and arguments fetched once: a callable for the timing loop."""
    (M, K), N = A.shape, B.shape[1]
    defines = spec.defines(memory_order("A", A), memory_order("B", B))
    scalar = np.float32 if spec.out_dtype == "float32" else np.int32
    fn = get_function(spec.source, spec.entry, defines)
    grid, block = spec.grid(M, N), spec.block
    args = (A, B, D if C is None else C, D, np.int32(M), np.int32(N), np.int32(K), scalar(alpha), scalar(beta))
    return lambda: fn(grid, block, args)


# ---- checks -------------------------------------------------------------------------------------

def random_case(spec: WmmaKernel, case: str, M: int, N: int, K: int, seed: int | None = None):
    """A (M, K), B (K, N) in the memory orders of `case` (a key of WMMA_CASES) and a C (M, N), random:
    fp16 uniform in [-1, 1), int8 uniform over all 256 values, int32 C in [-2^20, 2^20)."""
    if case not in WMMA_CASES:
        raise ValueError(f"unknown case {case!r}; the cases are: {', '.join(WMMA_CASES)}")
    cupy = require_gpu()
    rng = cupy.random.default_rng(seed)
    a_order, b_order = WMMA_CASES[case]

    def draw(rows, cols, order, dtype):
        shape = (rows, cols) if order == "C" else (cols, rows)
        if dtype == "float16":
            x = (rng.random(shape, dtype=np.float32) * 2 - 1).astype(np.float16)
        elif dtype == "float32":
            x = rng.random(shape, dtype=np.float32) * 2 - 1
        else:
            bits = 8 if dtype == "int8" else 21
            x = rng.integers(-2 ** (bits - 1), 2 ** (bits - 1), size=shape, dtype=np.int64).astype(dtype)
        return x if order == "C" else x.T

    return (draw(M, K, a_order, spec.in_dtype), draw(K, N, b_order, spec.in_dtype),
            draw(M, N, "C", spec.out_dtype))


def exact_reference(out_dtype, A, B, C, alpha, beta):
    """fp32 D: the product in fp32 (CuPy, TF32 off), scaled in fp32. int32 D: exact, with int32's
    wrap-around: A @ B in fp64 (exact: every sum stays below 2^53), then alpha * AB + beta * C in int64,
    reduced mod 2^32."""
    if np.dtype(out_dtype) == np.float32:
        ref = alpha * (A.astype(np.float32) @ B.astype(np.float32))
        return ref + beta * C if beta != 0 else ref
    ab = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.int64)
    wide = np.int64(alpha) * ab + (np.int64(beta) * C.astype(np.int64) if beta != 0 else 0)
    return ((wide + 2**31) % 2**32 - 2**31).astype(np.int32)


def reference(spec: WmmaKernel, A, B, C, alpha, beta):
    return exact_reference(spec.out_dtype, A, B, C, alpha, beta)


def compare_result(out_dtype, D, ref):
    """fp32 D: within the fp32 tolerance of tcgemm.check; int32 D: bit for bit."""
    cupy = require_gpu()
    out, ref = cupy.asnumpy(D), cupy.asnumpy(ref)
    return compare(out, ref, "float32") if np.dtype(out_dtype) == np.float32 else compare_exact(out, ref)


def _compare(spec: WmmaKernel, D, ref):
    return compare_result(spec.out_dtype, D, ref)


def check(key: str, case: str, M: int, N: int, K: int, alpha=1, beta=0, seed: int | None = None):
    """Run `key` on one case on fresh random inputs and compare: fp16 by tcgemm.check.compare's fp32
    tolerance, int8 bit for bit (tcgemm.check.compare_exact)."""
    spec = wmma_spec(key)
    A, B, C = random_case(spec, case, M, N, K, seed)
    D = gemm(key, A, B, C, alpha=alpha, beta=beta)
    return _compare(spec, D, reference(spec, A, B, C, alpha, beta))


def verdict(c) -> str:
    if hasattr(c, "rel_fro"):
        return f"PASS (rel. error {c.rel_fro:.1e})" if c.passed else f"FAIL: {c.reason}"
    return str(c)


def checks(keys=tuple(WMMA_KERNELS), shapes=((48, 80, 32), (1024, 1024, 1024)), scalars=((1, 0), (2, -3))) -> Table:
    """Every case of each kernel at each (M, N, K) and (alpha, beta), each on fresh random inputs."""
    rows = [[wmma_spec(key).title.split(":")[0], case, "×".join(map(str, mnk)), alpha, beta,
             verdict(check(key, case, *mnk, alpha=alpha, beta=beta))]
            for key in keys for case in WMMA_CASES for mnk in shapes for alpha, beta in scalars]
    return Table(["Kernel", "Case", Column("M×N×K", align="right"), "α", "β", "Check"], rows,
                 notes=["fp16: PASS when the relative Frobenius error against an fp32 reference is at most "
                        "1e-4 and the largest element error at most 1e-3 of max |reference|",
                        "int8: PASS only when every int32 element equals the exact result"])


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
    from tcgemm.gpu import cublas
    from tcgemm.gpu.bench import random_operands, reference as fp32_reference
    from tcgemm.gpu.gemm import for_this_gpu, kernel_spec, prepare as prepare_gemm

    cupy = require_gpu()
    rows = []
    for dtype, baseline in BASELINES.items():
        specs = [s for s in WMMA_KERNELS.values() if s.in_dtype == dtype]
        A, B, _ = random_case(specs[0], "A B^T", M, N, K)   # the memory orders of cuBLAS's TN form
        D = cupy.empty((M, N), dtype=specs[0].out_dtype)
        row, base = _row(baseline, "A B^T", lambda: cublas.gemm_ex(A, B, D),
                         lambda: _compare(specs[0], D, reference(specs[0], A, B, None, 1, 0)), M, N, K, None)
        rows.append(row)
        if dtype == "float16":
            k44 = for_this_gpu(kernel_spec("k4.4"))
            Ak, Bk = random_operands(M, N, K)
            run = prepare_gemm(k44, Ak, Bk)
            rows.append(_row(f"{k44.title} ({k44.variant})", "A B^T", run,
                             lambda: compare(cupy.asnumpy(run.C), cupy.asnumpy(fp32_reference(Ak, Bk))),
                             M, N, K, base)[0])
        for spec in specs:
            for case in WMMA_CASES:
                A, B, _ = random_case(spec, case, M, N, K)
                D = cupy.empty((M, N), dtype=spec.out_dtype)
                rows.append(_row(spec.title, case, prepare(spec, A, B, None, D),
                                 lambda: _compare(spec, D, reference(spec, A, B, None, 1, 0)), M, N, K, base)[0])
    return Table(["Kernel", "Case", Column("µs", ".0f"), Column("T(FL)OP/s", ".1f"),
                  Column("% of cuBLAS", ".0f", unit="%"), "Check"], rows,
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

    from tcgemm.gpu.nvrtc_offline import compile_cubin, cuobjdump_sass

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
    print(checks())
    print(timings())
    print(sass_table(info.arch))


def _main(argv) -> None:
    """One checked launch: KEY CASE M N K (for compute-sanitizer); exits 1 when the check fails."""
    key, case, *mnk = argv
    result = check(key, case, *map(int, mnk), alpha=2, beta=-1)
    require_gpu().cuda.runtime.deviceSynchronize()
    print(result)
    sys.exit(0 if result.passed else 1)


if __name__ == "__main__":
    _main(sys.argv[1:])
