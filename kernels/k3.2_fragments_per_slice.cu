// Kernel 3.2: Kernel 3.1 with the fragments loaded one k16 slice at a time. 3.1 loads all fragments
// of a stage (two slices: 32 registers of A, 16 of B) and then issues its 32 mma; 3.2 loads one
// slice's fragments (16 + 8 registers), issues that slice's 16 mma, then loads the next slice's.
// From here each step adds one idea, so 3.2 first sets aside 3.1's ways of fitting 128 registers
// (its XOR addresses come back in 4.4, its launch bounds in 3.4) and, without them, issues the copies
// right after the barrier, before the fragments are loaded.
// Block: 16 x 16 threads = 8 warps as 2 (M) x 4 (N); each warp owns a 64 x 32 tile of C.
// K may be any multiple of BK: copies past the last tile are not issued, their groups stay empty.
#include "ptx.cuh"

#ifndef N_STAGES
#define N_STAGES 3
#endif
static_assert(N_STAGES >= 2 && N_STAGES <= 3, "2 or 3 stages: 3 x 16 KB fill the 48 KB of static shared memory");

constexpr int BM = 128;         // block tile
constexpr int BN = 128;
constexpr int BK = 32;
constexpr int WARPS_N = 4;
constexpr int MMA_M = 16;
constexpr int MMA_N = 8;
constexpr int MMA_K = 16;
constexpr int TILES_M = 4;      // mma tiles per warp
constexpr int TILES_N = 4;
constexpr int WM = TILES_M * MMA_M;    // warp tile
constexpr int WN = TILES_N * MMA_N;
constexpr int THREADS = 256;

constexpr int CHUNK = 8;                // fp16 per 16-byte chunk (one uint4, one ldmatrix row)
constexpr int CHUNKS = BK / CHUNK;      // 4 chunks along K per tile row
constexpr int LINE = 8;                 // chunks per 128-byte shared line = all 32 banks
constexpr int K_STEPS = BK / MMA_K;     // 2 mma along K per step, each on 2 chunks
constexpr int STAGE = BM * CHUNKS;      // uint4 slots per stage of one operand
constexpr int LOADS = BM * CHUNKS / THREADS;   // chunks of A (and of B) each thread copies per tile
static_assert(BM == BN && LOADS * THREADS == BM * CHUNKS, "whole chunks of A and B per thread");

// The XOR-permuted slot of Kernel 2.0 (see k2.0_permuted_smem.cu), inside one stage.
__device__ __forceinline__ int permuted_chunk(int row, int chunk) {
    const int line = row / 2;
    const int column = (row % 2) * CHUNKS + chunk;
    return line * LINE + (column ^ (line % 4));
}

extern "C" __global__ void fragments_per_slice(const __half *A, const __half *B, float *C,
                                               int M, int N, int K) {
    __shared__ uint4 As[N_STAGES * STAGE];  // stage s, row m, chunk c at As[s * STAGE + permuted_chunk(m, c)]
    __shared__ uint4 Bs[N_STAGES * STAGE];

    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int warp = tid / 32;
    const int lane = tid % 32;
    const int group = lane >> 2;
    const int tig = lane % 4;

    const int block_m = blockIdx.y * BM;
    const int block_n = blockIdx.x * BN;
    const int warp_m = (warp / WARPS_N) * WM;
    const int warp_n = (warp % WARPS_N) * WN;

    // Copy i of a thread takes tile row tid / CHUNKS + i * ROWS_PER_LOAD, chunk tid % CHUNKS.
    constexpr int ROWS_PER_LOAD = THREADS / CHUNKS;
    const int ld_row = tid / CHUNKS;
    const int ld_chunk = tid % CHUNKS;
    const __half *a_src = &A[(block_m + ld_row) * K + ld_chunk * CHUNK];
    const __half *b_src = &B[(block_n + ld_row) * K + ld_chunk * CHUNK];
    unsigned a_dst[LOADS], b_dst[LOADS];
    for (int i = 0; i < LOADS; ++i) {
        const int slot = permuted_chunk(ld_row + i * ROWS_PER_LOAD, ld_chunk);
        a_dst[i] = smem_u32(&As[slot]);
        b_dst[i] = smem_u32(&Bs[slot]);
    }
    constexpr unsigned STAGE_BYTES = STAGE * sizeof(uint4);

    const int a_row = lane % 16;
    const int a_chunk = lane / 16;
    const int b_row = lane % 8;
    const int b_chunk = (lane / 8) % 2;

    const int k_tiles = K / BK;
    // Start the copies of tile `t` into stage t % N_STAGES; commit even when there is nothing to
    // copy, so that every thread always has exactly one group per tile slot.
    auto load_tile = [&](int t) {
        if (t < k_tiles) {
            const unsigned offset = (t % N_STAGES) * STAGE_BYTES;
            for (int i = 0; i < LOADS; ++i) {
                cp_async_16(a_dst[i] + offset, a_src + i * ROWS_PER_LOAD * K + t * BK);
                cp_async_16(b_dst[i] + offset, b_src + i * ROWS_PER_LOAD * K + t * BK);
            }
        }
        cp_async_commit();
    };

    float acc[TILES_M][TILES_N][4] = {};

    for (int t = 0; t < N_STAGES - 1; ++t) load_tile(t);

    for (int kt = 0; kt < k_tiles; ++kt) {
        // Groups committed so far: N_STAGES - 1 + kt. Allowing N_STAGES - 2 in flight means the
        // oldest kt + 1 have landed, tile kt among them; the barrier makes that true for every
        // thread's copies, and also means every warp is done with stage (kt - 1) % N_STAGES.
        cp_async_wait<N_STAGES - 2>();
        __syncthreads();
        load_tile(kt + N_STAGES - 1);   // into stage (kt - 1) % N_STAGES, now free

        const uint4 *as = &As[(kt % N_STAGES) * STAGE];
        const uint4 *bs = &Bs[(kt % N_STAGES) * STAGE];
        // One k16 slice at a time: 16 + 8 fragment registers instead of a whole stage's.
#pragma unroll
        for (int ks = 0; ks < K_STEPS; ++ks) {
            const int chunk = ks * (MMA_K / CHUNK);
            unsigned a[TILES_M][4], b[TILES_N][2];
            for (int tm = 0; tm < TILES_M; ++tm)
                ldmatrix_x4(a[tm], smem_u32(&as[permuted_chunk(warp_m + tm * MMA_M + a_row,
                                                               chunk + a_chunk)]));
            for (int tn = 0; tn < TILES_N; ++tn)
                ldmatrix_x2(b[tn], smem_u32(&bs[permuted_chunk(warp_n + tn * MMA_N + b_row,
                                                               chunk + b_chunk)]));
            for (int tm = 0; tm < TILES_M; ++tm)
                for (int tn = 0; tn < TILES_N; ++tn)
                    mma_m16n8k16_f32(acc[tm][tn], a[tm], b[tn], acc[tm][tn]);
        }
    }
    cp_async_wait<0>();

    for (int tm = 0; tm < TILES_M; ++tm)
        for (int tn = 0; tn < TILES_N; ++tn)
            for (int h = 0; h < 2; ++h) {
                const int row = tm * MMA_M + group + 8 * h;
                const int col = tn * MMA_N + 2 * tig;
                *reinterpret_cast<float2 *>(&C[(block_m + warp_m + row) * N + block_n + warp_n + col]) =
                    make_float2(acc[tm][tn][2 * h], acc[tm][tn][2 * h + 1]);
            }
}
