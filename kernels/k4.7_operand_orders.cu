// Kernel 4.7: Kernel 4.6 for A and B in either memory order, D = alpha * A @ B + beta * C_in.
// A row-major and B column-major (the default) are "K-major": their tiles are copied as rows of K,
// as before. A column-major (A_COL_MAJOR=1) or B row-major (B_COL_MAJOR=0) is "MN-major": its tile is
// copied as it lies, rows of M or N for each k, and ldmatrix.trans transposes the 8x8 matrices on the
// way into the registers, so the mma fragments are the same and nothing is copied in global memory.
// lda and ldb are the operands' leading dimensions (elements between rows of the stored matrix):
// multiples of 8, with A and B 16-byte aligned (the launcher copies an operand that is not). Copies
// at the edges of M, N and K read only what is there and zero-fill the rest: any M, N and K.
// K may be split over gridDim.z as in Kernel 4.6; reduce_splits then applies alpha and beta.
#include "ptx.cuh"

#ifndef A_COL_MAJOR
#define A_COL_MAJOR 0
#endif
#ifndef B_COL_MAJOR
#define B_COL_MAJOR 1
#endif
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
constexpr int LINE = 8;                 // chunks per 128-byte shared line = all 32 banks
constexpr int K_STEPS = BK / MMA_K;

// One operand's tile in shared memory: ROWS rows of CH 16-byte chunks. K-major: a row per m (or n),
// chunks along K. MN-major: a row per k, chunks along M (or N). Thread tid copies the chunks
// (tid / CH + i * ROWS_PER_LOAD, tid % CH) of every tile.
template <bool K_MAJOR, int MN>
struct Operand {
    static constexpr int ROWS = K_MAJOR ? MN : BK;
    static constexpr int CH = (K_MAJOR ? BK : MN) / CHUNK;
    static constexpr int STAGE = ROWS * CH;           // uint4 slots per stage
    static constexpr unsigned ROWS16_BYTES = 16 * CH * sizeof(uint4);   // 16 rows down
    static constexpr int ROWS_PER_LOAD = THREADS / CH;
    static constexpr int LOADS = (ROWS + ROWS_PER_LOAD - 1) / ROWS_PER_LOAD;
    static constexpr bool PARTIAL = ROWS % ROWS_PER_LOAD != 0;
    static_assert(CH <= THREADS && THREADS % CH == 0, "a sweep of the block copies whole rows");

    // Kernel 2.0's XOR permutation: a row of at most 8 chunks shares a 128-byte line with the next
    // ones, and the line number XORs its chunk; a longer row XORs each of its lines by the row number.
    // Either way 8 consecutive rows at one chunk (one ldmatrix matrix) fall in 8 different bank groups.
    __device__ static int slot(int row, int chunk) {
        if (CH <= LINE) {
            const int line = row / (LINE / CH);
            const int column = (row % (LINE / CH)) * CH + chunk;
            return line * LINE + (column ^ (line % CH));
        }
        return row * CH + (chunk & ~(LINE - 1)) + ((chunk ^ row) & (LINE - 1));
    }

    // A thread's copies are whole XOR periods apart, so copy i lands at copy 0's slot + i sweeps.
    static constexpr unsigned SWEEP_BYTES = ROWS_PER_LOAD * CH * sizeof(uint4);
    static_assert(CH <= LINE ? ROWS_PER_LOAD % (LINE / CH) == 0 && ROWS_PER_LOAD / (LINE / CH) % CH == 0
                             : ROWS_PER_LOAD % LINE == 0, "a sweep keeps the XOR pattern");

    const __half *base, *src;
    unsigned first;                               // copy 0's byte offset in a stage
    int ld, row, rows_left, elems_left;           // rows_left and elems_left: for tile 0

