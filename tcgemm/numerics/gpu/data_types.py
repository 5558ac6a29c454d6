"""Kernel D1 on the GPU: random operands of each input type, the checked product, and the comparison
with cuBLAS for the same types (tcgemm.engine.gpu.cublas) and with the ceiling of each mma variant."""
from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from tcgemm.engine.catalog import ELEMENTS
from tcgemm.engine.kernel_types import GemmKernel
from tcgemm.numerics.elements import decode, element
from tcgemm.errors import UnsupportedOnGPUError
from tcgemm.fragment_layouts import unsupported
from tcgemm.hw import gemm_flops
from tcgemm.engine.report import Timing, size_label
from tcgemm.table import Column, Table
from tcgemm.engine.gpu import cublas
from tcgemm.engine.gpu.compile import current_arch
from tcgemm.engine.gpu.device import device_info, require_gpu
from tcgemm.engine.gpu.gemm import check_output, for_this_gpu, kernel_spec, poisoned, prepare, random_values
from tcgemm.engine.gpu.timing import time_launches


def skipped(name: str) -> str | None:
    """None when this GPU's mma.sync takes input type `name`; else the one line that says why not."""
    return unsupported(element(name).variant, current_arch())


def spec(name: str) -> GemmKernel:
    """Kernel D1 for input type `name`, its tile planned per problem; UnsupportedOnGPUError where this
    GPU lacks the type (fp8 before sm_89), before anything is compiled."""
    if reason := skipped(name):
        raise UnsupportedOnGPUError(reason)
    return for_this_gpu(kernel_spec("d1")).with_element(name)


def _draw(name: str, rows: int, cols: int, rng):
    """A random row-major (rows, cols) array of input type `name` as Kernel D1 takes it, and the values
    the kernel multiplies, as float64 (see `operands`)."""
    cupy = require_gpu()
    e = element(name)
    if e.ptx in ("s8", "f16"):     # the values themselves, as tcgemm.engine.gpu.gemm.random_operands draws them
        x = random_values(rng, (rows, cols), e.dtype)
        return x, x.astype(np.float64)
    if e.ptx in ("e4m3", "e5m2"):
        table = decode(np.arange(256, dtype=np.uint8), name)
        codes = cupy.asarray(np.flatnonzero(np.abs(table) <= 1).astype(np.uint8))
        x = codes[rng.integers(0, codes.size, (rows, cols))]
        return x, cupy.asarray(table)[x.astype(np.intp)]
    uniform = random_values(rng, (rows, cols), "float32")
    if e.ptx == "bf16":       # the upper half of each fp32 word: uniform values cut to bf16
        x = (uniform.view(np.uint32) >> 16).astype(np.uint16)
        return x, cupy.asarray(decode(np.arange(2**16, dtype=np.uint16), name))[x.astype(np.intp)]
    return uniform, cupy.asarray(decode(cupy.asnumpy(uniform), name))     # tf32: rounded by the kernel


def operands(name: str, M: int, N: int, K: int, seed: int | None = None):
    """(A, B, reference): A (M, K) row-major and B (K, N) column-major as Kernel D1 takes them for input
    type `name`, random, and the fp64 product of the values the kernel multiplies (exact for int8).
    fp16: uniform in [-1, 1); bf16: uniform fp32 cut to its upper 16 bits; tf32: uniform fp32, which the
    kernel rounds; int8: uniform integers -128..127; e4m3, e5m2: codes drawn uniformly from those of
    magnitude at most 1."""
    rng = require_gpu().random.default_rng(seed)
    A, A_values = _draw(name, M, K, rng)
    Bt, Bt_values = _draw(name, N, K, rng)
    return A, Bt.T, A_values @ Bt_values.T


def check_type_output(name: str, C, reference, K: int):
    """C against the reference: bit for bit for int8 (tcgemm.engine.accuracy.compare_exact), else under the fp32
    accumulator's tolerance for sums of K terms (tcgemm.engine.accuracy.compare_outputs), by tcgemm.engine.gpu.gemm.check_output."""
    return check_output(C, reference.astype(np.int32) if element(name).ptx == "s8" else reference, K)


def run_type(name: str, A, B, kernel: GemmKernel | None = None):
    """C = A @ B by Kernel D1 for input type `name` (A, B as `operands` makes them; bf16 and fp8 as bit
    patterns: tcgemm.numerics.elements.encode), into a new C; `kernel` overrides the planned configuration."""
    run = prepare(spec(name) if kernel is None else kernel, A, B)
    run()
    return run.C


def cublas_baseline(name: str, A, B, C):
    """cuBLAS's product for input type `name` as a prepared callable, or None where cuBLAS has none
    (e5m2: cuBLASLt multiplies e5m2 only by e4m3)."""
    if element(name).ptx == "e5m2":
        return None
    if element(name).ptx == "e4m3":
        return cublas.prepare_lt_fp8(A, B, C, name)
    return cublas.prepare_gemm_ex(A, B, C, name)


CUBLAS_CALLS = {"fp16": "cublasGemmEx", "bf16": "cublasGemmEx", "tf32": "cublasGemmEx (FAST_TF32)",
                "int8": "cublasGemmEx", "e4m3": "cublasLtMatmul", "e5m2": "none"}


