"""Who does what in the CUDA-core SGEMM kernels (14_sgemm_64, 15_sgemm_128), after Maxas. Pure (numpy).

C = A @ B in fp32. A block computes a TILE x TILE tile of C with TILE*TILE/64 threads. Each thread
owns an 8x8 set of C: four 4x4 blocks, HALF = TILE/2 apart in m and in n. Per k it reads the 8 floats
of As[k][:] on its rows and the 8 of Bs[k][:] on its columns, each as two 128-bit loads.

Shared memory: As[k][m] and Bs[k][n] are BK rows of TILE floats; the C write-back goes through
stage[TILE/4][TILE + pad] in four passes p, pass p carrying row p of every thread's 4x4 blocks.
Addresses returned here are byte offsets inside one of those arrays.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from tcgemm.smem.banks import Access, analyze

TILES = (64, 128)
BK = 8
PASSES = 4
STAGE_PAD = 8
WARP = 32
FLOAT_BYTES = 4
FLOAT4 = 4
THREAD_BLOCK = 4  # a thread's C is four THREAD_BLOCK x THREAD_BLOCK blocks
MATRICES = ("A", "B")
SIDES = ("write", "read")


def _check_int(name: str, value, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value < high:
        raise ValueError(f"{name} must be an integer in {low}..{high - 1}, got {value!r}")
    return int(value)


def check_tile(tile) -> int:
    if isinstance(tile, bool) or not isinstance(tile, (int, np.integer)) or tile not in TILES:
        raise ValueError(f"tile must be one of {TILES}, got {tile!r}")
    return int(tile)


def thread_count(tile) -> int:
    tile = check_tile(tile)
    return tile * tile // 64


def warp_count(tile) -> int:
    return thread_count(tile) // WARP


def half(tile) -> int:
    return check_tile(tile) // 2


def groups(tile) -> int:
    """Number of 4-row (or 4-column) groups across the tile: TILE / 8."""
    return check_tile(tile) // 8


def check_tid(tid, tile) -> int:
    return _check_int("tid", tid, 0, thread_count(tile))


def check_warp(warp, tile) -> int:
    return _check_int("warp", warp, 0, warp_count(tile))


def check_pass(p) -> int:
    return _check_int("pass p", p, 0, PASSES)


def check_k(k) -> int:
    return _check_int("k", k, 0, BK)


def warp_of(tid, tile) -> int:
    return check_tid(tid, tile) // WARP


def lane_of(tid, tile) -> int:
    return check_tid(tid, tile) % WARP


def warp_tids(warp, tile) -> range:
    warp = check_warp(warp, tile)
    return range(warp * WARP, (warp + 1) * WARP)


# ---------------------------------------------------------------------------------------------
# The compute layout: which C elements a thread owns.


def thread_group(tid, tile) -> tuple[int, int]:
    """(gm, gn): the thread's 4-row group in m and 4-column group in n, 0 .. TILE/8 - 1."""
    warp, lane = warp_of(tid, tile), lane_of(tid, tile)
    warps_n = check_tile(tile) // 32
    wm, wn = divmod(warp, warps_n)
    gm = wm * 8 + ((lane >> 1) & 7)
    gn = wn * 4 + ((lane >> 4) & 1) * 2 + (lane & 1)
    return gm, gn


def thread_origin(tid, tile) -> tuple[int, int]:
    """(ra, rb): the first row and first column of the thread's first 4x4 block."""
    gm, gn = thread_group(tid, tile)
    return THREAD_BLOCK * gm, THREAD_BLOCK * gn


def _eight(first: int, tile) -> tuple[int, ...]:
    return tuple(first + h * half(tile) + i for h in (0, 1) for i in range(THREAD_BLOCK))


def thread_rows(tid, tile) -> tuple[int, ...]:
    """The 8 rows m of the tile the thread owns: also the 8 floats of As[k][:] it reads."""
    return _eight(thread_origin(tid, tile)[0], tile)


def thread_cols(tid, tile) -> tuple[int, ...]:
    """The 8 columns n of the tile the thread owns: also the 8 floats of Bs[k][:] it reads."""
    return _eight(thread_origin(tid, tile)[1], tile)


