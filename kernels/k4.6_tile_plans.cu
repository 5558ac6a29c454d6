// Kernel 4.6: Kernel 4.5 with its tile chosen per problem. The block tile (BM x BN), the warps
// (WARPS_M x WARPS_N) and the pipeline (BK, N_STAGES) are macros, so the launcher can compile a small
// tile for a small or thin C and the 128 x 256 tile for a large one (tcgemm.engine.plan picks). K may be
// split over gridDim.z blocks: block z sums K tiles [z * per, (z + 1) * per) and writes its partial
// C to C + z * M * N; the launcher then adds the slices with reduce_splits (below) in a fixed order,
// so a split result is the same from run to run.
// Any M and N, K a multiple of 8 (the launcher pads other K), as in Kernel 4.5.
#include "ptx.cuh"

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 256
#endif
#ifndef WARPS_M
#define WARPS_M 2
#endif
#ifndef WARPS_N
#define WARPS_N 4
#endif
#ifndef N_STAGES
#define N_STAGES 4
#endif
#ifndef BK
#define BK 64
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
static_assert(N_STAGES >= 2, "a ring buffer needs at least two stages");
static_assert(BK == 32 || BK == 64, "a tile row is half or all of a 128-byte shared line");

constexpr int MMA_M = 16;
constexpr int MMA_N = 8;
constexpr int MMA_K = 16;
constexpr int WM = BM / WARPS_M;        // warp tile
constexpr int WN = BN / WARPS_N;
constexpr int TILES_M = WM / MMA_M;     // mma tiles per warp
constexpr int TILES_N = WN / MMA_N;
constexpr int THREADS = 32 * WARPS_M * WARPS_N;
static_assert(TILES_M * MMA_M * WARPS_M == BM && TILES_N * MMA_N * WARPS_N == BN, "whole mma tiles per warp");
static_assert(TILES_N % 2 == 0, "B fragments are loaded in pairs of n-tiles");

constexpr int CHUNK = 8;                // fp16 per 16-byte chunk (one uint4, one ldmatrix row)
constexpr int CHUNKS = BK / CHUNK;      // chunks along K per tile row: 4 or 8
constexpr int LINE = 8;                 // chunks per 128-byte shared line = all 32 banks
constexpr int ROWS_PER_LINE = LINE / CHUNKS;
constexpr int K_STEPS = BK / MMA_K;
constexpr int A_STAGE = BM * CHUNKS;    // uint4 slots per stage
constexpr int B_STAGE = BN * CHUNKS;
constexpr int ROWS_PER_LOAD = THREADS / CHUNKS;   // tile rows one sweep of the block copies
// Copies per thread per tile; a tile of fewer rows than a sweep leaves the last threads idle.
constexpr int A_LOADS = (BM + ROWS_PER_LOAD - 1) / ROWS_PER_LOAD;
constexpr int B_LOADS = (BN + ROWS_PER_LOAD - 1) / ROWS_PER_LOAD;
constexpr bool A_PARTIAL = BM % ROWS_PER_LOAD != 0;
constexpr bool B_PARTIAL = BN % ROWS_PER_LOAD != 0;

// Kernel 2.0's XOR permutation for either tile width (see Kernel 4.5).
__device__ __forceinline__ int permuted_chunk(int row, int chunk) {
    const int line = row / ROWS_PER_LINE;
    const int column = (row % ROWS_PER_LINE) * CHUNKS + chunk;
    return line * LINE + (column ^ (line % CHUNKS));
}
static_assert((ROWS_PER_LOAD / ROWS_PER_LINE) % CHUNKS == 0 && (MMA_M / ROWS_PER_LINE) % CHUNKS == 0,
              "row offsets of copies and fragments keep the XOR pattern");

