// Ablation (a1): Kernel 4.4 with each step of the earlier chapters behind a compile-time switch, for an
// ablation: with every switch 0 (the default) this is Kernel 4.4, line for line; setting one to 1
// undoes that one step, so every variant can be checked and timed alone.
//   NO_XOR           tiles row-major in shared memory, without Kernel 2.0's XOR permutation: the 8 rows
//                    of an ldmatrix phase share banks (8-way conflicts at BK = 64, 4-way at BK = 32)
//   COPY_4B          each 16-byte cp.async as four 4-byte ones (.ca: the 16-byte .cg has no 4-byte form)
//   NO_CP_ASYNC      register staging instead of cp.async: the tile that cp.async would start is
//                    loaded into registers (LDG) and stored to shared memory (STS) after the mma of
//                    the stage, so one stage of compute hides the load (Kernel 2.x's copies)
//   NO_REG_DB        no register double buffering (Kernel 4.0's loop): each slice's fragments are
//                    loaded right before its mma, and the barrier opens every stage
//   NO_L2_ORDER      blocks in plain blockIdx order (row by row of tiles), not in groups of GROUP_M rows
//   NO_VEC_STORE     C stored one float at a time instead of float2 pairs
//   SMALL_WARP_TILE  warp tiles of 64 x 32 (Kernels 3.1 to 3.6) instead of 64 x 64: the same 128 x 256
//                    block as 2 x 8 warps, 512 threads (so at most 128 registers per thread)
// and one switch that is not a step but the numerics chapter's remedy for the accumulation bias:
//   FRESH_ACC        each mma (one k16 step) accumulates into zero, and its result is added to the
//                    fp32 sum with FADD outside the mma (rounded to nearest), not inside the mma
// SKIP_COPIES and SKIP_SYNC are Kernel 4.4's measurement switches (wrong results).
// Block: 256 threads = 8 warps as 2 (M) x 4 (N); 512 = 2 x 8 with SMALL_WARP_TILE. K: any multiple of BK.
#include "ptx.cuh"

#ifndef N_STAGES
#define N_STAGES 4
#endif
#ifndef BK
#define BK 32
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef SKIP_COPIES
#define SKIP_COPIES 0
#endif
#ifndef SKIP_SYNC
#define SKIP_SYNC 0
#endif
#ifndef NO_XOR
#define NO_XOR 0
#endif
#ifndef COPY_4B
#define COPY_4B 0
#endif
#ifndef NO_CP_ASYNC
#define NO_CP_ASYNC 0
#endif
#ifndef NO_REG_DB
#define NO_REG_DB 0
#endif
#ifndef NO_L2_ORDER
#define NO_L2_ORDER 0
#endif
#ifndef NO_VEC_STORE
#define NO_VEC_STORE 0
#endif
#ifndef SMALL_WARP_TILE
#define SMALL_WARP_TILE 0
#endif
#ifndef FRESH_ACC
#define FRESH_ACC 0
#endif
static_assert(N_STAGES >= 2, "a ring buffer needs at least two stages");
#if NO_CP_ASYNC
static_assert(N_STAGES >= 3, "NO_CP_ASYNC needs 3 stages: the tile it stores after tile kt's last mma "
                             "must not be read before tile kt + 1's barrier");
#endif
static_assert(BK == 32 || BK == 64, "a tile row is half or all of a 128-byte shared line");

constexpr int BM = 128;         // block tile
constexpr int BN = 256;
#if SMALL_WARP_TILE
constexpr int WARPS_N = 8;
#else
constexpr int WARPS_N = 4;
#endif
constexpr int MMA_M = 16;
constexpr int MMA_N = 8;
constexpr int MMA_K = 16;
constexpr int TILES_M = 4;      // mma tiles per warp
#if SMALL_WARP_TILE
constexpr int TILES_N = 4;
#else
constexpr int TILES_N = 8;
#endif
constexpr int WM = TILES_M * MMA_M;    // warp tile
constexpr int WN = TILES_N * MMA_N;
#if SMALL_WARP_TILE
constexpr int THREADS = 512;
#else
constexpr int THREADS = 256;
#endif

