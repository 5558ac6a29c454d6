"""The numerics chapter on the GPU: the rounding probe, error against K, and the accumulation bias.

Each operand goes to kernels/probe_rounding.cu as the register words of its warp fragments, placed
by tcgemm.fragment_layouts and encoded by tcgemm.registers, so the kernels know no layout.
What the numbers mean is decided by the pure module tcgemm.numerics.rounding.
"""
from __future__ import annotations

import numpy as np

from tcgemm.engine.catalog import PROBES
from tcgemm.errors import UnsupportedOnGPUError
from tcgemm.fragment_layouts import mma_layout, unsupported
from tcgemm.registers import from_registers, to_registers
from tcgemm.engine.gpu.bench import time_spec
from tcgemm.engine.gpu.compile import current_arch, get_function
from tcgemm.engine.gpu.device import require_gpu
from tcgemm.engine.gpu.gemm import for_this_gpu, kernel_spec, prepare
from tcgemm.numerics.rounding import MMA_TYPES, MmaType, cases, error_stats, quantize, verdict, verdict_table
from tcgemm.table import Column, Table

_SOURCE = PROBES["rounding"].source
TILE_M, TILE_N = 16, 8


def skipped(t: MmaType) -> str | None:
    """None when this GPU runs mma type t, else the one line that says why it is skipped."""
    return unsupported(t.variant, current_arch())


def _require(t: MmaType):
    if reason := skipped(t):
        raise UnsupportedOnGPUError(reason)
    return require_gpu()


def _fragments(matrices: np.ndarray, operand: str, t: MmaType) -> np.ndarray:
    """(..., rows, cols) matrices -> (..., 32, registers) uint32 words of their fragments."""
    layout = mma_layout(t.shape, operand, t.ab, t.acc)
    element_type = t.ab if operand in "AB" else t.acc
    return to_registers(matrices[..., layout.row, layout.col], element_type)


def observe(t: MmaType, case_list=None) -> np.ndarray:
    """Run each case (tcgemm.numerics.rounding.cases) as one mma.sync; return its D, (cases, 128) values."""
    cupy = _require(t)
    case_list = cases(t) if case_list is None else case_list
    K = t.k
    a = np.array([np.broadcast_to(np.array(c.a, dtype=np.float64), (TILE_M, K)) for c in case_list])
    b = np.array([np.broadcast_to(np.array(c.b, dtype=np.float64)[:, None], (K, TILE_N)) for c in case_list])
    c = np.array([np.full((TILE_M, TILE_N), float(x.c)) for x in case_list])
    words = [cupy.asarray(_fragments(m, op, t)) for m, op in ((a, "A"), (b, "B"), (c, "C"))]
    d = cupy.zeros_like(words[2])
    get_function(_SOURCE, f"rounding_{t.kernel_suffix}")((len(case_list),), (32,), (*words, d))
    layout = mma_layout(t.shape, "D", t.ab, t.acc)
    values = from_registers(cupy.asnumpy(d), t.acc)
    return np.array([layout.scatter(v) for v in values]).reshape(len(case_list), -1)


def rounding_verdicts(types=None) -> tuple[list, list[str]]:
    """(verdicts of the types this GPU runs, one line per type it skips)."""
    verdicts, skips = [], []
    for t in (MMA_TYPES.values() if types is None else types):
        if reason := skipped(t):
            skips.append(reason)
        else:
            verdicts.append(verdict(t, observe(t)))
    return verdicts, skips


def rounding_table(types=None) -> Table:
    """What this GPU's mma.sync does, per type: tcgemm.numerics.rounding.verdict_table of the observations."""
    verdicts, skips = rounding_verdicts(types)
    table = verdict_table(verdicts)
    return Table(table.columns, table.rows, caption=f"How mma.sync rounds on this GPU ({current_arch()})",
                 notes=[*table.notes, *skips])


# ---- error against K ---------------------------------------------------------------------------

def _random(shape, ab: str, low: float, rng) -> np.ndarray:
    scale = 127 if ab == "s8" else 1
    return quantize(rng.uniform(low, 1, shape) * scale, ab)