extern "C" __global__ void __launch_bounds__(THREADS)
tile_plans(const __half *A, const __half *B, float *C, int M, int N, int K) {
    extern __shared__ uint4 smem[];     // N_STAGES stages of A, then N_STAGES stages of B
    uint4 *As = smem;
    uint4 *Bs = smem + N_STAGES * A_STAGE;

    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int lane = tid % 32;
    const int group = lane >> 2;
    const int tig = lane % 4;

    // Launch index -> tile: groups of GROUP_M tile rows (fewer in the last group), column-major inside.
    const int grid_m = gridDim.y, grid_n = gridDim.x;
    const int launched = blockIdx.y * grid_n + blockIdx.x;
    const int first_row = launched / (GROUP_M * grid_n) * GROUP_M;
    const int group_rows = min(GROUP_M, grid_m - first_row);
    const int in_group = launched % (GROUP_M * grid_n);
    const int block_m = (first_row + in_group % group_rows) * BM;
    const int block_n = (in_group / group_rows) * BN;
    const int warp_m = (warp / WARPS_N) * WM;
    const int warp_n = (warp % WARPS_N) * WN;

    // This block's share of the K tiles, and where its partial C goes.
    const int k_tiles_all = (K + BK - 1) / BK;
    const int per_split = (k_tiles_all + gridDim.z - 1) / gridDim.z;
    const int kt_begin = blockIdx.z * per_split;
    const int kt_end = min(k_tiles_all, kt_begin + per_split);
    C += blockIdx.z * M * N;     // the launcher keeps splits * M * N below 2^31

    const int ld_row = tid / CHUNKS;
    const int ld_chunk = tid % CHUNKS;
    const __half *a_src = &A[(block_m + ld_row) * K + ld_chunk * CHUNK];
    const __half *b_src = &B[(block_n + ld_row) * K + ld_chunk * CHUNK];
    const int a_rows_left = M - block_m - ld_row;    // copy i is in bounds if i * ROWS_PER_LOAD < this
    const int b_rows_left = N - block_n - ld_row;
    const bool inside = block_m + BM <= M && block_n + BN <= N;
    const int st_slot = permuted_chunk(ld_row, ld_chunk);
    const unsigned a_dst = smem_u32(&As[st_slot]);
    const unsigned b_dst = smem_u32(&Bs[st_slot]);
    constexpr unsigned SWEEP_BYTES = ROWS_PER_LOAD * CHUNKS * sizeof(uint4);

    const int a_row = lane % 16;
    const int a_chunk = lane / 16;
    const int b_row = lane % 8 + 8 * (lane / 16);
    const int b_chunk = (lane / 8) % 2;

    // Start the copies of tile `t` into stage (t - kt_begin) % N_STAGES; commit even when there is
    // nothing to copy, so that every thread always has exactly one group per tile slot.
    auto load_tile = [&](int t) {
        if (t < kt_end) {
            const int stage = (t - kt_begin) % N_STAGES;
            const unsigned a_to = a_dst + stage * A_STAGE * sizeof(uint4);
            const unsigned b_to = b_dst + stage * B_STAGE * sizeof(uint4);
            const __half *a_from = a_src + t * BK;
            const __half *b_from = b_src + t * BK;
            if (inside && (t + 1) * BK <= K) {
                for (int i = 0; i < A_LOADS; ++i)
                    if (!A_PARTIAL || ld_row + i * ROWS_PER_LOAD < BM)
                        cp_async_16(a_to + i * SWEEP_BYTES, a_from + i * ROWS_PER_LOAD * K);
                for (int i = 0; i < B_LOADS; ++i)
                    if (!B_PARTIAL || ld_row + i * ROWS_PER_LOAD < BN)
                        cp_async_16(b_to + i * SWEEP_BYTES, b_from + i * ROWS_PER_LOAD * K);
            } else {
                const bool k_in = t * BK + ld_chunk * CHUNK < K;   // K % 8 == 0: whole chunks in or out
                for (int i = 0; i < A_LOADS; ++i) {
                    const bool in = k_in && i * ROWS_PER_LOAD < a_rows_left;
                    if (!A_PARTIAL || ld_row + i * ROWS_PER_LOAD < BM)
                        cp_async_16_or_zero(a_to + i * SWEEP_BYTES, in ? a_from + i * ROWS_PER_LOAD * K : A, in);
                }
                for (int i = 0; i < B_LOADS; ++i) {
                    const bool in = k_in && i * ROWS_PER_LOAD < b_rows_left;
                    if (!B_PARTIAL || ld_row + i * ROWS_PER_LOAD < BN)
                        cp_async_16_or_zero(b_to + i * SWEEP_BYTES, in ? b_from + i * ROWS_PER_LOAD * K : B, in);
                }
            }
        }
        cp_async_commit();
    };

    float acc[TILES_M][TILES_N][4] = {};

    unsigned a[2][TILES_M][4], b[2][TILES_N][2];     // [slice parity][tile][register]
    static_assert(MMA_K == 2 * CHUNK, "a slice is two chunks");
    const unsigned a_off = permuted_chunk(warp_m + a_row, a_chunk) * sizeof(uint4);
    const unsigned b_off = permuted_chunk(warp_n + b_row, b_chunk) * sizeof(uint4);
    constexpr unsigned A_TILE_BYTES = MMA_M * CHUNKS * sizeof(uint4);        // 16 rows down
    constexpr unsigned B_PAIR_BYTES = 2 * MMA_N * CHUNKS * sizeof(uint4);    // 16 rows down
    const unsigned as0 = smem_u32(As), bs0 = smem_u32(Bs);
    auto load_fragments = [&](unsigned (&fa)[TILES_M][4], unsigned (&fb)[TILES_N][2], int kt, int ks) {
        const int stage = (kt - kt_begin) % N_STAGES;
        const unsigned pa = as0 + stage * A_STAGE * sizeof(uint4) + (a_off ^ (ks << 5));
        const unsigned pb = bs0 + stage * B_STAGE * sizeof(uint4) + (b_off ^ (ks << 5));
        for (int tm = 0; tm < TILES_M; ++tm)
            ldmatrix_x4(fa[tm], pa + tm * A_TILE_BYTES);
        for (int tn = 0; tn < TILES_N; tn += 2)
            ldmatrix_x4_pair(fb[tn], fb[tn + 1], pb + tn / 2 * B_PAIR_BYTES);
    };

    for (int t = 0; t < N_STAGES - 1; ++t) load_tile(kt_begin + t);
    cp_async_wait<N_STAGES - 2>();
    __syncthreads();
    if (kt_begin < kt_end) load_fragments(a[0], b[0], kt_begin, 0);

    for (int kt = kt_begin; kt < kt_end; ++kt) {
#pragma unroll
        for (int ks = 0; ks < K_STEPS; ++ks) {
            if (ks == 0) load_tile(kt + N_STAGES - 1);   // into the stage freed by the last barrier
            const int cur = ks % 2, next = (ks + 1) % 2;
            if (ks + 1 < K_STEPS) {
                load_fragments(a[next], b[next], kt, ks + 1);
            } else if (kt + 1 < kt_end) {
                cp_async_wait<N_STAGES - 2>();
                __syncthreads();
                load_fragments(a[next], b[next], kt + 1, 0);
            }
            for (int tm = 0; tm < TILES_M; ++tm)
                for (int tn = 0; tn < TILES_N; ++tn)
                    mma_m16n8k16_f32(acc[tm][tn], a[cur][tm], b[cur][tn], acc[tm][tn]);
        }
    }
    cp_async_wait<0>();

    // Pairs of columns as float2 where C's rows keep 8-byte alignment; otherwise, and at the edges, floats.
    const bool pairs = N % 2 == 0 && reinterpret_cast<size_t>(C) % 8 == 0;
#pragma unroll
    for (int tm = 0; tm < TILES_M; ++tm)
#pragma unroll
        for (int tn = 0; tn < TILES_N; ++tn)
#pragma unroll
            for (int h = 0; h < 2; ++h) {       // rows group and group + 8
                const int row = block_m + warp_m + tm * MMA_M + group + 8 * h;
                const int col = block_n + warp_n + tn * MMA_N + 2 * tig;
                const float v0 = acc[tm][tn][2 * h], v1 = acc[tm][tn][2 * h + 1];
                const int at = row * N + col;
                if (row < M && (inside || col + 1 < N) && pairs) {
                    *reinterpret_cast<float2 *>(&C[at]) = make_float2(v0, v1);
                } else if (row < M) {
                    if (col < N) C[at] = v0;
                    if (col + 1 < N) C[at + 1] = v1;
                }
            }
}

// C[i] = sum over z of partial[z * count + i], z in order: the second kernel of a split-K launch.
extern "C" __global__ void reduce_splits(const float *partial, float *C, int count, int splits) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        float sum = 0.f;
        for (int z = 0; z < splits; ++z) sum += partial[static_cast<size_t>(z) * count + i];
        C[i] = sum;
    }
}