    __device__ Operand(const __half *X, int ld_, int block_mn, int mn_size, int K, int tid)
        : base(X), first(slot(tid / CH, tid % CH) * sizeof(uint4)), ld(ld_), row(tid / CH) {
        const int chunk = tid % CH;
        if (K_MAJOR) {
            src = X + (block_mn + row) * ld + chunk * CHUNK;
            rows_left = mn_size - block_mn - row;
            elems_left = K - chunk * CHUNK;
        } else {
            src = X + row * ld + block_mn + chunk * CHUNK;
            rows_left = K - row;
            elems_left = mn_size - block_mn - chunk * CHUNK;
        }
    }

    // Start the copies of tile t into the stage at shared address `stage`; `whole`: the tile is inside.
    __device__ __forceinline__ void copy(unsigned stage, int t, bool whole) const {
        const __half *from = src + (K_MAJOR ? t * BK : t * BK * ld);
        const unsigned to = stage + first;
        if (whole) {
            for (int i = 0; i < LOADS; ++i)
                if (!PARTIAL || row + i * ROWS_PER_LOAD < ROWS)
                    cp_async_16(to + i * SWEEP_BYTES, from + i * ROWS_PER_LOAD * ld);
        } else {
            const int rows = rows_left - (K_MAJOR ? 0 : t * BK);
            const int bytes = 2 * max(0, min(CHUNK, elems_left - (K_MAJOR ? t * BK : 0)));
            for (int i = 0; i < LOADS; ++i) {
                const bool in = i * ROWS_PER_LOAD < rows && bytes > 0;
                if (!PARTIAL || row + i * ROWS_PER_LOAD < ROWS)
                    cp_async_16_first(to + i * SWEEP_BYTES, in ? from + i * ROWS_PER_LOAD * ld : base, in ? bytes : 0);
            }
        }
    }
};
using OperandA = Operand<!A_COL_MAJOR, BM>;
using OperandB = Operand<B_COL_MAJOR, BN>;

