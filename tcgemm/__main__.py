"""Command line: `python -m tcgemm info`, `python -m tcgemm bench` and `python -m tcgemm sweep`."""
from __future__ import annotations

import argparse
import sys
import textwrap

from tcgemm.engine.catalog import GEMM_KERNELS, all_sources, source_archs
from tcgemm.errors import TcgemmError


def field(name: str, text: str, width: int | None = None) -> None:
    """One `name  text` line of `info`, wrapped under its text at `width` (default: the book's text
    column, tcgemm.style.TEXT_COLUMN_CHARS, which fits terminals too)."""
    if width is None:
        from tcgemm.style import TEXT_COLUMN_CHARS as width
    print(textwrap.fill(text, width, initial_indent=f"{name:<15}", subsequent_indent=" " * 15))


def cmd_info(args) -> int:
    from tcgemm.engine.gpu.compile import load_module
    from tcgemm.engine.gpu.device import device_info
    from tcgemm.hw import lower_bound_seconds, peak_for

    info = device_info()
    field("GPU", f"{info.name} ({info.arch}), {info.sm_count} SMs, boost clock {info.sm_clock_mhz:.0f} MHz")
    field("memory", f"{info.memory_bytes / 2**30:.1f} GiB, L2 {info.l2_bytes / 2**20:.0f} MiB, shared memory "
          f"per block {info.shared_mem_per_block // 1024} KiB (opt-in {info.shared_mem_per_block_optin // 1024} KiB)")
    field("software", f"CUDA runtime {info.cuda_runtime}, driver {info.cuda_driver}, CuPy {info.cupy_version}")
    peak = peak_for(info.name)
    if peak:
        bound = lower_bound_seconds(4096, 4096, 4096, peak.tflops)
        field("peak", f"{peak.tflops} TFLOP/s fp16 in / fp32 accumulate ({peak.source})")
        field("4096^3 bound", f"{bound * 1e6:.0f} us at that peak")
    else:
        field("peak", "unknown for this GPU: tables leave out % of peak")
    for source in all_sources():
        if info.arch not in source_archs(source):
            field("compile", f"kernels/{source}: skipped (needs {' or '.join(source_archs(source))})")
            continue
        load_module(source)
        field("compile", f"kernels/{source}: OK ({info.arch})")
    return 0


def cmd_bench(args) -> int:
    from tcgemm.engine.catalog import bench_keys
    from tcgemm.engine.gpu.bench import GROUPS, compare_timings, group_of, time_in_rounds
    from tcgemm.engine.gpu.device import device_info
    from tcgemm.engine import results
    from tcgemm.engine.timing import DEFAULT_PLAN

    M, N, K = args.mnk if args.mnk else (args.size,) * 3
    info = device_info()
    keys = args.kernels or bench_keys()
    print(f"{info.name} ({info.arch}); C = A @ B, M={M} N={N} K={K}")
    json_path = results.json_path(args.json, info.name) if args.json else None   # before the minutes of timing
    groups, passed = [], True
    for dtype, group in GROUPS.items():
        group_keys = [k for k in keys if group_of(k) == dtype]
        if not group_keys:
            continue
        print(f"\n== {group.heading}")
        comparison = compare_timings(group_keys, M, N, K, reps=args.reps, warmup=args.warmup, ceiling=True, log=print)
        passed &= all(r.passed for r in comparison.results)
        print()
        print(comparison.table)
        if args.rounds:
            print()
            print(time_in_rounds(group_keys, M, N, K, args.rounds, args.reps, log=print))
        groups.append(results.bench_group(dtype, group.heading, group.baseline, comparison.results,
                                          comparison.peak_tflops, group.ceiling_name, comparison.ceiling_tflops))
    if json_path:
        doc = results.document(info.as_dict(), M, N, K, DEFAULT_PLAN.with_counts(args.reps, args.warmup), groups)
        print(f"\nwrote {results.write(doc, json_path)} ({results.SCHEMA})")
    return 0 if passed else 1


def cmd_sweep(args) -> int:
    from tcgemm.engine import sweep
    from tcgemm.engine.gpu.device import device_info
    from tcgemm.engine.gpu.sweep import sweep as run_sweep
    from tcgemm.engine.results import slug

    info = device_info()
    types = [t for t in sweep.TYPES if args.types is None or f"{t[0]}->{t[1]}" in args.types]
    print(f"{info.name} ({info.arch}); tcgemm.matmul against cuBLAS on {len(sweep.SHAPES)} shapes")
    rows = run_sweep(types=types, kernel=args.kernel, log=print)
    print()
    print(sweep.sweep_table(rows, info.name))
    if args.json:
        path = sweep.write(sweep.document(info.as_dict(), rows), f"{args.json.rstrip('/')}/sweep/{slug(info.name)}.json"
                           if not args.json.endswith(".json") else args.json)
        print(f"\nwrote {path} ({sweep.SCHEMA})")
    return 0 if all(r.check == "PASS" for r in rows) else 1


def rounds_count(text: str) -> int:
    """--rounds: a whole number of at least tcgemm.engine.rounds.MIN_ROUNDS."""
    from tcgemm.engine.rounds import MIN_ROUNDS

    if not text.isdigit() or int(text) < MIN_ROUNDS:
        raise argparse.ArgumentTypeError(f"rounds must be a whole number of at least {MIN_ROUNDS} "
                                         f"(one round has no spread), got {text!r}")
    return int(text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tcgemm", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="the GPU, its peak, and a compile check of every kernel")
    b = sub.add_parser("bench", help="check and time every GEMM kernel and cuBLAS")
    b.add_argument("--size", type=int, default=4096, help="M = N = K (default 4096)")
    b.add_argument("--mnk", type=int, nargs=3, metavar=("M", "N", "K"))
    b.add_argument("--kernels", nargs="*", choices=list(GEMM_KERNELS))
    b.add_argument("--reps", type=int, help="time exactly this many runs per kernel (default: as many as "
                   "tcgemm.engine.timing.TimingPlan asks: 50 ms of kernel time and 500 runs, or 1 s)")
    b.add_argument("--warmup", type=int, help="at least this many warm-up runs (default 3; the warm-up "
                   "also lasts at least 0.2 s)")
    b.add_argument("--rounds", type=rounds_count, metavar="N",
                   help="then time the kernels and cuBLAS in turn N times (N >= 2) and print each kernel's "
                        "median speed over cuBLAS, its spread over the rounds and a verdict (ahead, level, behind)")
    b.add_argument("--json", metavar="PATH",
                   help="also write the results as JSON (schema in tcgemm/engine/results.py): to PATH, or for a folder "
                        "such as results/ to results/<gpu>.json, named after the GPU")
    w = sub.add_parser("sweep", help="tcgemm.matmul against cuBLAS of the same types on the sweep's shapes")
    w.add_argument("--types", nargs="*", choices=["float16->float16", "bfloat16->bfloat16", "float16->float32"],
                   help="the input -> output types to sweep (default: all three)")
    w.add_argument("--kernel", help="run this kernel of the catalog instead of tcgemm.matmul's choice")
    w.add_argument("--json", metavar="PATH", help="also write the rows as JSON: to PATH (*.json), or for a folder "
                   "such as results/ to results/sweep/<gpu>.json")
    args = parser.parse_args(argv)
    try:
        return {"info": cmd_info, "bench": cmd_bench, "sweep": cmd_sweep}[args.command](args)
    except TcgemmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
