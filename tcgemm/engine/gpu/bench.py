"""Check and time kernels on the GPU: fresh random inputs, NaN-poisoned outputs, CUDA-event timing
(tcgemm.engine.gpu.timing), every kernel through the checked launch of tcgemm.engine.gpu.gemm.prepare."""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from tcgemm.engine.catalog import bench_keys
from tcgemm.engine.accuracy import Check
from tcgemm.errors import OperandError
from tcgemm.hw import Peak, peak_for
from tcgemm.engine.rounds import round_order, rounds_table, summarize_rounds
from tcgemm.engine.report import BenchResult, Timing, bar_chart, bench_table, checks_table, size_label
from tcgemm.table import Column, Table
from tcgemm.engine.timing import DEFAULT_PLAN, SWEEP_PASSES, TARGET_ONLY_PLAN, faster_pass, spread_table, windows_table
from tcgemm.engine.operands import check_gemm_shape
from tcgemm.engine.gpu import cublas
from tcgemm.engine.gpu.compile import current_arch
from tcgemm.engine.gpu.device import device_info, require_gpu
from tcgemm.engine.gpu.gemm import (check_output, for_this_gpu, run_kernel, kernel_function, kernel_spec, poisoned, poisoned_output, prepare,
                              random_operands, reference)
from tcgemm.engine.gpu.timing import time_launches

CUBLAS = "cuBLAS (cublasGemmEx)"
CUBLAS_SGEMM = "cuBLAS SGEMM (cublasSgemm, TF32 off)"
# The cublasGemmEx baselines by key: (name, input dtype, output dtype), all with an fp32 accumulator
# (CUBLAS_COMPUTE_32F); "cublas" is the book's first.
CUBLAS_GEMM_EX = {
    "cublas": (CUBLAS, "float16", "float32"),
    "cublas-fp16-c": ("cuBLAS (cublasGemmEx, fp16 C)", "float16", "float16"),
    "cublas-bf16": ("cuBLAS (cublasGemmEx, bf16 in)", "bfloat16", "float32"),
    "cublas-bf16-c": ("cuBLAS (cublasGemmEx, bf16 in, bf16 C)", "bfloat16", "bfloat16"),
}


@dataclass(frozen=True)
class Runner:
    """One way to compute C = A @ B: a name, how to allocate C, and how to prepare a launch into it."""
    name: str
    out_dtype: str
    prepare_launch: Callable  # (A, B, C) -> a callable that computes C = A @ B each time it is called
    spec: object = None  # the GemmKernel configuration, None for cuBLAS
    in_dtype: str = "float16"
    accumulator: str = "float32"

    @property
    def group(self) -> str:
        """The key of the GROUPS entry it is compared in (group_key of its types)."""
        return group_key(self.in_dtype, self.out_dtype)

    def new_output(self, M: int, N: int):
        return poisoned((M, N), self.out_dtype) if self.spec is None else poisoned_output(self.spec, M, N)


def accumulation_errors(Ks=(256, 1024, 4096, 16384), M: int = 256, N: int = 256) -> Table:
    """Relative Frobenius error of M x N x K products against `reference`, for each K: HGEMM
    accumulates in fp16, Kernel 1.1 in fp32, on the same operands."""
    cupy = require_gpu()
    rows = []
    for K in Ks:
        A, B = random_operands(M, N, K)
        ref = cupy.asnumpy(reference(A, B))
        rows.append([K, check_output(run_kernel("h1", A, B), ref).rel_fro,
                     check_output(run_kernel("k1.1", A, B), ref).rel_fro])
    return Table(["K", Column("fp16 accumulate (HGEMM)", ".2e"), Column("fp32 accumulate (Kernel 1.1)", ".2e")],
                 rows, caption=f"Relative Frobenius error of {M} × {N} × K products against an fp32 reference")


