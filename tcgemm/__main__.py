"""Command line: `python -m tcgemm info` and `python -m tcgemm bench`."""
from __future__ import annotations

import argparse
import json
import sys

from tcgemm.catalog import GEMM_KERNELS, all_sources
from tcgemm.errors import TcgemmError


def cmd_info(args) -> int:
    from tcgemm.gpu.compile import load_module
    from tcgemm.gpu.device import device_info
    from tcgemm.hw import lower_bound_seconds, peak_for

    info = device_info()
    print(f"GPU            {info.name} ({info.arch}), {info.sm_count} SMs, boost clock {info.sm_clock_mhz:.0f} MHz")
    print(f"memory         {info.memory_bytes / 2**30:.1f} GiB, L2 {info.l2_bytes / 2**20:.0f} MiB, "
          f"shared memory per block {info.shared_mem_per_block // 1024} KiB "
          f"(opt-in {info.shared_mem_per_block_optin // 1024} KiB)")
    print(f"software       CUDA runtime {info.cuda_runtime}, driver {info.cuda_driver}, CuPy {info.cupy_version}")
    peak = peak_for(info.name)
    if peak:
        bound = lower_bound_seconds(4096, 4096, 4096, peak.tflops)
        print(f"peak           {peak.tflops} TFLOP/s fp16 in / fp32 accumulate ({peak.source})")
        print(f"4096^3 bound   {bound * 1e6:.0f} us at that peak")
    else:
        print("peak           unknown for this GPU: tables will show n/a for % of peak")
    for source in all_sources():
        load_module(source)
        print(f"compile        kernels/{source}: OK ({info.arch})")
    return 0


def cmd_bench(args) -> int:
    from tcgemm.catalog import keys_for
    from tcgemm.gpu import ffma_ceiling
    from tcgemm.gpu.bench import CUBLAS, CUBLAS_SGEMM, bench
    from tcgemm.gpu.ceiling import measure
    from tcgemm.gpu.device import device_info
    from tcgemm.hw import peak_for
    from tcgemm.report import format_table, table_rows

    M, N, K = args.mnk if args.mnk else (args.size,) * 3
    info = device_info()
    peak = peak_for(info.name)
    keys = args.kernels or list(GEMM_KERNELS)
    groups = [  # (input dtype, heading, baseline, datasheet peak, measured ceiling function, its column name)
        ("float16", "Tensor Cores: fp16 in, fp32 accumulate", CUBLAS, peak.tflops if peak else None,
         measure, "mma.sync"),
        ("float32", "CUDA cores (SGEMM): fp32 in, fp32 accumulate, FFMA", CUBLAS_SGEMM, peak.fp32 if peak else None,
         ffma_ceiling.measure, "FFMA"),
    ]
    print(f"{info.name} ({info.arch}); C = A @ B, M={M} N={N} K={K}")
    report, passed = {"device": info.as_dict(), "M": M, "N": N, "K": K, "groups": []}, True
    for dtype, heading, baseline, peak_tflops, ceiling_fn, ceiling_name in groups:
        group_keys = [k for k in keys if k in keys_for(dtype)]
        if not group_keys:
            continue
        print(f"\n== {heading}")
        ceiling = ceiling_fn()
        print(ceiling)
        results = bench(group_keys, M, N, K, reps=args.reps, warmup=args.warmup, log=print)
        passed &= all(r.passed for r in results)
        print()
        print(format_table(results, baseline, peak_tflops, ceiling.tflops, ceiling_name))
        if peak_tflops:
            print(f"% peak: of {peak_tflops} TFLOP/s ({peak.label}, datasheet)")
        print(f"% {ceiling_name}: of {ceiling.tflops:.1f} TFLOP/s, the {ceiling_name} ceiling measured in this run")
        report["groups"].append({"inputs": dtype, "heading": heading, "baseline": baseline,
                                 "ceiling": ceiling_name, "ceiling_tflops": ceiling.tflops,
                                 "rows": table_rows(results, baseline, peak_tflops, ceiling.tflops)})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 0 if passed else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tcgemm", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="the GPU, its peak, and a compile check of every kernel")
    b = sub.add_parser("bench", help="check and time every GEMM kernel and cuBLAS")
    b.add_argument("--size", type=int, default=4096, help="M = N = K (default 4096)")
    b.add_argument("--mnk", type=int, nargs=3, metavar=("M", "N", "K"))
    b.add_argument("--kernels", nargs="*", choices=list(GEMM_KERNELS))
    b.add_argument("--reps", type=int, default=50)
    b.add_argument("--warmup", type=int, default=10)
    b.add_argument("--json", help="also write the table as JSON to this file")
    args = parser.parse_args(argv)
    try:
        return {"info": cmd_info, "bench": cmd_bench}[args.command](args)
    except TcgemmError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