def owner_map(tile) -> np.ndarray:
    """(TILE, TILE) array: the thread id owning each C element of the tile."""
    tile = check_tile(tile)
    owner = np.full((tile, tile), -1, dtype=np.int64)
    for tid in range(thread_count(tile)):
        owner[np.ix_(thread_rows(tid, tile), thread_cols(tid, tile))] = tid
    return owner


def shared_read_addresses(tile, warp, k, matrix: str, load: int) -> np.ndarray:
    """(32,) byte offset in As (matrix "A") or Bs ("B") of each lane's 128-bit load number
    ``load`` (0: floats first..first+3, 1: the same + HALF) for one k."""
    if matrix not in MATRICES:
        raise ValueError(f"matrix must be one of {MATRICES}, got {matrix!r}")
    load = _check_int("load", load, 0, 2)
    k = check_k(k)
    tile = check_tile(tile)
    which = 0 if matrix == "A" else 1
    firsts = [thread_origin(tid, tile)[which] + load * half(tile) for tid in warp_tids(warp, tile)]
    return (k * tile + np.array(firsts, dtype=np.int64)) * FLOAT_BYTES


def shared_words_read(tile, warp, k) -> dict[str, list[tuple[int, ...]]]:
    """The distinct 16-byte addresses (byte offsets) a warp reads from As and from Bs for one k,
    one sorted tuple per 128-bit load instruction: {"A": [load 0, load 1], "B": [...]}."""
    return {matrix: [tuple(sorted({int(a) for a in shared_read_addresses(tile, warp, k, matrix, load)}))
                     for load in (0, 1)]
            for matrix in MATRICES}


# ---------------------------------------------------------------------------------------------
# Global -> shared: the first half of the threads load the As stripe, the second half the Bs stripe.


class Load(NamedTuple):
    matrix: str  # "A" or "B"
    k: int
    col4: int    # float4 column: floats 4*col4 .. 4*col4+3 of the stripe's row k


def loads_per_thread(tile) -> int:
    tile = check_tile(tile)
    return BK * tile // FLOAT4 // (thread_count(tile) // 2)


def load_map(tile) -> list[list[Load]]:
    """Per thread, its float4 loads of one k-tile in instruction order j = 0, 1, ..."""
    tile = check_tile(tile)
    loaders = thread_count(tile) // 2
    per_row = tile // FLOAT4
    rows_step = loaders // per_row
    result = []
    for tid in range(thread_count(tile)):
        i = tid % loaders
        matrix = "A" if tid < loaders else "B"
        k_first, col4 = divmod(i, per_row)
        result.append([Load(matrix, k_first + j * rows_step, col4) for j in range(loads_per_thread(tile))])
    return result


# ---------------------------------------------------------------------------------------------
# C write-back through the staging array.


class StageCell(NamedTuple):
    stage_row: int
    col4: int    # float4 column of the staging row (floats 4*col4 .. 4*col4+3)
    c_row: int   # row m of the C tile
    c_col: int   # first of the 4 columns n of the C tile