def runner(key: str, spec=None) -> Runner:
    """cuBLAS, or the kernel `key` in the configuration the launcher picks (or `spec`)."""
    if key in CUBLAS_GEMM_EX:
        name, in_dtype, out_dtype = CUBLAS_GEMM_EX[key]
        element = "bf16" if in_dtype == "bfloat16" else "fp16"
        return Runner(name, out_dtype, partial(cublas.prepare_gemm_ex, element=element, out_dtype=out_dtype),
                      in_dtype=in_dtype)
    if key == "cublas-sgemm":
        return Runner(CUBLAS_SGEMM, "float32", cublas.prepare_sgemm, in_dtype="float32")
    spec = for_this_gpu(kernel_spec(key)) if spec is None else spec
    name = f"{spec.title} ({spec.variant})" if spec.configs or spec.variant != kernel_spec(key).variant else spec.title
    return Runner(name, spec.out_dtype, partial(prepare, spec), spec, spec.in_dtype, spec.accumulator)


def on_random_operands(r: Runner, M: int, N: int, K: int):
    """r's launch prepared on fresh random operands (random_operands) into a new output."""
    return r.prepare_launch(*random_operands(M, N, K, dtype=r.in_dtype), r.new_output(M, N))


def check_runner(r: Runner, M: int, N: int, K: int, seed: int | None = None) -> Check:
    """Run once on fresh random inputs into a NaN-filled output and compare with the fp32 reference,
    under tcgemm.engine.accuracy's tolerance for sums over K terms."""
    cupy = require_gpu()
    A, B = random_operands(M, N, K, seed, r.in_dtype)
    C = r.new_output(M, N)
    r.prepare_launch(A, B, C)()
    ref = reference(A, B)
    cupy.cuda.get_current_stream().synchronize()
    return check_output(C, ref, K, r.accumulator)


def progress_bar(done: int, total: int, label: str, width: int = 24) -> str:
    """A text progress bar, e.g. '[#########...............]  3/8  Kernel 2.0'."""
    filled = round(width * done / total) if total else width
    return f"[{'#' * filled}{'.' * (width - filled)}] {done:>2}/{total}  {label}"


def why_not(spec, M: int, N: int, K: int) -> str | None:
    """Why the kernel cannot run an M x N x K problem here (it needs a newer GPU, as Kernel 5.0 needs
    sm_90; the size is not a multiple of its tiles, ...), or None."""
    if reason := spec.unsupported(current_arch()):
        return reason
    try:
        check_gemm_shape(spec, M, N, K)
    except OperandError as exc:
        return str(exc)
    return None


def bench(keys=None, M: int = 4096, N: int = 4096, K: int = 4096, reps: int | None = None,
          warmup: int | None = None, with_cublas: bool = True, log: Callable[[str], None] | None = None,
          specs: dict | None = None) -> list[BenchResult]:
    """Check, then time, each kernel (and cuBLAS) at one size. Kernels that cannot run the size (not a
    multiple of their tiles) are skipped, the reason logged. `log`, if given, receives progress lines
    (the command line passes print; notebooks show none). `specs` maps a key to the configuration to
    run instead of the launcher's choice. With cuBLAS, each input dtype's kernels come after their own
    baseline (cublasGemmEx for fp16, cublasSgemm for fp32). Timing: tcgemm.engine.gpu.timing.time_launches
    (`reps` fixes the number of timed runs, `warmup` the least number of warm-up runs)."""
    keys = bench_keys() if keys is None else list(keys)
    if with_cublas:
        keys = with_baselines(keys, specs)
    results = []
    for i, key in enumerate(keys, 1):
        r = runner(key, (specs or {}).get(key))
        if log:
            log(progress_bar(i - 1, len(keys), r.name))
        skip = why_not(r.spec, M, N, K) if r.spec is not None else None
        if skip:
            if log:
                log(f"    skipped: {skip}")
            continue
        check = check_runner(r, M, N, K)
        timing = time_launches(on_random_operands(r, M, N, K), reps, warmup)
        results.append(BenchResult(r.name, M, N, K, timing, check.passed, str(check), key))
        if log:
            log(f"    {check}; median {timing.median * 1e6:.0f} us over {timing.runs} runs")
    if log:
        log(progress_bar(len(keys), len(keys), "done"))
    return results


def group_key(in_dtype: str, out_dtype: str) -> str:
    """The GROUPS key of kernels with these input and output dtypes: the input dtype, and the output's
    where C is not fp32 ("float16 -> float16")."""
    return in_dtype if out_dtype == "float32" else f"{in_dtype} -> {out_dtype}"


