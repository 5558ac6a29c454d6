// Kernel 3.1: Kernel 3.0 with 4 x 4 mma tiles per warp instead of 2 x 2: the block tile grows to
// 128 x 128 and each warp issues 32 mma per barrier instead of 8. The larger tile needs more registers
// than two blocks per SM leave a thread (128), and four changes keep it within them:
// - each lane computes its ldmatrix row addresses once: tile tm is a fixed offset, slice ks an XOR;
// - the copies are never skipped: past the last tile they copy the last tile again into the free
//   stage, which is never read, so the copy loop has no branch;
// - the copies of the next tile go between the ldmatrix loads of slice 0 and of slice 1, so that only
//   one slice's fragments are live across them (3.0 issues them after all its loads);
// - __launch_bounds__(THREADS, 2) asks ptxas for two blocks of 256 threads per SM.
// The first two are how the worklog's own kernels address and copy (from its Kernel 3.0 on).
// Block: 16 x 16 threads = 8 warps as 2 (M) x 4 (N); each warp owns a 64 x 32 tile of C.
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
static_assert(MMA_M % 8 == 0 && MMA_N % 8 == 0, "tile offsets are whole XOR periods (4 lines = 8 rows)");

extern "C" __global__ void __launch_bounds__(THREADS, 2)
pipeline_4x_tiles(const __half *A, const __half *B, float *C, int M, int N, int K) {
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

    // Byte offsets in a stage of this lane's ldmatrix row for tile 0, slice 0. Slice ks adds 2 ks to
    // the chunk, which the permutation (an XOR of the chunk with bits of the row) turns into an XOR
    // of the byte offset with ks << 5; tile tm lies 16 (A) or 8 (B) rows down, whole XOR periods.
    const unsigned a_off = permuted_chunk(warp_m + a_row, a_chunk) * sizeof(uint4);
    const unsigned b_off = permuted_chunk(warp_n + b_row, b_chunk) * sizeof(uint4);
    constexpr unsigned A_TILE_BYTES = MMA_M * CHUNKS * sizeof(uint4);
    constexpr unsigned B_TILE_BYTES = MMA_N * CHUNKS * sizeof(uint4);
    const unsigned as0 = smem_u32(As), bs0 = smem_u32(Bs);

    const int k_tiles = K / BK;
    // Start the copies of tile `t` into stage t % N_STAGES. Past the last tile the copies bring the
    // last tile again (into a stage no warp reads), so every thread has one group per tile slot.
    auto load_tile = [&](int t) {
        const unsigned offset = (t % N_STAGES) * STAGE_BYTES;
        const int tile = min(t, k_tiles - 1);
        for (int i = 0; i < LOADS; ++i) {
            cp_async_16(a_dst[i] + offset, a_src + i * ROWS_PER_LOAD * K + tile * BK);
            cp_async_16(b_dst[i] + offset, b_src + i * ROWS_PER_LOAD * K + tile * BK);
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

        const unsigned pa = as0 + (kt % N_STAGES) * STAGE_BYTES;
        const unsigned pb = bs0 + (kt % N_STAGES) * STAGE_BYTES;
        unsigned a[TILES_M][K_STEPS][4], b[TILES_N][K_STEPS][2];
        for (int ks = 0; ks < K_STEPS; ++ks) {
            for (int tm = 0; tm < TILES_M; ++tm)
                ldmatrix_x4(a[tm][ks], pa + tm * A_TILE_BYTES + (a_off ^ (ks << 5)));
            for (int tn = 0; tn < TILES_N; ++tn)
                ldmatrix_x2(b[tn][ks], pb + tn * B_TILE_BYTES + (b_off ^ (ks << 5)));
            if (ks == 0) load_tile(kt + N_STAGES - 1);   // into stage (kt - 1) % N_STAGES, free since the barrier
        }

        for (int tm = 0; tm < TILES_M; ++tm)
            for (int tn = 0; tn < TILES_N; ++tn)
                for (int ks = 0; ks < K_STEPS; ++ks)
                    mma_m16n8k16_f32(acc[tm][tn], a[tm][ks], b[tn][ks], acc[tm][tn]);
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