def stage_c_row(tile, p, stage_row) -> int:
    """The C tile row that staging row ``stage_row`` holds in pass ``p``."""
    tile, p = check_tile(tile), check_pass(p)
    stage_row = _check_int("stage_row", stage_row, 0, tile // FLOAT4)
    hm, gm = divmod(stage_row, groups(tile))
    return THREAD_BLOCK * gm + p + half(tile) * hm


def stage_writes(tile, p) -> list[list[StageCell]]:
    """Per thread, its four float4 writes to the staging array in pass p, in store order
    2*hm + hn (hm, hn: 0 for the first 4x4 block in m / n, 1 for the one HALF further)."""
    tile, p = check_tile(tile), check_pass(p)
    result = []
    for tid in range(thread_count(tile)):
        gm, gn = thread_group(tid, tile)
        ra, rb = thread_origin(tid, tile)
        result.append([StageCell(gm + groups(tile) * hm, gn + groups(tile) * hn,
                                 ra + p + half(tile) * hm, rb + half(tile) * hn)
                       for hm in (0, 1) for hn in (0, 1)])
    return result


def stage_reads(tile, p) -> list[list[StageCell]]:
    """Per thread, its four float4 reads of the staging array in pass p (j = 0..3), each stored
    with one 128-bit store to C at (c_row, c_col .. c_col+3)."""
    tile, p = check_tile(tile), check_pass(p)
    per_row = tile // FLOAT4
    threads = thread_count(tile)
    result = []
    for tid in range(threads):
        cells = []
        for j in range(PASSES):
            stage_row, col4 = divmod(tid + j * threads, per_row)
            cells.append(StageCell(stage_row, col4, stage_c_row(tile, p, stage_row), FLOAT4 * col4))
        result.append(cells)
    return result


def store_runs(tile, p, warp, j) -> list[tuple[int, int, int]]:
    """The C bytes one warp's store instruction j writes in pass p, as contiguous runs
    (c_row, first byte, end byte), byte offsets within the C tile row."""
    warp = check_warp(warp, tile)
    j = _check_int("j", j, 0, PASSES)
    reads = stage_reads(tile, p)
    runs: list[list[int]] = []
    for tid in warp_tids(warp, tile):
        cell = reads[tid][j]
        first = cell.c_col * FLOAT_BYTES
        if runs and runs[-1][0] == cell.c_row and runs[-1][2] == first:
            runs[-1][2] = first + FLOAT4 * FLOAT_BYTES
        else:
            runs.append([cell.c_row, first, first + FLOAT4 * FLOAT_BYTES])
    return [tuple(run) for run in runs]


def stage_byte_address(tile, stage_row, col4, pad=STAGE_PAD) -> int:
    """Byte offset of float4 ``col4`` of staging row ``stage_row`` in stage[TILE/4][TILE + pad]."""
    tile = check_tile(tile)
    if isinstance(pad, bool) or not isinstance(pad, (int, np.integer)) or pad < 0 or pad % FLOAT4:
        raise ValueError(f"pad must be a non-negative multiple of 4 floats (16-byte rows), got {pad!r}")
    return ((tile + pad) * stage_row + FLOAT4 * col4) * FLOAT_BYTES


def staging_access(tile, p, warp, instruction, side="write", pad=STAGE_PAD) -> Access:
    """One warp's 128-bit shared store (side "write") or load ("read") of the staging array."""
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    instruction = _check_int("instruction", instruction, 0, PASSES)
    cells = (stage_writes if side == "write" else stage_reads)(tile, p)
    addresses = [stage_byte_address(tile, cells[tid][instruction].stage_row, cells[tid][instruction].col4, pad)
                 for tid in warp_tids(warp, tile)]
    return Access(np.array(addresses), 16, "st" if side == "write" else "ld")


@dataclass(frozen=True)
class StagingBanks:
    """Wavefronts of every 8-lane phase of the staging accesses of one write-back (4 passes)."""
    tile: int
    pad: int
    side: str
    wavefronts: np.ndarray  # (pass, warp, instruction, phase)

    @property
    def ideal(self) -> int:
        return int(self.wavefronts.size)

    @property
    def total(self) -> int:
        return int(self.wavefronts.sum())

    @property
    def conflicts(self) -> int:
        return self.total - self.ideal

    @property
    def ways(self) -> int:
        return int(self.wavefronts.max())


def staging_bank_conflicts(tile, pad=STAGE_PAD, side="write") -> StagingBanks:
    """Bank conflicts of the staging writes (or reads) over the four passes, with ``pad`` floats
    after each staging row (8 in the kernels, 0 for the unpadded comparison)."""
    tile = check_tile(tile)
    wavefronts = np.array([[[[phase.wavefronts for phase in analyze(staging_access(tile, p, warp, j, side, pad)).phases]
                             for j in range(PASSES)]
                            for warp in range(warp_count(tile))]
                           for p in range(PASSES)])
    return StagingBanks(tile, int(pad), side, wavefronts)
