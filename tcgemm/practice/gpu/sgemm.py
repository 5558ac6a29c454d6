"""The sgemm exercises checked on the GPU (see tcgemm.practice.gpu): Kernels S1 (tile 64) and S2 (tile 128)
themselves, run on one block of C with a few lines added (tcgemm.practice.gpu.traced) through which every
thread records the address of each of its LDS.128 (as a byte offset in As or Bs) and of each of its global
loads, and starts its accumulators at its own thread index instead of 0. With A and B zero, every element
of C then comes out of the kernel's own write-back holding the index of the thread that computed it.

Checked against that: `thread_origin` (the first row and column of C that thread tid writes), `lds_address`
and `global_load`. `extra_cycles` and `c_register` have no hardware check: they are the register-bank model
(Maxwell's 4 banks, and Volta's 2), and a bank conflict is a cycle of delay that shows only in timings,
spread over thousands of instructions; nor can a kernel be built from a numbering, since CUDA C does not
choose registers (the chapter scores the compiled kernels' own registers instead).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

KERNELS = {64: "s1", 128: "s2"}          # tile -> kernel
THREADS, SLOTS = 256, 36                 # trace rows, and per thread: 8 k x 2 matrices x 2 LDS.128, 4 loads
GLOBAL_SLOTS = 32
UNSET = 2 ** 64 - 1
PRELUDE = r"""// tcgemm.practice.gpu.sgemm: per thread, the offset of each LDS.128 and the address of each global load.
#define SGEMM_TRACE_THREADS 256
#define SGEMM_TRACE_SLOTS 36
__device__ unsigned long long sgemm_trace[SGEMM_TRACE_THREADS * SGEMM_TRACE_SLOTS];
__device__ __forceinline__ const float *lds_traced(const float *p, const float *first, int k, int matrix, int load) {
    if (threadIdx.x < SGEMM_TRACE_THREADS && k < 8)
        sgemm_trace[threadIdx.x * SGEMM_TRACE_SLOTS + (k * 2 + matrix) * 2 + load] = 4 * (p - first);
    return p;
}
__device__ __forceinline__ const float *ldg_traced(const float *p, int j) {
    if (threadIdx.x < SGEMM_TRACE_THREADS && j < 4)
        sgemm_trace[threadIdx.x * SGEMM_TRACE_SLOTS + 32 + j] = reinterpret_cast<unsigned long long>(p);
    return p;
}
"""
_LOAD = "staged[j] = load4(src + (size_t)(k0 + j * ROWS_STEP) * ld);"
EDITS = (
    ("f.a[0] = load4(&t.a[k][ra]);", "f.a[0] = load4(lds_traced(&t.a[k][ra], t.a[0], k, 0, 0));"),
    ("f.a[1] = load4(&t.a[k][ra + HALF]);", "f.a[1] = load4(lds_traced(&t.a[k][ra + HALF], t.a[0], k, 0, 1));"),
    ("f.b[0] = load4(&t.b[k][rb]);", "f.b[0] = load4(lds_traced(&t.b[k][rb], t.b[0], k, 1, 0));"),
    ("f.b[1] = load4(&t.b[k][rb + HALF]);", "f.b[1] = load4(lds_traced(&t.b[k][rb + HALF], t.b[0], k, 1, 1));"),
    (_LOAD, "staged[j] = load4(ldg_traced(src + (size_t)(k0 + j * ROWS_STEP) * ld, j));"),
    ("acc[i][j] = 0.f;", "acc[i][j] = float(tid);"),
)


@dataclass(frozen=True)
class Observed:
    """One traced run of a tile x tile x 8 problem."""
    tile: int
    owner: object        # (tile, tile) numpy array: the thread index each element of C came out with
    slots: object        # (threads, SLOTS) numpy uint64: the recorded offsets and addresses (UNSET: none)
    a: tuple[int, int]   # A's device address and its floats in a row of the stripe (M); B's
    b: tuple[int, int]
    k_rows: int


@lru_cache(maxsize=None)
def trace(tile: int) -> Observed:
    import numpy as np

    from tcgemm.engine.catalog import configured
    from tcgemm.engine.gpu.device import require_gpu
    from tcgemm.practice.gpu.traced import device_array, traced_kernel

    if tile not in KERNELS:
        raise ValueError(f"tile must be one of {sorted(KERNELS)}, got {tile!r}")
    cupy = require_gpu()
    spec = configured(KERNELS[tile])
    threads = spec.base_block[0]
    kernel, module = traced_kernel(spec.key, PRELUDE, EDITS)
    M, N, K = spec.tile_m, spec.tile_n, spec.tile_k
    A = cupy.zeros(K * M, cupy.float32)               # A column-major, B row-major: a stripe row per k
    B = cupy.zeros(K * N, cupy.float32)
    C = cupy.full((M, N), cupy.nan, cupy.float32)
    slots = device_array(module, "sgemm_trace", cupy.uint64, THREADS * SLOTS)
    slots.fill(np.uint64(UNSET))
    kernel((1, 1, 1), spec.base_block, (A, B, C, np.int32(M), np.int32(N), np.int32(K)))
    cupy.cuda.runtime.deviceSynchronize()
    return Observed(tile, C.get(), slots.get().reshape(THREADS, SLOTS)[:threads],
                    (A.data.ptr, M), (B.data.ptr, N), K)


# What the run says, in the exercises' terms.
def origin_found(seen: Observed, tid: int) -> tuple[int, int] | None:
    import numpy as np

    rows, cols = np.nonzero(seen.owner == tid)
    return (int(rows.min()), int(cols.min())) if len(rows) else None


def lds_found(seen: Observed, tid: int, k: int, matrix: str, load: int) -> int | None:
    value = int(seen.slots[tid, (2 * k + (matrix == "B")) * 2 + load])
    return None if value == UNSET else value


def load_found(seen: Observed, tid: int, j: int) -> tuple[str, int, int] | None:
    address = int(seen.slots[tid, GLOBAL_SLOTS + j])
    for matrix, (start, row) in (("A", seen.a), ("B", seen.b)):
        if start <= address < start + 4 * row * seen.k_rows:
            k, col = divmod((address - start) // 4, row)
            return matrix, k, col // 4
    return None


def _against() -> str:
    from tcgemm.engine.gpu.device import device_info

    return f"Kernels S1 and S2 traced on the {device_info().name}"


def _thread_origin():
    return (lambda tid, tile: origin_found(trace(tile), tid)), _against()


def _lds_address():
    return (lambda tid, k, matrix, load, tile: lds_found(trace(tile), tid, k, matrix, load)), _against()


def _global_load():
    return (lambda tid, j, tile: load_found(trace(tile), tid, j)), _against()


TRUTHS = {
    "sgemm.thread_origin": _thread_origin,
    "sgemm.lds_address": _lds_address,
    "sgemm.global_load": _global_load,
}