constexpr int CHUNK = 8;                // fp16 per 16-byte chunk (one uint4, one ldmatrix row)
constexpr int CHUNKS = BK / CHUNK;      // chunks along K per tile row: 4 or 8
constexpr int LINE = 8;                 // chunks per 128-byte shared line = all 32 banks
constexpr int ROWS_PER_LINE = LINE / CHUNKS;
constexpr int K_STEPS = BK / MMA_K;
constexpr int A_STAGE = BM * CHUNKS;    // uint4 slots per stage
constexpr int B_STAGE = BN * CHUNKS;
constexpr int ROWS_PER_LOAD = THREADS / CHUNKS;   // tile rows one sweep of the block copies
constexpr int A_LOADS = BM / ROWS_PER_LOAD;       // copies per thread per tile
constexpr int B_LOADS = BN / ROWS_PER_LOAD;
static_assert(A_LOADS * ROWS_PER_LOAD == BM && B_LOADS * ROWS_PER_LOAD == BN, "whole sweeps");

// Kernel 2.0's XOR permutation for either tile width: line = 128 bytes = ROWS_PER_LINE tile rows;
// the 16-byte column is XOR-ed with line % CHUNKS, so 8 consecutive rows at one chunk (one
// ldmatrix phase) land in 8 different bank groups. For BK = 64 this is column ^ (row % 8).
__device__ __forceinline__ int permuted_chunk(int row, int chunk) {
#if NO_XOR
    return row * CHUNKS + chunk;
#else
    const int line = row / ROWS_PER_LINE;
    const int column = (row % ROWS_PER_LINE) * CHUNKS + chunk;
    return line * LINE + (column ^ (line % CHUNKS));
#endif
}
// Moving ROWS_PER_LOAD rows down moves a whole number of XOR periods, so it is a plain offset.
static_assert((ROWS_PER_LOAD / ROWS_PER_LINE) % CHUNKS == 0 && (MMA_M / ROWS_PER_LINE) % CHUNKS == 0,
              "row offsets of copies and fragments keep the XOR pattern");

#if COPY_4B
// One 16-byte chunk as four 4-byte copies.
__device__ __forceinline__ void cp_async_16_by_4(unsigned smem_addr, const __half *gmem) {
    for (int w = 0; w < 4; ++w)
        cp_async_4(smem_addr + 4 * w, gmem + 2 * w);
}

