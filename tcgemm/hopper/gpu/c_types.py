"""Kernel 5.9, C in 16 bits, in each pair of types it compiles for (tcgemm.engine.catalog.HOPPER_DTYPES):
checked in every memory order on odd shapes against the fp32 product, and timed in interleaved rounds
(tcgemm.engine.gpu.bench.time_in_rounds) against cuBLAS with the same input and output types, all the
pairs in one table.
"""
from __future__ import annotations

from tcgemm.engine.catalog import HOPPER_DTYPES, WMMA_CASES
from tcgemm.engine.kernel_types import DTYPE_NAMES, ORDER_NAMES
from tcgemm.engine.accuracy import verdict
from tcgemm.engine.report import size_label
from tcgemm.table import Column, Table
from tcgemm.engine.gpu.bench import runner, time_in_rounds
from tcgemm.engine.gpu.device import device_info
from tcgemm.engine.gpu.gemm import for_this_gpu, kernel_spec
from tcgemm.hopper.gpu.operand_orders import CASES, check_kernel_order, variant_key

KEY = "k5.9"
# N = 257: rows of C that TMA cannot address (not 16-byte aligned), stored from registers; N = 1000: rows
# it can, the last box of each row of tiles cut short; M = 1: one row.
SHAPES = ((129, 257, 75), (1000, 1000, 1007), (1, 4096, 4096))
# Issue 31's target for this step: % of the speed of cuBLAS with the same types, by cube size.
TARGETS = {4096: 103.0, 8192: 105.0}
# The runs of c_type_rounds, each in its own rounds against its cuBLAS: (kernel key, with "/width" for a
# tile width of Kernel 5.11 or 5.12, (input, output) types; None: the catalog's). Kernel 5.7 runs beside
# 5.9 with fp32 C, the same epilogue.
ROUNDS = ((("k5.7", None), (KEY, ("float16", "float32"))),
          ((KEY, ("float16", "float16")),),
          ((KEY, ("bfloat16", "bfloat16")),))
# Kernel 5.10 (stmatrix staging) beside 5.9, in the same rounds for each 16-bit C.
STMATRIX_ROUNDS = (((KEY, ("float16", "float16")), ("k5.10", ("float16", "float16"))),
                   ((KEY, ("bfloat16", "bfloat16")), ("k5.10", ("bfloat16", "bfloat16"))))
# Kernel 5.12 (the last wave split along K) beside 5.9 and 5.11's 192-wide tiles, fp16 in and out.
SPLIT_ROUNDS = (((KEY, ("float16", "float16")), ("k5.11/192", ("float16", "float16")),
                 ("k5.12", ("float16", "float16"))),)


def types_label(in_dtype: str, out_dtype: str) -> str:
    """'bf16 -> bf16': A's and B's type, then C's."""
    return f"{DTYPE_NAMES[in_dtype]} -> {DTYPE_NAMES[out_dtype]}"


def check_c_types(shapes=SHAPES, offsets=(0, 3), dtypes=HOPPER_DTYPES, key: str = KEY) -> Table:
    """Kernel `key` (5.9's default) in each pair of `dtypes`, each memory-order case and each shape, on
    arrays that start 16-byte aligned and on views that do not
    (tcgemm.hopper.gpu.operand_orders.check_kernel_order)."""
    rows = [[types_label(*pair), ORDER_NAMES[WMMA_CASES[case][0]], ORDER_NAMES[WMMA_CASES[case][1]],
             size_label(*mnk)] +
            [verdict(check_kernel_order(case, *mnk, offset, key=key, dtypes=pair)) for offset in offsets]
            for pair in dtypes for case in CASES for mnk in shapes]
    return Table(["A, B -> C", "A", "B", "M×N×K"] + [Column(f"offset {offset}", verdict=True) for offset in offsets],
                 rows, collapse=True, caption=f"{kernel_spec(key).title}: C = A @ B on fresh random inputs",
                 notes=["A, B -> C: the inputs' type, then C's; the products are summed in fp32 in every pair",
                        "offset n: each input starts n elements into its allocation (3: not 16-byte aligned, so "
                        "the launcher copies it into an aligned buffer first)",
                        "relative error against the fp32 product, within the tolerance of tcgemm.engine.accuracy "
                        "and, for a 16-bit C, its last rounding"])


def c_type_rounds(size: int, rounds: int = 5, reps: int | None = None, log=None, runs=ROUNDS) -> Table:
    """Kernel 5.9 in three pairs of types at size³ (or the kernels and types of `runs`, e.g.
    STMATRIX_ROUNDS), each pair in its own interleaved rounds against cuBLAS with its types, in one table."""
    parts = []
    for run in runs:
        specs, titles = {}, {}
        for key, types in run:
            key, width, _ = variant_key(key)
            spec = for_this_gpu(kernel_spec(key))
            spec = spec.with_dtypes(*types) if types else spec
            specs[key] = spec.with_tile_n(width) if width else spec
            titles[key] = f"{spec.short_title}, {width} wide" if width else spec.short_title
        table = time_in_rounds(list(specs), size, size, size, rounds, reps, log=log, specs=specs)
        parts.append((table, {runner(key, spec).name: (titles[key], types_label(spec.in_dtype, spec.out_dtype))
                              for key, spec in specs.items()}))
    return merge_rounds(parts, f"{device_info().name}, C = A @ B at {size_label(size, size, size)}: "
                               f"{rounds} interleaved rounds per pair of types")


def spread_bounds(text: str) -> tuple[float, float]:
    """(95.8, 102.4) from a rounds table's spread, '95.8 to 102.4%' (tcgemm.engine.rounds.rounds_table)."""
    low, sep, high = text.removesuffix("%").partition(" to ")
    if not sep:
        raise ValueError(f"not a spread over rounds: {text!r} (expected 'LOW to HIGH%')")
    return float(low), float(high)


def merge_rounds(parts, caption: str) -> Table:
    """One table from the rounds tables of `parts`, (table, {runner name: (kernel, types)}) each, every
    table's kernels against its own baseline; its spread as two numbers, lowest and highest."""
    rows, baselines = [], []
    for table, labels in parts:
        ratio = next(c.name for c in table.columns if c.name.startswith("% of "))
        baselines.append(ratio.removeprefix("% of "))
        for r in table.records():
            if r["Kernel"] not in labels:
                raise ValueError(f"no label for {r['Kernel']!r}; labelled: {', '.join(labels)}")
            rows.append([*labels[r["Kernel"]], r[ratio], *spread_bounds(r["spread over the rounds"]),
                         r["median µs"], r["verdict"]])
    return Table([Column("Kernel"), Column("A, B -> C"), Column("% of cuBLAS", ".1f", unit="%"),
                  Column("lowest", ".1f", unit="%"), Column("highest", ".1f", unit="%"),
                  Column("median µs", ".0f"), Column("verdict", align="left")], rows, caption=caption,
                 notes=("% of cuBLAS: per round, the time of cuBLAS with the kernel's types over the kernel's "
                        "(each the median of its own runs, L2 flushed before each run); the median over the "
                        "rounds, and the lowest and highest. ahead / behind: in every round; level: the rounds "
                        "disagree.",
                        "Each pair of types in its own rounds, against " + "; ".join(baselines) + "."))