def accumulate(t: MmaType, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """C = A B with one warp per 16 x 8 tile of C and one accumulator over all of K, as mma.sync
    type t computes it. A (M, K), B (K, N): float64 values exact in t's input type; M, N and K
    multiples of 16, 8 and t's k."""
    cupy = _require(t)
    (M, K), N = A.shape, B.shape[1]
    k = t.k
    if M % TILE_M or N % TILE_N or K % k or B.shape[0] != K:
        raise ValueError(f"A {A.shape} and B {B.shape}: M, N, K must be multiples of {TILE_M}, {TILE_N}, {k}")
    # (tile rows, k-steps, 16, k) and (tile columns, k-steps, k, 8): each warp's fragments in order.
    a_tiles = A.reshape(M // TILE_M, TILE_M, K // k, k).transpose(0, 2, 1, 3)
    b_tiles = B.reshape(K // k, k, N // TILE_N, TILE_N).transpose(2, 0, 1, 3)
    a_words = cupy.asarray(_fragments(a_tiles, "A", t))
    b_words = cupy.asarray(_fragments(b_tiles, "B", t))
    d_layout = mma_layout(t.shape, "D", t.ab, t.acc)
    d = cupy.zeros((M // TILE_M, N // TILE_N, 32, d_layout.registers_per_lane), dtype=np.uint32)
    get_function(_SOURCE, f"accumulate_{t.kernel_suffix}")(
        (N // TILE_N, M // TILE_M), (32,), (a_words, b_words, d, np.int32(K // k)))
    values = from_registers(cupy.asnumpy(d), t.acc)
    tiles = np.array([[d_layout.scatter(v) for v in row] for row in values])
    return tiles.transpose(0, 2, 1, 3).reshape(M, N)


def errors_vs_k(Ks=(64, 256, 1024, 4096, 16384, 65536), M: int = 64, N: int = 64, low: float = -1.0,
                types=None, seed: int = 0) -> dict:
    """{type label: [(K, relative Frobenius error, signed mean error), ...]} against an fp64 product
    of the same (rounded) inputs, drawn uniformly from [low, 1) (int8: times 127)."""
    cupy = require_gpu()
    rng = np.random.default_rng(seed)
    out = {}
    for t in (MMA_TYPES.values() if types is None else types):
        if skipped(t):
            continue
        rows = []
        for K in Ks:
            A, B = _random((M, K), t.ab, low, rng), _random((K, N), t.ab, low, rng)
            ref = cupy.asnumpy(cupy.asarray(A) @ cupy.asarray(B))
            rows.append((K, *error_stats(accumulate(t, A, B), ref)))
        out[t.label] = rows
    return out


def errors_table(errors: dict) -> Table:
    """errors_vs_k as a table: one row per K, the relative error of each type."""
    labels = list(errors)
    Ks = [row[0] for row in next(iter(errors.values()))]
    rows = [[K, *(errors[label][i][1] for label in labels)] for i, K in enumerate(Ks)]
    return Table(["K", *(Column(label, ".1e") for label in labels)], rows,
                 caption="Relative Frobenius error against an fp64 product of the same inputs")


# ---- the bias of the book's kernel, and the remedy ---------------------------------------------

def _uniform01_fp16(M: int, N: int, K: int, rng):
    """A (M, K) row-major and B (K, N) column-major, fp16 drawn uniformly from [0, 1)."""
    A = rng.random((M, K), dtype=np.float32).astype(np.float16)
    B = rng.random((N, K), dtype=np.float32).astype(np.float16).T
    return A, B


def bias_vs_k(keys=(("k4.4", ()), ("a1", ("FRESH_ACC",))), Ks=(256, 1024, 4096, 16384), M: int = 512,
              N: int = 512, seed: int = 0) -> Table:
    """Relative Frobenius and signed mean error of fp16 GEMMs on U[0,1) inputs against an fp64
    product, per kernel (key, switches) and K."""
    cupy = require_gpu()
    rng = cupy.random.default_rng(seed)
    specs = [for_this_gpu(kernel_spec(key)).with_switches(*on) if on else for_this_gpu(kernel_spec(key))
             for key, on in keys]
    rows = []
    for K in Ks:
        A, B = _uniform01_fp16(M, N, K, rng)
        ref = cupy.asnumpy(A.astype(np.float64) @ B.astype(np.float64))
        row = [K]
        for spec in specs:
            run = prepare(spec, A, B)
            run()
            row += error_stats(cupy.asnumpy(run.C), ref)
        rows.append(row)
    names = [f"{key}{' ' + '+'.join(on) if on else ''}" for key, on in keys]
    columns = ["K"] + [Column(f"{n}: {what}", fmt) for n in names
                       for what, fmt in (("rel. error", ".2e"), ("signed mean", "+.2e"))]
    return Table(columns, rows, caption=f"fp16 inputs uniform in [0, 1), {M} x {N} x K, against fp64")


def remedy_cost(M: int = 4096, N: int = 4096, K: int = 4096, reps: int | None = None) -> Table:
    """Time of Kernel 4.4, of the ablation kernel as written and with FRESH_ACC, at M x N x K."""
    variants = [("k4.4", for_this_gpu(kernel_spec("k4.4"))), ("a1", for_this_gpu(kernel_spec("a1"))),
                ("a1 FRESH_ACC", for_this_gpu(kernel_spec("a1")).with_switches("FRESH_ACC"))]
    flop = 2 * M * N * K
    rows = []
    for name, spec in variants:
        t = time_spec(spec, M, N, K, reps).median
        rows.append([name, t * 1e3, flop / t / 1e12])
    base = rows[1][1]
    rows = [r + [100 * (r[1] / base - 1)] for r in rows]
    return Table(["kernel", Column("time", ".3f", unit=" ms"), Column("TFLOP/s", ".1f"),
                  Column("vs a1", "+.1f", unit="%")], rows, caption=f"{M} x {N} x {K}, median of timed launches")


if __name__ == "__main__":   # compute-sanitizer's target (tests/gpu/test_sanitizer.py): every probe kernel once
    rng = np.random.default_rng(0)
    for t in MMA_TYPES.values():
        if not skipped(t):
            observe(t)
            accumulate(t, _random((32, 4 * t.k), t.ab, -1.0, rng), _random((4 * t.k, 16), t.ab, -1.0, rng))