def group_of(key: str, spec=None) -> str:
    """The GROUPS key of cuBLAS baseline `key` or of kernel `key` (in configuration `spec`): a kernel of one
    pair of types by its input dtype (HGEMM, whose C is fp16, among the fp16 kernels), Kernel 5.9's builds
    by input and output (group_key)."""
    if key == "cublas-sgemm":
        return "float32"
    if key in CUBLAS_GEMM_EX:
        return group_key(*CUBLAS_GEMM_EX[key][1:])
    spec = kernel_spec(key) if spec is None else spec
    return group_key(spec.in_dtype, spec.out_dtype) if spec.dtypes else spec.in_dtype


def with_baselines(keys, specs: dict | None = None) -> list[str]:
    """`keys` grouped by their types (group_of), each group led by its cuBLAS baseline (kept where already
    given). `specs`: configurations to use instead of the catalog's, by key."""
    groups: dict[str, list[str]] = {}
    for key in keys:
        groups.setdefault(group_of(key, (specs or {}).get(key)), []).append(key)
    return [k for name, group in groups.items()
            for k in dict.fromkeys([GROUPS[name].baseline, *group])]


@dataclass(frozen=True)
class Group:
    """What the kernels of one input dtype are compared with."""
    heading: str
    baseline: str           # the key of its cuBLAS baseline
    peak_field: str         # the hw.Peak field of its datasheet peak
    ceiling_name: str       # the instruction whose measured rate is its ceiling

    def measure_ceiling(self):
        from tcgemm.engine.gpu import ceiling, ffma_ceiling   # here: only a ceiling measurement needs them
        return {"mma.sync": ceiling.measure, "FFMA": ffma_ceiling.measure}[self.ceiling_name]()


GROUPS = {
    "float16": Group("Tensor Cores: fp16 in, fp32 accumulate", "cublas", "tflops", "mma.sync"),
    "float32": Group("CUDA cores (SGEMM): fp32 in, fp32 accumulate, FFMA", "cublas-sgemm", "fp32", "FFMA"),
    # Kernel 5.9's other types: the same Tensor Core rate for bf16 as for fp16 (the datasheet's)
    "float16 -> float16": Group("Tensor Cores: fp16 in, fp32 accumulate, fp16 C", "cublas-fp16-c", "tflops",
                                "mma.sync"),
    "bfloat16": Group("Tensor Cores: bf16 in, fp32 accumulate", "cublas-bf16", "tflops", "mma.sync"),
    "bfloat16 -> bfloat16": Group("Tensor Cores: bf16 in, fp32 accumulate, bf16 C", "cublas-bf16-c", "tflops",
                                  "mma.sync"),
}


