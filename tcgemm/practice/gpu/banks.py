"""The banks exercises checked on the GPU (see tcgemm.practice.gpu): the hardware's answer, read from the time a
shared-memory access takes.

The GPU names no bank and, without Nsight Compute, counts no wavefront: it only takes longer over an access whose
lanes need more wavefronts. An experiment here is one warp-wide access, a byte offset in shared memory per lane;
every warp of a block repeats it, one block per SM (its shared-memory request leaves no room for a second), and
the block reads its SM's cycles with clock64 (`access_cost`). Noise is kept out four ways: the cost of an access
is the difference between a run of 2 REPS and one of REPS repetitions (what the launch, the barriers and the last
loads' latency add cancels out); each run is the least of TRIALS; every answer is a ratio to a conflict-free access
timed in the same launch; and a calibration refuses to answer unless a 2-way conflict costs 1.6 to 2.4 times a
conflict-free load, a 32-way one 24 to 40 times, and a contiguous ldmatrix.x4 (512 bytes, at least 4 wavefronts
of 128) 3.4 to 4.6 times.

- banks.padded_bank, banks.xor_bank: bank j is the bank of word j (bytes 4j to 4j + 3) of the tile, the hardware
  having no names for its banks; the calibration checks that these 32 words are read in one wavefront. A word
  further on is in the bank of the one word of those 32 that it conflicts with: lane 1 reads word j, every other
  lane the word tested (a broadcast, no extra wavefront), and the access costs at least 1.5 times a conflict-free
  one for that j only. A word that conflicts with none of the 32 or with several is answered as such.
- banks.ldmatrix_wavefronts: the ldmatrix.x4 of the case's 32 row addresses, timed; its cost over the contiguous
  ldmatrix.x4's, times 4, to the nearest wavefront (answered as unclear when further than 0.3 and 4% from it).
  Rounding gives the count while the two timings err by less than 1.5% together at 32 wavefronts, the most.

Not checked on the hardware: banks.conflict_free_layout. Its answer is a layout that the model scores phase by
phase, and the model's side of each case is only "one wavefront", whatever the layout: there is no truth per case
for the GPU to give. The wavefronts that scoring counts follow the rule banks.ldmatrix_wavefronts checks here.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from tcgemm import layouts
from tcgemm.engine.gpu.compile import LoadedKernel, get_text_function
from tcgemm.engine.gpu.device import device_info, require_gpu
from tcgemm.practice import exercise
from tcgemm.practice.banks import FP16_BYTES, Finding

WARP = 32
WARPS = 16              # per block: enough to keep the shared-memory pipe busy whatever one warp can issue
UNROLL = 8              # accesses per repetition (the kernel's own constant)
REPS = 64
TRIALS = 5
TILE_BYTES = 8192       # what an experiment may read: every case's tile fits
BANK_WORDS = 1024       # the words whose bank is found: the 4 KiB of the largest tile of the bank exercises
WIDTH = {"lds32": 4, "ldmatrix_x4": 16}      # bytes each lane reads, and the alignment its address needs
CONFLICT = 1.5          # cost over a conflict-free access from which two words are in one bank
CALIBRATION = {         # (LDS.32 lane offsets, the cost range over a broadcast)
    "32 consecutive words": (4 * np.arange(WARP), (0.75, 1.25)),
    "2-way conflict": (8 * np.arange(WARP), (1.6, 2.4)),
    "32-way conflict": (128 * np.arange(WARP), (24.0, 40.0)),
}
CONTIGUOUS_LDMATRIX = (3.4, 4.6)

_SOURCE = r"""
// One experiment per block: every warp makes the same warp-wide shared-memory access REPS x UNROLL times, lane l
// at byte offsets[32 * blockIdx.x + l] of the block's shared memory; thread 0 writes the SM cycles it took.
constexpr int UNROLL = 8;

struct Lds32 {
    static __device__ __forceinline__ unsigned load(unsigned address) {
        unsigned v;
        asm volatile("ld.volatile.shared.b32 %0, [%1];" : "=r"(v) : "r"(address));
        return v;
    }
};

struct LdmatrixX4 {
    static __device__ __forceinline__ unsigned load(unsigned address) {
        unsigned a, b, c, d;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(address));
        return a ^ b ^ c ^ d;
    }
};

