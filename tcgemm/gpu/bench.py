"""Check and time kernels on the GPU: fresh random inputs, NaN-poisoned outputs, CUDA-event timing."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from tcgemm.catalog import GEMM_KERNELS, OPERAND_ORDERS
from tcgemm.check import Check, compare
from tcgemm.report import BenchResult, Timing, summarize
from tcgemm.gpu import cublas
from tcgemm.gpu.device import device_info, require_gpu
from tcgemm.gpu.gemm import for_this_gpu, kernel_spec, launch

CUBLAS = "cuBLAS (cublasGemmEx)"
CUBLAS_SGEMM = "cuBLAS SGEMM (cublasSgemm, TF32 off)"
BASELINES = {"float16": "cublas", "float32": "cublas-sgemm"}   # the cuBLAS each kind of kernel is set against


def random_operands(M: int, N: int, K: int, seed: int | None = None, dtype: str = "float16"):
    """A (M, K) and B (K, N) uniform in [-1, 1) (never zeros), in the dtype and memory order the
    kernels of that input dtype take: fp16 A row-major, B column-major; fp32 the other way round."""
    cupy = require_gpu()
    rng = cupy.random.default_rng(seed)
    a_order, b_order = OPERAND_ORDERS[dtype]
    draw = lambda rows, cols, order: (rng.random((rows, cols) if order == "C" else (cols, rows),
                                                 dtype=np.float32) * 2 - 1).astype(dtype)
    A, B = draw(M, K, a_order), draw(K, N, b_order)
    return (A if a_order == "C" else A.T), (B if b_order == "C" else B.T)


def reference(A, B):
    """The product in higher precision than the kernels': fp16 inputs upcast to fp32 (CuPy's fp32
    matmul; TF32 is off by default), fp32 inputs upcast to fp64."""
    wide = np.float64 if A.dtype == np.float32 else np.float32
    return (A.astype(wide) @ B.astype(wide)).astype(np.float32)


@dataclass(frozen=True)
class Runner:
    """One way to compute C = A @ B: a name, how to allocate C, and how to launch into it."""
    name: str
    out_dtype: str
    run: Callable  # (A, B, C) -> None
    spec: object = None  # the GemmKernel configuration, None for cuBLAS
    in_dtype: str = "float16"

    def new_output(self, M: int, N: int):
        cupy = require_gpu()
        return cupy.full((M, N), np.nan, dtype=self.out_dtype)


def runner(key: str, spec=None) -> Runner:
    """cuBLAS, or the kernel `key` in the configuration the launcher picks (or `spec`)."""
    if key == "cublas":
        return Runner(CUBLAS, "float32", cublas.gemm_ex)
    if key == "cublas-sgemm":
        return Runner(CUBLAS_SGEMM, "float32", cublas.sgemm, in_dtype="float32")
    spec = for_this_gpu(kernel_spec(key)) if spec is None else spec
    name = f"{spec.title} ({spec.variant})" if spec.configs or spec.variant != kernel_spec(key).variant else spec.title
    return Runner(name, spec.out_dtype, lambda A, B, C: launch(spec, A, B, C), spec, spec.in_dtype)


def check_runner(r: Runner, M: int, N: int, K: int, seed: int | None = None) -> Check:
    """Run once on fresh random inputs into a NaN-filled output and compare with the fp32 reference."""
    cupy = require_gpu()
    A, B = random_operands(M, N, K, seed, r.in_dtype)
    C = r.new_output(M, N)
    r.run(A, B, C)
    ref = reference(A, B)
    cupy.cuda.get_current_stream().synchronize()
    return compare(cupy.asnumpy(C), cupy.asnumpy(ref), precision=r.out_dtype)


def time_launches(fn: Callable[[], None], warmup: int = 10, reps: int = 50, flush_l2: bool = True):
    """Median-based timing of `fn` with CUDA events; L2 is overwritten before each timed launch."""
    cupy = require_gpu()
    scratch = cupy.empty(2 * device_info().l2_bytes // 4 + 1, dtype=np.float32) if flush_l2 else None
    for _ in range(warmup):
        fn()
    starts = [cupy.cuda.Event() for _ in range(reps)]
    ends = [cupy.cuda.Event() for _ in range(reps)]
    for i in range(reps):
        if scratch is not None:
            scratch.fill(float(i))
        starts[i].record()
        fn()
        ends[i].record()
    ends[-1].synchronize()
    return summarize([cupy.cuda.get_elapsed_time(s, e) / 1e3 for s, e in zip(starts, ends)])


def progress_bar(done: int, total: int, label: str, width: int = 24) -> str:
    """A text progress bar, e.g. '[#########...............]  3/8  Kernel 2.0'."""
    filled = round(width * done / total) if total else width
    return f"[{'#' * filled}{'.' * (width - filled)}] {done:>2}/{total}  {label}"


def bench(keys=None, M: int = 4096, N: int = 4096, K: int = 4096, reps: int = 50, warmup: int = 10,
          with_cublas: bool = True, log: Callable[[str], None] | None = print,
          specs: dict | None = None) -> list[BenchResult]:
    """Check, then time, each kernel (and cuBLAS) at one size. Kernels whose tiles don't divide the
    size are skipped with a note. PASS/FAIL is logged before the kernel is timed. `specs` maps a key
    to the configuration to run instead of the launcher's choice. With cuBLAS, each input dtype's
    kernels come after their own baseline (cublasGemmEx for fp16, cublasSgemm for fp32)."""
    keys = list(GEMM_KERNELS) if keys is None else list(keys)
    if with_cublas:
        keys = with_baselines(keys)
    results = []
    for i, key in enumerate(keys, 1):
        r = runner(key, (specs or {}).get(key))
        if log:
            log(progress_bar(i - 1, len(keys), r.name))
        if r.spec is not None:
            spec = r.spec
            if not spec.any_shape and (M % spec.tile_m or N % spec.tile_n or K % spec.tile_k):
                if log:
                    log(f"    skipped: {M}x{N}x{K} is not a multiple of its tiles")
                continue
        check = check_runner(r, M, N, K)
        A, B = random_operands(M, N, K, dtype=r.in_dtype)
        C = r.new_output(M, N)
        timing = time_launches(lambda: r.run(A, B, C), warmup=warmup, reps=reps)
        results.append(BenchResult(r.name, M, N, K, timing, check.passed, str(check)))
        if log:
            log(f"    {check}; median {timing.median * 1e6:.0f} us over {timing.runs} runs")
    if log:
        log(progress_bar(len(keys), len(keys), "done"))
    return results


def with_baselines(keys) -> list[str]:
    """`keys` grouped by input dtype, each group led by its cuBLAS baseline (kept where already given)."""
    groups: dict[str, list[str]] = {}
    for key in keys:
        dtype = "float32" if key == "cublas-sgemm" else "float16" if key == "cublas" else kernel_spec(key).in_dtype
        groups.setdefault(dtype, []).append(key)
    return [k for dtype, group in groups.items()
            for k in dict.fromkeys([BASELINES[dtype], *group])]


def bench_configs(key: str, configs, M: int = 4096, N: int = 4096, K: int = 4096, reps: int = 30,
                  log: Callable[[str], None] | None = None) -> list[tuple[object, BenchResult]]:
    """Each (tile_k, stages) configuration of a pipelined kernel, checked and timed; configurations
    that do not fit this GPU's shared memory are skipped."""
    base = kernel_spec(key)
    limit = device_info().shared_mem_per_block_optin
    out = []
    for tile_k, stages in configs:
        spec = base.with_config(tile_k, stages)
        if spec.smem_bytes > limit:
            if log:
                log(f"{spec.variant}: skipped, needs {spec.smem_bytes // 1024} KB > {limit // 1024} KB")
            continue
        result = bench([key], M, N, K, reps=reps, with_cublas=False, log=None, specs={key: spec})[0]
        if log:
            log(f"{spec.variant}: {result.timing.median * 1e6:.0f} us, {result.tflops:.1f} TFLOP/s, {result.check}")
        out.append((spec, result))
    return out