extern "C" __global__ void __launch_bounds__(THREADS)
operand_orders(const __half *A, const __half *B, float *C, int M, int N, int K, int lda, int ldb,
               float alpha, float beta, const float *C_in) {
    extern __shared__ uint4 smem[];     // N_STAGES stages of A, then N_STAGES stages of B
    uint4 *As = smem;
    uint4 *Bs = smem + N_STAGES * OperandA::STAGE;

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

    const OperandA a_copy(A, lda, block_m, M, K, tid);
    const OperandB b_copy(B, ldb, block_n, N, K, tid);
    const bool inside = block_m + BM <= M && block_n + BN <= N;
    const unsigned as0 = smem_u32(As), bs0 = smem_u32(Bs);

    // Start the copies of tile `t` into stage (t - kt_begin) % N_STAGES; commit even when there is
    // nothing to copy, so that every thread always has exactly one group per tile slot.
    auto load_tile = [&](int t) {
        if (t < kt_end) {
            const int stage = (t - kt_begin) % N_STAGES;
            const bool whole = inside && (t + 1) * BK <= K;
            a_copy.copy(as0 + stage * OperandA::STAGE * sizeof(uint4), t, whole);
            b_copy.copy(bs0 + stage * OperandB::STAGE * sizeof(uint4), t, whole);
        }
        cp_async_commit();
    };

    float acc[TILES_M][TILES_N][4] = {};

    // Fragment addresses of tile tm in a stage, at k step 0. K-major: Kernel 4.6's (tile tm is tm * 16
    // rows below tile 0, and k step ks XORs the chunk with 2 ks). MN-major: lane l points at row
    // k = l % 8 + 8 * (l / 16) (A) or l % 8 + 8 * (l / 8 % 2) (B) of its matrix's m (n) chunk, one
    // address per tile, and k step ks is 16 rows further down.
    unsigned a[2][TILES_M][4], b[2][TILES_N][2];     // [slice parity][tile][register]
    unsigned a_off[TILES_M], b_off[TILES_N / 2];
    for (int tm = 0; tm < TILES_M; ++tm)
        a_off[tm] = sizeof(uint4) * (A_COL_MAJOR
            ? OperandA::slot(lane % 8 + 8 * (lane / 16), (warp_m + tm * MMA_M) / CHUNK + lane / 8 % 2)
            : OperandA::slot(warp_m + tm * MMA_M + lane % 16, lane / 16));
    for (int tn = 0; tn < TILES_N; tn += 2)
        b_off[tn / 2] = sizeof(uint4) * (B_COL_MAJOR
            ? OperandB::slot(warp_n + tn * MMA_N + lane % 8 + 8 * (lane / 16), lane / 8 % 2)
            : OperandB::slot(lane % 8 + 8 * (lane / 8 % 2), (warp_n + tn * MMA_N) / CHUNK + lane / 16));
    auto load_fragments = [&](unsigned (&fa)[TILES_M][4], unsigned (&fb)[TILES_N][2], int kt, int ks) {
        const int stage = (kt - kt_begin) % N_STAGES;
        const unsigned pa = as0 + stage * OperandA::STAGE * sizeof(uint4);
        const unsigned pb = bs0 + stage * OperandB::STAGE * sizeof(uint4);
        for (int tm = 0; tm < TILES_M; ++tm) {
            if (A_COL_MAJOR) ldmatrix_x4_trans(fa[tm], pa + a_off[tm] + ks * OperandA::ROWS16_BYTES);
            else ldmatrix_x4(fa[tm], pa + (a_off[0] ^ (ks << 5)) + tm * OperandA::ROWS16_BYTES);
        }
        for (int tn = 0; tn < TILES_N; tn += 2) {
            if (B_COL_MAJOR)
                ldmatrix_x4_pair(fb[tn], fb[tn + 1], pb + (b_off[0] ^ (ks << 5)) + tn / 2 * OperandB::ROWS16_BYTES);
            else
                ldmatrix_x4_trans_pair(fb[tn], fb[tn + 1], pb + b_off[tn / 2] + ks * OperandB::ROWS16_BYTES);
        }
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

    // alpha * acc + beta * C_in, C_in read only where beta != 0 (so it may hold anything, NaN too).
    // Pairs of columns as float2 where C's and C_in's rows keep 8-byte alignment; otherwise floats.
    const bool pairs = N % 2 == 0 && reinterpret_cast<size_t>(C) % 8 == 0 &&
                       (beta == 0.f || reinterpret_cast<size_t>(C_in) % 8 == 0);
#pragma unroll
    for (int tm = 0; tm < TILES_M; ++tm)
#pragma unroll
        for (int tn = 0; tn < TILES_N; ++tn)
#pragma unroll
            for (int h = 0; h < 2; ++h) {       // rows group and group + 8
                const int row = block_m + warp_m + tm * MMA_M + group + 8 * h;
                const int col = block_n + warp_n + tn * MMA_N + 2 * tig;
                float v0 = alpha * acc[tm][tn][2 * h], v1 = alpha * acc[tm][tn][2 * h + 1];
                const int at = row * N + col;
                if (row < M && (inside || col + 1 < N) && pairs) {
                    if (beta != 0.f) {
                        const float2 c = *reinterpret_cast<const float2 *>(&C_in[at]);
                        v0 += beta * c.x;
                        v1 += beta * c.y;
                    }
                    *reinterpret_cast<float2 *>(&C[at]) = make_float2(v0, v1);
                } else if (row < M) {
                    if (col < N) C[at] = beta != 0.f ? v0 + beta * C_in[at] : v0;
                    if (col + 1 < N) C[at + 1] = beta != 0.f ? v1 + beta * C_in[at + 1] : v1;
                }
            }
}

// C[i] = alpha * (sum over z of partial[z * count + i], z in order) + beta * C_in[i]: the second
// kernel of a split-K launch (whose first kernel ran with alpha = 1, beta = 0).
extern "C" __global__ void reduce_splits(const float *partial, float *C, int count, int splits,
                                         float alpha, float beta, const float *C_in) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        float sum = 0.f;
        for (int z = 0; z < splits; ++z) sum += partial[static_cast<size_t>(z) * count + i];
        C[i] = beta != 0.f ? alpha * sum + beta * C_in[i] : alpha * sum;
    }
}