// `step` is 0; the compiler cannot know it, so each access has an address of its own in its eyes and none is merged
// with another or taken out of the loop.
template <typename Access>
__device__ void time_access(const int *offsets, int reps, int step, int tile_bytes, long long *cycles,
                            unsigned *sink) {
    extern __shared__ __align__(128) unsigned char smem[];
    for (int i = threadIdx.x; i < tile_bytes / 4; i += blockDim.x)
        reinterpret_cast<unsigned *>(smem)[i] = i;
    unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(smem)) +
                             offsets[32 * blockIdx.x + threadIdx.x % 32];
    unsigned acc = 0;
    __syncthreads();
    const long long start = clock64();
    for (int r = 0; r < reps; ++r) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            acc ^= Access::load(address);
            address += step;
        }
    }
    if (acc == 0x9e3779b9u)      // needs every load's value before the barrier; a store the compiler must keep
        sink[0] = acc;
    __syncthreads();
    if (threadIdx.x == 0)
        cycles[blockIdx.x] = clock64() - start;
}

extern "C" __global__ void time_lds32(const int *offsets, int reps, int step, int tile_bytes, long long *cycles,
                                      unsigned *sink) {
    time_access<Lds32>(offsets, reps, step, tile_bytes, cycles, sink);
}

extern "C" __global__ void time_ldmatrix_x4(const int *offsets, int reps, int step, int tile_bytes,
                                            long long *cycles, unsigned *sink) {
    time_access<LdmatrixX4>(offsets, reps, step, tile_bytes, cycles, sink);
}
"""


def checked_offsets(kind: str, offsets) -> np.ndarray:
    """`offsets` as an (experiments, 32) int32 array, each in the tile and aligned for `kind`; ValueError if not
    (nothing reaches the GPU unchecked)."""
    if kind not in WIDTH:
        raise ValueError(f"kind must be one of {', '.join(WIDTH)}, got {kind!r}")
    table = np.asarray(offsets)
    if table.ndim != 2 or table.shape[1] != WARP or table.shape[0] == 0 or table.dtype.kind not in "iu":
        raise ValueError(f"offsets must be whole numbers, one row of {WARP} per experiment; got shape {table.shape}, "
                         f"dtype {table.dtype}")
    width = WIDTH[kind]
    bad = (table < 0) | (table > TILE_BYTES - width) | (table % width != 0)
    if bad.any():
        e, lane = map(int, np.argwhere(bad)[0])
        raise ValueError(f"experiment {e}, lane {lane}: byte offset {int(table[e, lane])} is not a {width}-byte "
                         f"aligned place in the {TILE_BYTES}-byte tile")
    return table.astype(np.int32)


def _kernel(kind: str) -> LoadedKernel:
    return get_text_function(_SOURCE, "practice_banks.cu", f"time_{kind}")


def _one_block_per_sm() -> int:
    """Dynamic shared memory that leaves no room for a second block on an SM."""
    cupy = require_gpu()
    per_sm = cupy.cuda.Device().attributes["MaxSharedMemoryPerMultiprocessor"]
    return min(max(TILE_BYTES, per_sm // 2 + 1024), device_info().shared_mem_per_block_optin)


def access_cost(kind: str, offsets) -> np.ndarray:
    """SM cycles one repetition of each experiment's access takes a block (WARPS warps, UNROLL accesses each):
    the least of TRIALS runs of 2 REPS repetitions, less the least of TRIALS runs of REPS."""
    table = checked_offsets(kind, offsets)
    cupy = require_gpu()
    kernel = _kernel(kind)
    smem = _one_block_per_sm()
    if smem > 48 * 1024 and kernel.max_dynamic_shared_size_bytes < smem:
        kernel.max_dynamic_shared_size_bytes = smem
    experiments = table.shape[0]
    offsets_gpu, sink = cupy.asarray(table), cupy.zeros(1, dtype=np.uint32)
    least = {}
    for reps in (REPS, 2 * REPS):
        runs = cupy.empty((TRIALS, experiments), dtype=np.int64)
        for t in range(TRIALS):
            step = np.int32(0)
            args = (offsets_gpu, np.int32(reps), step, np.int32(TILE_BYTES), runs[t], sink)
            kernel((experiments,), (WARP * WARPS,), args, shared_mem=smem)
        least[reps] = cupy.asnumpy(runs).min(axis=0)
    return (least[2 * REPS] - least[REPS]) / REPS


def _broadcast() -> np.ndarray:
    return np.zeros(WARP, dtype=np.int64)


def _calibrated(costs: dict[str, float], unit: float) -> None:
    """RuntimeError unless each calibration access costs what its wavefronts make it, over `unit`."""
    wrong = {name: costs[name] / unit for name, (_, (low, high)) in CALIBRATION.items()
             if not low <= costs[name] / unit <= high}
    if wrong:
        raise RuntimeError("the timings on this GPU do not resolve bank conflicts (cost over a broadcast: "
                           + ", ".join(f"{name} {ratio:.2f}, expected {CALIBRATION[name][1][0]} to "
                                       f"{CALIBRATION[name][1][1]}" for name, ratio in wrong.items()) + ")")


@lru_cache(maxsize=None)
def word_banks() -> tuple:
    """The bank of each of the first BANK_WORDS words of a block's shared memory, as the GPU shows it (see the
    module's docstring): j for words 0 to 31, then the word j each further word conflicts with, or a Finding."""
    rows = [_broadcast(), *(offsets for offsets, _ in CALIBRATION.values())]
    tested = np.arange(WARP, BANK_WORDS)
    pairs = np.repeat(4 * tested[:, None, None], WARP, axis=2).repeat(WARP, axis=1)   # (word, j, lane)
    pairs[:, :, 1] = 4 * np.arange(WARP)
    cost = access_cost("lds32", np.concatenate([np.array(rows), pairs.reshape(-1, WARP)]))
    unit = cost[0]
    _calibrated(dict(zip(CALIBRATION, cost[1:len(rows)])), unit)
    conflicts = cost[len(rows):].reshape(len(tested), WARP) / unit >= CONFLICT
    found = list(range(WARP))
    for word, with_words in zip(tested, conflicts):
        js = np.flatnonzero(with_words).tolist()
        found.append(js[0] if len(js) == 1 else Finding(
            f"word {word} conflicts with {'none' if not js else ', '.join(map(str, js))} of words 0-31"))
    return tuple(found)