#endif
extern "C" __global__ void __launch_bounds__(THREADS, 1)
ablation(const __half *A, const __half *B, float *C, int M, int N, int K) {
    extern __shared__ uint4 smem[];     // N_STAGES stages of A, then N_STAGES stages of B
    uint4 *As = smem;
    uint4 *Bs = smem + N_STAGES * A_STAGE;

    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int lane = tid % 32;
    const int group = lane >> 2;
    const int tig = lane % 4;

    // Launch index -> tile: groups of GROUP_M tile rows (fewer in the last group), column-major inside.
#if NO_L2_ORDER
    const int block_m = blockIdx.y * BM;
    const int block_n = blockIdx.x * BN;
#else
    const int grid_m = gridDim.y, grid_n = gridDim.x;
    const int launched = blockIdx.y * grid_n + blockIdx.x;
    const int first_row = launched / (GROUP_M * grid_n) * GROUP_M;
    const int group_rows = min(GROUP_M, grid_m - first_row);
    const int in_group = launched % (GROUP_M * grid_n);
    const int block_m = (first_row + in_group % group_rows) * BM;
    const int block_n = (in_group / group_rows) * BN;
#endif
    const int warp_m = (warp / WARPS_N) * WM;
    const int warp_n = (warp % WARPS_N) * WN;

    const int ld_row = tid / CHUNKS;
    const int ld_chunk = tid % CHUNKS;
    const __half *a_src = &A[(block_m + ld_row) * K + ld_chunk * CHUNK];
    const __half *b_src = &B[(block_n + ld_row) * K + ld_chunk * CHUNK];
    const int st_slot = permuted_chunk(ld_row, ld_chunk);
    const unsigned a_dst = smem_u32(&As[st_slot]);
    const unsigned b_dst = smem_u32(&Bs[st_slot]);
    constexpr unsigned SWEEP_BYTES = ROWS_PER_LOAD * CHUNKS * sizeof(uint4);

    // ldmatrix rows. A (x4, 16 x 16): as before. B (x4, two 8 x 16 n-tiles): lanes 0-7 and 8-15
    // give the first n-tile at the two chunks, lanes 16-23 and 24-31 the second one.
    const int a_row = lane % 16;
    const int a_chunk = lane / 16;
    const int b_row = lane % 8 + 8 * (lane / 16);
    const int b_chunk = (lane / 8) % 2;

    const int k_tiles = K / BK;
#if NO_CP_ASYNC
    // Tile t through registers: load_tile loads it (LDG), store_tile stores it into stage t % N_STAGES.
    uint4 staged[A_LOADS + B_LOADS];
    auto load_tile = [&](int t) {
        if (t < k_tiles) {
            for (int i = 0; i < A_LOADS; ++i)
                staged[i] = *reinterpret_cast<const uint4 *>(a_src + i * ROWS_PER_LOAD * K + t * BK);
            for (int i = 0; i < B_LOADS; ++i)
                staged[A_LOADS + i] = *reinterpret_cast<const uint4 *>(b_src + i * ROWS_PER_LOAD * K + t * BK);
        }
    };
    auto store_tile = [&](int t) {
        if (t < k_tiles) {
            const int stage = t % N_STAGES;
            for (int i = 0; i < A_LOADS; ++i)
                As[stage * A_STAGE + st_slot + i * ROWS_PER_LOAD * CHUNKS] = staged[i];
            for (int i = 0; i < B_LOADS; ++i)
                Bs[stage * B_STAGE + st_slot + i * ROWS_PER_LOAD * CHUNKS] = staged[A_LOADS + i];
        }
    };
#else
    // Start the copies of tile `t` into stage t % N_STAGES; commit even when there is nothing to
    // copy, so that every thread always has exactly one group per tile slot.
    auto load_tile = [&](int t) {
        if (t < k_tiles) {
            const int stage = t % N_STAGES;
            for (int i = 0; i < A_LOADS; ++i)
#if COPY_4B
                cp_async_16_by_4(a_dst + (stage * A_STAGE) * sizeof(uint4) + i * SWEEP_BYTES,
                                 a_src + i * ROWS_PER_LOAD * K + t * BK);
#else
                cp_async_16(a_dst + (stage * A_STAGE) * sizeof(uint4) + i * SWEEP_BYTES,
                            a_src + i * ROWS_PER_LOAD * K + t * BK);
#endif
            for (int i = 0; i < B_LOADS; ++i)
#if COPY_4B
                cp_async_16_by_4(b_dst + (stage * B_STAGE) * sizeof(uint4) + i * SWEEP_BYTES,
                                 b_src + i * ROWS_PER_LOAD * K + t * BK);
#else
                cp_async_16(b_dst + (stage * B_STAGE) * sizeof(uint4) + i * SWEEP_BYTES,
                            b_src + i * ROWS_PER_LOAD * K + t * BK);
#endif
        }
        cp_async_commit();
    };
#endif

    float acc[TILES_M][TILES_N][4] = {};
#if FRESH_ACC
    const float zero[4] = {};
#endif

    unsigned a[2][TILES_M][4], b[2][TILES_N][2];     // [slice parity][tile][register]
    // Byte offsets in a stage of this lane's ldmatrix row for tile 0, slice 0. Slice ks adds 2 ks to
    // the chunk (MMA_K = 2 chunks), i.e. XORs ks << 5 into the byte offset: the permutation only
    // flips chunk bits by row bits, and tile row offsets are whole XOR periods (asserted above).
    static_assert(MMA_K == 2 * CHUNK, "a slice is two chunks");
    const unsigned a_off = permuted_chunk(warp_m + a_row, a_chunk) * sizeof(uint4);
    const unsigned b_off = permuted_chunk(warp_n + b_row, b_chunk) * sizeof(uint4);
    constexpr unsigned A_TILE_BYTES = MMA_M * CHUNKS * sizeof(uint4);        // 16 rows down
    constexpr unsigned B_PAIR_BYTES = 2 * MMA_N * CHUNKS * sizeof(uint4);    // 16 rows down
    const unsigned as0 = smem_u32(As), bs0 = smem_u32(Bs);
    auto load_fragments = [&](unsigned (&fa)[TILES_M][4], unsigned (&fb)[TILES_N][2], int kt, int ks) {
        const int stage = kt % N_STAGES;
        const unsigned pa = as0 + stage * A_STAGE * sizeof(uint4) + (a_off ^ (ks << 5));
        const unsigned pb = bs0 + stage * B_STAGE * sizeof(uint4) + (b_off ^ (ks << 5));
        for (int tm = 0; tm < TILES_M; ++tm)
            ldmatrix_x4(fa[tm], pa + tm * A_TILE_BYTES);
        for (int tn = 0; tn < TILES_N; tn += 2)
            ldmatrix_x4_pair(fb[tn], fb[tn + 1], pb + tn / 2 * B_PAIR_BYTES);
    };

#if NO_CP_ASYNC
    for (int t = 0; t < N_STAGES - 1; ++t) {
        load_tile(t);
        store_tile(t);
    }
#else
    for (int t = 0; t < N_STAGES - 1; ++t) load_tile(t);
#endif
#if !NO_REG_DB
    cp_async_wait<N_STAGES - 2>();
    __syncthreads();
    load_fragments(a[0], b[0], 0, 0);
#endif

    for (int kt = 0; kt < k_tiles; ++kt) {
#if NO_REG_DB
        // Tile kt has landed for every thread, and every warp is done with stage (kt - 1) % N_STAGES.
        cp_async_wait<N_STAGES - 2>();
        __syncthreads();
#endif
#pragma unroll
        for (int ks = 0; ks < K_STEPS; ++ks) {
            // Copies into stage (kt - 1) % N_STAGES, free since the barrier at the end of tile kt - 1.
            if (ks == 0) {
                if (SKIP_COPIES) cp_async_commit();
                else load_tile(kt + N_STAGES - 1);
            }
            const int cur = ks % 2, next = (ks + 1) % 2;
#if NO_REG_DB
            load_fragments(a[cur], b[cur], kt, ks);
#else
            if (ks + 1 < K_STEPS) {
                load_fragments(a[next], b[next], kt, ks + 1);
            } else if (kt + 1 < k_tiles) {
                // Tile kt + 1 must have landed, for every thread, before its first slice is read;
                // after this barrier no warp reads stage kt % N_STAGES' older slices any more.
                if (!SKIP_SYNC) {
                    cp_async_wait<N_STAGES - 2>();
                    __syncthreads();
                }
                load_fragments(a[next], b[next], kt + 1, 0);
            }
#endif
            for (int tm = 0; tm < TILES_M; ++tm)
                for (int tn = 0; tn < TILES_N; ++tn)
#if FRESH_ACC
                {
                    float part[4];
                    mma_m16n8k16_f32(part, a[cur][tm], b[cur][tn], zero);
                    for (int r = 0; r < 4; ++r) acc[tm][tn][r] += part[r];
                }
#else
                    mma_m16n8k16_f32(acc[tm][tn], a[cur][tm], b[cur][tn], acc[tm][tn]);
#endif
#if NO_CP_ASYNC
            if (ks == K_STEPS - 1) store_tile(kt + N_STAGES - 1);   // into stage (kt - 1) % N_STAGES
#endif
        }
    }
    cp_async_wait<0>();

    for (int tm = 0; tm < TILES_M; ++tm)
        for (int tn = 0; tn < TILES_N; ++tn)
            for (int h = 0; h < 2; ++h) {       // rows group and group + 8
                const int row = tm * MMA_M + group + 8 * h;
                const int col = tn * MMA_N + 2 * tig;
#if NO_VEC_STORE
                float *c = &C[(block_m + warp_m + row) * N + block_n + warp_n + col];
                c[0] = acc[tm][tn][2 * h];
                c[1] = acc[tm][tn][2 * h + 1];
#else
                *reinterpret_cast<float2 *>(&C[(block_m + warp_m + row) * N + block_n + warp_n + col]) =
                    make_float2(acc[tm][tn][2 * h], acc[tm][tn][2 * h + 1]);
#endif
            }
}