@dataclass(frozen=True)
class TypeResult:
    """One input type at one size: Kernel D1 (or, for fp32 on CUDA cores, Kernel S3) and cuBLAS, each
    checked against the same reference and timed, beside the measured ceiling of its instruction."""
    label: str
    flop: int
    kernel: Timing
    kernel_check: str
    cublas: Timing | None
    cublas_check: str
    ceiling: float | None
    kernel_error: float | None = None   # relative Frobenius error against the reference (0 for an exact int8
    cublas_error: float | None = None   # result); None where there is no number (no cuBLAS, a wrong int8)
    tolerance: float | None = None      # the check's bound on that error (tcgemm.engine.accuracy.tolerance); None for int8

    def rate(self, timing: Timing | None) -> float | None:
        return self.flop / timing.median / 1e12 if timing else None


def _verdict(result) -> str:
    return ("exact" if hasattr(result, "mismatches") else "PASS") if result.passed else "FAIL"


def _error(result) -> float | None:
    """The relative Frobenius error of a check (tcgemm.engine.accuracy.Check); 0 for a passed exact check, None
    for a failed one or none."""
    if result is None:
        return None
    if hasattr(result, "mismatches"):
        return 0.0 if result.passed else None
    return result.rel_fro


def _error_text(r: TypeResult) -> str:
    """'kernel / cuBLAS' relative errors, as the table shows them."""
    def one(e):
        return "n/a" if e is None else "0" if e == 0 else f"{e:.1e}"
    return f"{one(r.kernel_error)} / {one(r.cublas_error)}"


def measure(name: str, M: int = 4096, N: int = 4096, K: int = 4096, reps: int | None = None,
            ceiling: bool = True) -> TypeResult:
    """Kernel D1 and cuBLAS for input type `name` at M x N x K: each run once into a poisoned C and
    checked, then timed (tcgemm.engine.gpu.timing); with `ceiling`, the measured rate of the type's mma."""
    from tcgemm.engine.gpu import ceiling as ceilings
    e = element(name)
    A, B, ref = operands(name, M, N, K)
    run = prepare(spec(name), A, B)
    run()
    kernel_result = check_type_output(name, run.C, ref, K)
    C = poisoned((M, N), e.out_dtype)
    base = cublas_baseline(name, A, B, C)
    cublas_result, cublas_time = None, None
    if base is not None:
        base()
        cublas_result = check_type_output(name, C, ref, K)
        cublas_time = time_launches(base, reps)
    rate = ceilings.measure(variant=e.variant).tflops if ceiling else None
    return TypeResult(f"{name} -> {e.out_dtype.replace('float', 'fp')}", gemm_flops(M, N, K),
                      time_launches(run, reps), _verdict(kernel_result), cublas_time,
                      _verdict(cublas_result) if cublas_result is not None else "", rate,
                      _error(kernel_result), _error(cublas_result), getattr(kernel_result, "tol_fro", None))


def measure_ffma(M: int = 4096, N: int = 4096, K: int = 4096, reps: int | None = None,
                 ceiling: bool = True) -> TypeResult:
    """fp32 on CUDA cores, the same way: Kernel S3 (the SGEMM chapter's) and cublasSgemm."""
    from tcgemm.engine.gpu import ffma_ceiling
    from tcgemm.engine.gpu.bench import bench, check_runner, runner
    sgemm, s3 = bench(["s3"], M, N, K, reps=reps)
    rate = ffma_ceiling.measure().tflops if ceiling else None
    verdict = lambda r: "PASS" if r.passed else "FAIL"
    # bench keeps each check as text: the errors come from one more check of each, on fresh inputs
    s3_check, sgemm_check = (check_runner(runner(key), M, N, K) for key in ("s3", "cublas-sgemm"))
    return TypeResult("fp32, FFMA (S3)", gemm_flops(M, N, K), s3.timing, verdict(s3), sgemm.timing,
                      verdict(sgemm), rate, s3_check.rel_fro, sgemm_check.rel_fro, s3_check.tol_fro)


def results(M: int = 4096, N: int = 4096, K: int = 4096, reps: int | None = None, ceiling: bool = True):
    """(TypeResult of every input type this GPU has, then fp32 on CUDA cores; one line per type it lacks)."""
    names = [n for n in ELEMENTS if not skipped(n)]
    rows = [measure(n, M, N, K, reps, ceiling) for n in names] + [measure_ffma(M, N, K, reps, ceiling)]
    return rows, [skipped(n) for n in ELEMENTS if skipped(n)]