def size_sweep(key: str, shapes: dict[str, list[tuple[int, int, int]]], reps: int = 20,
               log: Callable[[str], None] | None = print) -> list[dict]:
    """The kernel `key` and cuBLAS on each (M, N, K) of each family: both checked, both timed."""
    rows = []
    for family, family_shapes in shapes.items():
        for M, N, K in family_shapes:
            base, kernel = bench([key], M, N, K, reps=reps, warmup=5, log=None)
            row = {"family": family, "label": f"{M}x{N}x{K}", "M": M, "N": N, "K": K,
                   "kernel_tflops": kernel.tflops, "cublas_tflops": base.tflops,
                   "passed": kernel.passed and base.passed}
            rows.append(row)
            if log:
                log(f"{family:<12} {row['label']:>18}: kernel {row['kernel_tflops']:6.1f}, cuBLAS "
                    f"{row['cublas_tflops']:6.1f} TFLOP/s ({100 * row['kernel_tflops'] / row['cublas_tflops']:5.1f}%)"
                    f"  {'PASS' if row['passed'] else 'FAIL'}")
    return rows


def time_spec(spec, M: int, N: int, K: int, reps: int = 30) -> Timing:
    """Time one kernel configuration on random inputs without checking its result: for variants
    whose measurement switches make the result wrong on purpose (tcgemm.catalog `switches`)."""
    A, B = random_operands(M, N, K)
    C = require_gpu().full((M, N), np.nan, dtype=spec.out_dtype)
    return time_launches(lambda: launch(spec, A, B, C), warmup=5, reps=reps)


def k_scaling(spec, M: int = 4096, N: int = 4096, Ks=(2048, 4096, 8192, 16384), reps: int = 20):
    """Times of `spec` at several K (fixed M, N) and the line through them (tcgemm.pipelines.scaling)."""
    from tcgemm.pipelines.scaling import fit_k_scaling

    times = [float("inf")] * len(Ks)
    for _ in range(2):      # two passes over K, keeping each K's faster median: one slow pass (clocks
        for i, K in enumerate(Ks):     # still rising, say) would otherwise bend the line
            times[i] = min(times[i], time_spec(spec, M, N, K, reps).median)
    return times, fit_k_scaling(M, N, Ks, times)
