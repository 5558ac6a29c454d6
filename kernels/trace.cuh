// A tile timeline (the TRACE switch of Kernels 5.6 to 5.8, a measurement): the first thread of consumer 0
// stamps the global timer into tile_trace, and its SM's clock counter into tile_clock, at its block's
// start, at three points of each tile it works on (its first stage has arrived; its last wgmma is done;
// its store of C is issued) and at its end. tcgemm.hopper.gpu.timeline reads the stamps back, tcgemm.hopper.timeline
// reads them.
#pragma once
#include "ptx.cuh"

#ifndef TRACE
#define TRACE 0
#endif
constexpr int TRACE_BLOCKS = 1024, TRACE_SLOTS = 64;   // slots per block: start, SM, 3 per tile, ..., end
enum TileStamp { STAGE_ARRIVED, MAIN_LOOP_DONE, STORE_ISSUED };

#if TRACE
__device__ unsigned long long tile_trace[TRACE_BLOCKS * TRACE_SLOTS], tile_clock[TRACE_BLOCKS * TRACE_SLOTS];

__device__ __forceinline__ void stamp_slot(int slot) {
    const int i = blockIdx.x * TRACE_SLOTS + slot;
    tile_clock[i] = clock64();
    tile_trace[i] = globaltimer();
}

__device__ __forceinline__ bool tracing() { return threadIdx.x == 128 && blockIdx.x < TRACE_BLOCKS; }
__device__ __forceinline__ void trace_start() {
    if (tracing()) {
        stamp_slot(0);
        tile_trace[blockIdx.x * TRACE_SLOTS + 1] = sm_id();
    }
}
__device__ __forceinline__ void trace_tile(int tile, TileStamp stamp) {   // tile: this block's 0th, 1st, ...
    const int slot = 2 + 3 * tile + stamp;
    if (tracing() && slot < TRACE_SLOTS - 1) stamp_slot(slot);
}
__device__ __forceinline__ void trace_end() {
    if (tracing()) stamp_slot(TRACE_SLOTS - 1);
}
#else
__device__ __forceinline__ void trace_start() {}
__device__ __forceinline__ void trace_tile(int, TileStamp) {}
__device__ __forceinline__ void trace_end() {}
#endif