def table(rows, skips=(), M: int = 4096, N: int = 4096, K: int = 4096) -> Table:
    """`results` as a table: per input type the kernel's and cuBLAS's time and rate, the kernel's share
    of cuBLAS's rate, the ceiling of its instruction, and both checks (kernel / cuBLAS)."""
    body = []
    for r in rows:
        kernel_rate, cublas_rate = r.rate(r.kernel), r.rate(r.cublas)
        body.append([r.label, r.kernel.median * 1e6, kernel_rate, r.cublas.median * 1e6 if r.cublas else None,
                     cublas_rate, 100 * kernel_rate / cublas_rate if cublas_rate else None, r.ceiling,
                     f"{r.kernel_check}/{r.cublas_check or 'n/a'}", _error_text(r)])
    tolerances = sorted({f"{r.tolerance:.1e}" for r in rows if r.tolerance is not None})
    notes = ["Kernel: D1 compiled for the input type; fp32: Kernel S3 on CUDA cores (FFMA). cuBLAS: "
             "cublasGemmEx (tf32: fp32 inputs, CUBLAS_COMPUTE_32F_FAST_TF32), cublasLtMatmul for e4m3 "
             "(none for e5m2 x e5m2), cublasSgemm for fp32.",
             "Rates: T/s is TFLOP/s, TOP/s for int8; ceiling: the instruction's rate measured on this GPU "
             "(mma.sync of the type, or FFMA). Check: kernel/cuBLAS against an fp64 product of the same "
             "values (int8: exact). Error: kernel / cuBLAS, relative Frobenius error against that product"
             + (f"; the check's tolerance for it: {' or '.join(tolerances)} (fp32 accumulator, K = {K})"
                if tolerances else "") + ".", *skips]
    return Table([Column("Inputs"), Column("µs", ".0f"), Column("T/s", ".0f"), Column("cuBLAS µs", ".0f"),
                  Column("cuBLAS T/s", ".0f"), Column("of cuBLAS", ".0f", unit="%"), Column("Ceiling", ".0f"),
                  Column("Check"), Column("Error")], body,
                 caption=f"{device_info().name}, C = A @ B at {size_label(M, N, K)}, by input type", notes=notes)


def compare_types(M: int = 4096, N: int = 4096, K: int = 4096, reps: int | None = None) -> Table:
    """Every input type this GPU has, Kernel D1 against cuBLAS at M x N x K, as a table."""
    rows, skips = results(M, N, K, reps)
    return table(rows, skips, M, N, K)


FP8_GEMMS = ("Kernel D1 (mma.sync)", "cuBLASLt, FAST_ACCUM 0", "cuBLASLt, FAST_ACCUM 1")


def fp8_accumulation(M: int = 4096, N: int = 4096, K: int = 4096, reps: int | None = None) -> Table | None:
    """e4m3 at M x N x K, one set of operands: Kernel D1 and cublasLtMatmul with
    CUBLASLT_MATMUL_DESC_FAST_ACCUM 0 and 1 (FP8_GEMMS), each run once into a poisoned C, checked against
    the fp64 product of the same values and timed: its relative error beside the check's tolerance. None,
    after the one line why, where this GPU has no fp8."""
    if reason := skipped("e4m3"):
        print(reason)
        return None
    A, B, ref = operands("e4m3", M, N, K)
    kernel = prepare(spec("e4m3"), A, B)
    runs = [(kernel, kernel.C)]
    for fast in (False, True):
        C = poisoned((M, N), "float32")
        runs.append((cublas.prepare_lt_fp8(A, B, C, "e4m3", fast_accum=fast), C))
    body = []
    for name, (run, C) in zip(FP8_GEMMS, runs):
        run()
        result = check_type_output("e4m3", C, ref, K)
        timing = time_launches(run, reps)
        body.append([name, timing.median * 1e6, timing.spread * timing.median * 1e6 / 2,
                     gemm_flops(M, N, K) / timing.median / 1e12, result.rel_fro, result.tol_fro,
                     result.rel_fro / result.tol_fro, _verdict(result)])
    return Table([Column("GEMM"), Column("µs", ".0f"), Column("± µs", ".0f"), Column("TFLOP/s", ".0f"),
                  Column("Error", ".1e"), Column("Tolerance", ".1e"), Column("Error / tolerance", ".2f"),
                  Column("Check")], body,
                 caption=f"{device_info().name}, e4m3 inputs, fp32 C, at {size_label(M, N, K)}",
                 notes=["Error: relative Frobenius error against an fp64 product of the same e4m3 values; "
                        f"tolerance: the check's for fp32 accumulation over K = {K} (tcgemm.engine.accuracy.tolerance). "
                        "± µs: half the interquartile range of the timed runs."])


def _main(name: str, M: int, N: int, K: int, tile_plan: str = "") -> None:
    """One checked product of input type `name`, planned, or with a tile plan "tile/splits" of tcgemm.engine.plan."""
    from tcgemm.engine.plan import tile_named
    kernel = None
    if tile_plan:
        tile, splits = tile_plan.split("/")
        kernel = spec(name).with_tile(tile_named(tile), int(splits))
    A, B, ref = operands(name, M, N, K, seed=0)
    result = check_type_output(name, run_type(name, A, B, kernel), ref, K)
    if not result.passed:
        raise SystemExit(f"{name} {M}x{N}x{K} {tile_plan}: {result}")


if __name__ == "__main__":   # compute-sanitizer's target (tests/gpu/test_sanitizer.py)
    _main(sys.argv[1], *(int(x) for x in sys.argv[2:5]), *sys.argv[5:6])