@dataclass(frozen=True)
class Comparison:
    """Kernels of one input dtype against their cuBLAS baseline (results[0]), the datasheet peak and,
    if measured, the ceiling: `table` for the numbers, `figure()` for the bar chart."""
    device: str
    dtype: str
    M: int
    N: int
    K: int
    results: tuple[BenchResult, ...]
    peak: Peak | None
    ceiling: object = None      # tcgemm.engine.gpu.ceiling.Ceiling or ffma_ceiling.FfmaCeiling (has .tflops)

    @property
    def group(self) -> Group:
        return GROUPS[self.dtype]

    @property
    def peak_tflops(self) -> float | None:
        return getattr(self.peak, self.group.peak_field) if self.peak else None

    @property
    def ceiling_tflops(self) -> float | None:
        return self.ceiling.tflops if self.ceiling is not None else None

    @property
    def baseline(self) -> BenchResult:
        return self.results[0]

    @property
    def kernels(self) -> tuple[BenchResult, ...]:
        """The results of the book's kernels (all but the baseline)."""
        return self.results[1:]

    def result(self, key: str) -> BenchResult:
        for r in self.results:
            if r.key == key:
                return r
        raise KeyError(f"no result for {key!r}; have {[r.key for r in self.results]}")

    @property
    def size(self) -> str:
        return size_label(self.M, self.N, self.K)

    @property
    def table(self) -> Table:
        low, high = (f(r.timing.runs for r in self.results) for f in (min, max))
        runs = f"{low}" if low == high else f"{low} to {high}"
        notes = [f"µs: median of {runs} timed runs per kernel after a warm-up, L2 flushed before each run; "
                 "±: half the interquartile range"]
        if self.peak_tflops:
            notes.append(f"% peak: of {self.peak_tflops} TFLOP/s ({self.peak.label}, datasheet)")
        if self.ceiling is not None:
            notes.append(f"% {self.group.ceiling_name}: of {self.ceiling_tflops:.1f} TFLOP/s, the "
                         f"{self.group.ceiling_name} ceiling measured on this GPU")
        return bench_table(list(self.results), self.baseline.name, self.peak_tflops, self.ceiling_tflops,
                           self.group.ceiling_name, "cuBLAS",
                           f"{self.device}, C = A @ B at {self.size}. {self.group.heading}", notes)

    def figure(self):
        return bar_chart(list(self.results), self.peak_tflops,
                         title=f"{self.device}, {self.size}\n{self.group.heading}")

    def speedups(self, reference: str | None = None) -> Table:
        """Each kernel's speedup over the kernel `reference` or, without one, over the kernel before it."""
        kernels = self.kernels if reference else self.kernels[1:]
        base = lambda i: self.result(reference) if reference else self.kernels[i]
        against = self.result(reference).name if reference else "the kernel above"
        rows = [[r.name, r.timing.median * 1e6, base(i).timing.median / r.timing.median]
                for i, r in enumerate(kernels)]
        return Table([Column("Kernel"), Column("µs", ".0f"), Column(f"Speedup over {against}", ".2f", unit="×")],
                     rows)


def compare_timings(keys, M: int = 4096, N: int = 4096, K: int = 4096, reps: int | None = None,
                    warmup: int | None = None, ceiling=False, log: Callable[[str], None] | None = None,
                    specs: dict | None = None) -> Comparison:
    """Check and time kernels of one group (input and output dtypes: GROUPS) and their cuBLAS baseline at
    one size. `ceiling`: False for none, True to measure the group's ceiling (mma.sync or FFMA) first, or
    a ceiling measured earlier (anything with .tflops). `specs`: configurations by key, as for bench."""
    keys = list(keys)
    if not keys:
        raise ValueError("compare_timings() needs at least one kernel key")
    dtypes = {key: group_of(key, (specs or {}).get(key)) for key in keys}
    if len(set(dtypes.values())) != 1:
        raise ValueError(f"compare_timings() takes kernels of one input and output type; got {dtypes}: "
                         "call it once per group")
    dtype = dtypes[keys[0]]
    measured = GROUPS[dtype].measure_ceiling() if ceiling is True else (ceiling or None)
    if measured is not None and log:
        log(str(measured))
    results = bench(keys, M, N, K, reps=reps, warmup=warmup, log=log, specs=specs)
    info = device_info()
    return Comparison(info.name, dtype, M, N, K, tuple(results), peak_for(info.name), measured)


def time_in_rounds(keys, M: int = 4096, N: int = 4096, K: int = 4096, rounds: int = 5, reps: int | None = None,
                   log: Callable[[str], None] | None = None, specs: dict | None = None) -> Table:
    """Kernels of one input dtype and their cuBLAS baseline, each checked on fresh random inputs and
    prepared once, then timed in turn (time_launches), `rounds` times, the order rotated each round
    (tcgemm.engine.rounds): the median of each kernel's speed over cuBLAS's, its spread and a verdict. Kernels
    that cannot run the size are left out; a kernel that fails its check stops the run."""
    specs = specs or {}
    keys = with_baselines(list(keys), specs)
    if len({group_of(k, specs.get(k)) for k in keys}) != 1:
        raise ValueError(f"time_in_rounds() takes kernels of one input and output type; got {keys}: "
                         "call it once per group")
    runners = []
    for key in keys:
        r = runner(key, specs.get(key))
        if r.spec is not None and (skip := why_not(r.spec, M, N, K)):
            if log:
                log(f"    {r.name} skipped: {skip}")
            continue
        runners.append(r)
    times = runners_in_rounds(runners, M, N, K, rounds, reps, log)
    baseline = runners[0].name
    return rounds_table(summarize_rounds(times, baseline), baseline, size_label(M, N, K), rounds)