def _bank_truth(address):
    banks = word_banks()

    def truth(*case):
        byte = int(address(*case))
        if not 0 <= byte < 4 * BANK_WORDS:
            raise ValueError(f"byte {byte} is past the {4 * BANK_WORDS} bytes whose banks were timed")
        return banks[byte // 4]
    return truth, f"the {device_info().name}'s timings (bank j: the bank of bytes 4j to 4j + 3)"


def padded_bank():
    return _bank_truth(lambda row, col, row_elems, pad: layouts.padded(row_elems, FP16_BYTES, pad)(row, col))


def xor_bank():
    return _bank_truth(lambda row, col: layouts.xor_permuted()(row, col))


def ldmatrix_x4_offsets(row_elems: int, pad_bytes: int) -> np.ndarray:
    """The 32 row addresses of the ldmatrix.x4 of the 16 x 16 block at (0, 0) of a padded fp16 tile: lane l gives
    row l % 16 at chunk l // 16."""
    tile = layouts.padded(row_elems, FP16_BYTES, pad_bytes)
    lane = np.arange(WARP)
    return np.array([int(tile(int(r), int(c))) for r, c in zip(lane % 16, 8 * (lane // 16))])


def _whole(wavefronts: float):
    nearest = round(wavefronts)
    if abs(wavefronts - nearest) <= max(0.3, 0.04 * nearest):
        return nearest
    return Finding(f"{wavefronts:.2f} wavefronts, unclear")


@lru_cache(maxsize=None)
def _measured_wavefronts() -> dict:
    cases = [args for args, _ in exercise("banks.ldmatrix_wavefronts").cases()]
    contiguous = 16 * np.arange(WARP)
    cost = access_cost("ldmatrix_x4", np.array([contiguous, *(ldmatrix_x4_offsets(*args) for args in cases)]))
    loads = access_cost("lds32", np.array([_broadcast()]))[0]
    low, high = CONTIGUOUS_LDMATRIX
    if not low <= cost[0] / loads <= high:
        raise RuntimeError(f"the timings on this GPU do not resolve wavefronts: a contiguous ldmatrix.x4 costs "
                           f"{cost[0] / loads:.2f} broadcast loads, expected {low} to {high}")
    return {args: _whole(4 * c / cost[0]) for args, c in zip(cases, cost[1:])}


def ldmatrix_wavefronts():
    measured = _measured_wavefronts()
    return (lambda row_elems, pad: measured[(row_elems, pad)],
            f"the {device_info().name}'s timings (a contiguous ldmatrix.x4: 4 wavefronts)")


TRUTHS = {
    "banks.padded_bank": padded_bank,
    "banks.xor_bank": xor_bank,
    "banks.ldmatrix_wavefronts": ldmatrix_wavefronts,
}
