"""The pipelines exercises checked on the GPU (see tcgemm.practice.gpu): Kernel 3.0 itself, run on one block
with a few lines added (tcgemm.practice.gpu.traced) through which its thread 0 records, in program order, each
copy it issues (the K tile, and the stage read off the shared address its cp.async writes) and each tile it
computes (the stage its ldmatrix reads, and the tag it finds there: the first element of each K tile of A
carries tile + 1, and thread 0 reads its own 16 bytes after the kernel's own wait and barrier, so the read
is the kernel's, not a race).

Checked against that trace, for every N of the chapter's sweep and every K of the cases: `stage` (where the
GPU found tile kt when the loop computed it), `prologue`, `copied` and `ring` (each stage's last copy while
iteration kt computes: that tile, "computing", or "in flight" until it is computed, "free" after).
`wait_count` has no hardware check: a count that is too large makes a race, which one run may or may not
show, so no kernel is built from it; the chapter's checker (tcgemm.pipelines.pipeline.check_schedule)
proves the model's count instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from tcgemm.practice.pipelines import STAGE_COUNTS, TILE_COUNTS
from tcgemm.pipelines.pipeline import stage_states

KERNEL = "k3.0"
RECORDS = 256                  # the trace's capacity: more than the copies and computes of 24 K tiles
COPY, COMPUTE = 0, 1
PRELUDE = r"""// tcgemm.practice.gpu.pipelines: thread 0's copies and computes, in program order.
#define RING_RECORDS 256
__device__ int ring_trace[4 * RING_RECORDS];   // per record: kind (0 copy, 1 compute), tile, stage, tag
__device__ int ring_count;
__device__ __forceinline__ void ring_record(int kind, int tile, int stage, const void *tagged) {
    if (threadIdx.x | threadIdx.y | blockIdx.x | blockIdx.y) return;
    const int n = ring_count++;
    if (n < RING_RECORDS) {
        int *r = ring_trace + 4 * n;
        r[0] = kind;
        r[1] = tile;
        r[2] = stage;
        r[3] = tagged ? *static_cast<const unsigned short *>(tagged) : -1;
    }
}
"""
_COPY = "cp_async_16(a_dst + offset, a_src + t * BK);"
_COMPUTE = "const uint4 *as = &As[(kt % N_STAGES) * STAGE];"
EDITS = (
    (_COPY, _COPY + " ring_record(0, t, (a_dst + offset - smem_u32(As)) / STAGE_BYTES, nullptr);"),
    (_COMPUTE, _COMPUTE + " ring_record(1, kt, int(as - As) / STAGE, &as[st_slot]);"),
)


@dataclass(frozen=True)
class Record:
    kind: int
    tile: int        # a copy's tile; a compute's loop index kt
    stage: int
    tag: int         # a compute: the tag found in the stage (tile + 1); a copy: -1


@lru_cache(maxsize=None)
def trace(n_stages: int, k_tiles: int) -> tuple[Record, ...]:
    """Kernel 3.0 with N_STAGES = n_stages on a 64 x 64 x (k_tiles K tiles) problem: thread 0's records."""
    import numpy as np

    from tcgemm.engine.catalog import configured
    from tcgemm.engine.gpu.device import require_gpu
    from tcgemm.practice.gpu.traced import device_array, traced_kernel

    cupy = require_gpu()
    spec = configured(KERNEL)
    if not (2 <= n_stages and 1 <= k_tiles and 2 * k_tiles + n_stages <= RECORDS):
        raise ValueError(f"the trace holds {RECORDS} records: N = {n_stages}, {k_tiles} K tiles do not fit")
    kernel, module = traced_kernel(KERNEL, PRELUDE, EDITS, (("N_STAGES", n_stages),))
    M, N, K = spec.tile_m, spec.tile_n, k_tiles * spec.tile_k
    A = cupy.zeros((M, K), cupy.uint16)                 # fp16 bits: +0.0, and the tags (tiny subnormals)
    A[0, ::spec.tile_k] = cupy.arange(1, k_tiles + 1, dtype=cupy.uint16)
    B = cupy.zeros((N, K), cupy.uint16)
    C = cupy.empty((M, N), cupy.float32)
    count = device_array(module, "ring_count", cupy.int32, 1)
    count.fill(0)
    kernel((1, 1, 1), spec.base_block, (A, B, C, np.int32(M), np.int32(N), np.int32(K)))
    cupy.cuda.runtime.deviceSynchronize()
    n = int(count.get()[0])
    if n > RECORDS:
        raise RuntimeError(f"Kernel 3.0 recorded {n} events, more than the trace's {RECORDS}")
    rows = device_array(module, "ring_trace", cupy.int32, 4 * RECORDS)[:4 * n].get().reshape(n, 4)
    return tuple(Record(*(int(x) for x in row)) for row in rows)


# What the trace says, in the exercises' terms.
def stages_found(records) -> dict[int, int]:
    """Tile -> the stage the loop computed it from, by the tag found there."""
    return {r.tag - 1: r.stage for r in records if r.kind == COMPUTE}


def copies_before(records, kt: int | None) -> list[tuple[int, int]]:
    """(tile, stage) of the copies issued before the loop computes tile kt (None: before the loop ends)."""
    copies = []
    for r in records:
        if r.kind == COMPUTE and r.tile == kt:
            break
        if r.kind == COPY:
            copies.append((r.tile, r.stage))
    return copies


def copies_in(records, kt: int) -> list[tuple[int, int]]:
    """(tile, stage) of the copies iteration kt issues: after its compute, before the next one."""
    copies, iteration = [], None
    for r in records:
        if r.kind == COMPUTE:
            iteration = r.tile
        elif iteration == kt:
            copies.append((r.tile, r.stage))
    return copies


def ring_found(records, n_stages: int, kt: int) -> list[tuple[int | None, str]]:
    """Each stage's last copy by the time iteration kt computes (after its own copy), and its state."""
    computed = {r.tile for r in records if r.kind == COMPUTE and r.tile < kt}
    holds = dict((stage, tile) for tile, stage in copies_before(records, kt + 1))
    return stage_states(holds, computed, n_stages, kt)


def _against() -> str:
    from tcgemm.engine.gpu.device import device_info

    return f"Kernel 3.0 traced on the {device_info().name}"


def _stage():
    found = {n: stages_found(trace(n, 4 * n)) for n in STAGE_COUNTS}
    return (lambda n, kt: found[n].get(kt)), _against()


def _prologue():
    found = {(n, k): copies_before(trace(n, k), 0) for n in STAGE_COUNTS for k in TILE_COUNTS}
    return (lambda n, k: found[n, k]), _against()


def _copied():
    def truth(n, k, kt):
        copies = copies_in(trace(n, k), kt)
        return copies[0] if copies else None
    return truth, _against()


def _ring():
    return (lambda n, k, kt: ring_found(trace(n, k), n, kt)), _against()


TRUTHS = {
    "pipelines.stage": _stage,
    "pipelines.prologue": _prologue,
    "pipelines.copied": _copied,
    "pipelines.ring": _ring,
}