def runners_in_rounds(runners: list[Runner], M: int, N: int, K: int, rounds: int = 5, reps: int | None = None,
                      log: Callable[[str], None] | None = None) -> dict[str, list[float]]:
    """Each runner checked on fresh random inputs and prepared once, then timed in turn (time_launches),
    `rounds` times, the order rotated each round (tcgemm.engine.rounds): the median seconds of each, per round,
    by name (for tcgemm.engine.rounds.summarize_rounds). A runner that fails its check stops the run."""
    launches = {}
    for r in runners:
        if not (check := check_runner(r, M, N, K)).passed:
            raise RuntimeError(f"{r.name} failed its check at {size_label(M, N, K)}: {check}")
        launches[r.name] = on_random_operands(r, M, N, K)
    names = list(launches)
    times = {name: [] for name in names}
    for i in range(rounds):
        for name in round_order(names, i):
            times[name].append(time_launches(launches[name], reps).median)
        if log:
            log(progress_bar(i + 1, rounds, "rounds"))
    return times


def check_kernels(keys, shapes) -> Table:
    """Each kernel checked at each (M, N, K) on fresh random inputs, as a Table."""
    out = []
    for key in keys:
        r = runner(key)
        out += [(r.name, (M, N, K), check_runner(r, M, N, K)) for M, N, K in shapes]
    return checks_table(out)


def bench_configs(key: str, configs, M: int = 4096, N: int = 4096, K: int = 4096,
                  reps: int | None = None) -> Table:
    """Each (tile_k, stages) configuration of a pipelined kernel, checked and timed, as a Table with
    its shared memory per block (static + dynamic); configurations whose dynamic shared memory this
    GPU cannot give a block are listed as skipped."""
    base = kernel_spec(key)
    limit = device_info().shared_mem_per_block_optin
    rows = []
    for tile_k, stages in configs:
        spec = base.with_config(tile_k, stages)
        if spec.smem_bytes > limit:
            rows.append([tile_k, stages, spec.smem_bytes / 1024, None, None,
                         f"skipped: over this GPU's {limit // 1024} KB"])
            continue
        r = bench([key], M, N, K, reps=reps, with_cublas=False, specs={key: spec})[0]
        shared = kernel_function(spec).shared_size_bytes + spec.smem_bytes
        rows.append([tile_k, stages, shared / 1024, r.timing.median * 1e6, r.tflops, "PASS" if r.passed else "FAIL"])
    return Table([Column("BK"), Column("Stages"), Column("Shared KB", ".0f"), Column("µs", ".0f"),
                  Column("TFLOP/s", ".1f"), Column("Check")], rows,
                 caption=f"{base.title} at {size_label(M, N, K)}, by tile depth BK and pipeline stages")


def size_sweep(key: str, shapes: dict[str, list[tuple[int, int, int]]], reps: int | None = None,
               passes: int = SWEEP_PASSES) -> list[dict]:
    """The kernel `key` and cuBLAS on each (M, N, K) of each family: both checked, both timed, in
    `passes` passes over all the shapes, keeping each shape's fastest median (kernel and cuBLAS each).
    A shape the kernel cannot run (not a multiple of its tiles) gets kernel_tflops NaN and skipped
    True; passed is False when any checked result was wrong."""
    if passes < 1:
        raise ValueError(f"a sweep needs at least one pass, got passes={passes}")
    flat = [(family, shape) for family, family_shapes in shapes.items() for shape in family_shapes]
    best = [None] * len(flat)
    for _ in range(passes):
        for i, (family, (M, N, K)) in enumerate(flat):
            results = {r.key: r for r in bench([key], M, N, K, reps=reps)}
            base, kernel = results[with_baselines([key])[0]], results.get(key)
            row = {"family": family, "label": f"{M}x{N}x{K}", "M": M, "N": N, "K": K,
                   "kernel_tflops": kernel.tflops if kernel else float("nan"),
                   "cublas_tflops": base.tflops, "skipped": kernel is None,
                   "passed": base.passed and (kernel is None or kernel.passed)}
            best[i] = row if best[i] is None else faster_pass(best[i], row)
    return best


def timing_windows(keys=("cublas", "k4.6"), size: int = 8192, repeats: int = 6,
                   plans=(TARGET_ONLY_PLAN, DEFAULT_PLAN)) -> Table:
    """Each of `keys` at size³, timed `repeats` times in a row under each plan (tcgemm.engine.timing): how far
    one median moves from one timing to the next when it covers few runs or about a second of them."""
    rows = []
    for key in keys:
        r = runner(key)
        run = on_random_operands(r, size, size, size)
        who = _short_name(r)
        for plan in plans:
            rows.append((who, plan, *_runs_and_medians(time_launches(run, plan=plan) for _ in range(repeats))))
    return windows_table(rows, f"{size}³")


PLACEMENT_STEP = 2_621_440   # bytes: the shift, per timing, of fresh arrays in placement_spread


def placement_spread(keys=("cublas", "k4.6"), size: int = 512, repeats: int = 8) -> Table:
    """Each of `keys` at size³ timed `repeats` times on the same arrays, then `repeats` times on fresh
    arrays (new random operands and output each time, allocated after a spacer i × PLACEMENT_STEP bytes
    long, so that timing i finds them at another place in memory): how much of the spread between
    timings comes with where the arrays lie."""
    cupy = require_gpu()
    rows = []
    for key in keys:
        r = runner(key)
        who = _short_name(r)
        same = on_random_operands(r, size, size, size)
        rows.append((who, "the same arrays", *_runs_and_medians(time_launches(same) for _ in range(repeats))))
        del same
        fresh = []
        for i in range(repeats):
            spacer = cupy.empty(1 + i * PLACEMENT_STEP, dtype=np.uint8)
            fresh.append(time_launches(on_random_operands(r, size, size, size)))
            del spacer
        rows.append((who, "fresh arrays each time", *_runs_and_medians(fresh)))
    return spread_table(rows, "timed on", f"{repeats} timings in a row at {size}³")


def _short_name(r: Runner) -> str:
    """'cuBLAS' or 'Kernel 4.6': a runner's name for a narrow table."""
    return "cuBLAS" if r.spec is None else r.spec.short_title


def _runs_and_medians(timings) -> tuple[list[int], list[float]]:
    timings = list(timings)
    return [t.runs for t in timings], [t.median for t in timings]


def time_spec(spec, M: int, N: int, K: int, reps: int | None = None) -> Timing:
    """Time one kernel configuration on random inputs without checking its result: for variants
    whose measurement switches make the result wrong on purpose (tcgemm.engine.catalog `switches`)."""
    return time_launches(prepare(spec, *random_operands(M, N, K, dtype=spec.in_dtype)), reps)


def faster_of_passes(jobs, reps: int | None = None, passes: int = 2) -> list[float]:
    """The median time of each (spec, M, N, K) of `jobs` (time_spec), timed in `passes` passes over
    all of them, keeping each job's faster median: one slow pass (clocks still rising, say) does not
    decide a time."""
    times = [float("inf")] * len(jobs)
    for _ in range(passes):
        times = [min(t, time_spec(spec, M, N, K, reps).median) for t, (spec, M, N, K) in zip(times, jobs)]
    return times


def switch_cost(key: str, switch: str, sizes=(4096, 8192), reps: int | None = None) -> Table:
    """Kernel `key` at each cube size as written and with its measurement switch `switch` on (which
    removes a part of its work: tcgemm.engine.catalog `switches`), and the share of the time that part takes.
    Each time is the faster median of two passes over both variants."""
    spec = for_this_gpu(kernel_spec(key))
    rows = []
    for size in sizes:
        written, skipped = faster_of_passes([(v, size, size, size) for v in (spec, spec.with_switches(switch))], reps)
        rows.append([f"{size}³", f"{written * 1e6:.1f}", f"{skipped * 1e6:.1f}", f"{1 - skipped / written:.1%}"])
    return Table([Column("size"), Column("as written, µs", align="right"), Column(f"{switch}, µs", align="right"),
                  Column("share of the time", align="right")], rows, caption=f"{spec.title}: what {switch} removes")
