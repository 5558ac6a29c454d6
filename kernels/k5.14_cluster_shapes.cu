// Kernel 5.14: Kernel 5.11 with the cluster's shape a choice, CLUSTER_M x CLUSTER_N blocks: 2 x 1 (5.11's),
// 1 x 2 or 2 x 2. The blocks of a cluster side by side along N share A's tile as those along M share B's:
// each copies its share of both and multicasts it, so a block copies 1 / CLUSTER_N of A and 1 / CLUSTER_M
// of B. At 1000 x 1000 x 1000 in 128 x 64 tiles, 5.11's blocks read 20 KB per K step from L2, 2 x 2
// clusters' 12 KB. A 1 x 2 cluster gives a short M (64 or 128 rows) a pair of tiles along N, where 5.11's
// pairs are 256 rows, half of them past M; its tiles may be 32 columns wide (wgmma m64n32k16, B K-major),
// so 4096 columns are 128 blocks. A share of A or B that lies wholly past M or N is not copied at all,
// where TMA would have filled it with zeros. Everything else is Kernel 5.11's.
#include "ptx.cuh"
#include "wgmma.cuh"
#include "trace.cuh"

#ifndef N_STAGES
#define N_STAGES 4
#endif
#ifndef BK
#define BK 64                                        // fp16 = 128 bytes: one swizzle row
#endif
static_assert(BK == 64, "a tile row is one row of the 128-byte swizzle");
#ifndef SKIP_STORE
#define SKIP_STORE 0                                 // 1: C is not stored (a measurement only, see below)
#endif
#ifndef HALF_STORE
#define HALF_STORE 0                                 // 1: only odd clusters store C (a measurement only)
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef BF16
#define BF16 0                                       // 1: A and B (and a 16-bit C) are bf16 instead of f16
#endif
#ifndef C_BITS
#define C_BITS 16                                    // 16: C in the inputs' type; 32: C in fp32
#endif
#ifndef A_COL_MAJOR
#define A_COL_MAJOR 0
#endif
#ifndef B_COL_MAJOR
#define B_COL_MAJOR 1
#endif

#ifndef BN
#define BN 256                                       // the tile's columns: 256, 192, 128, 64 or 32
#endif
static_assert(BN == 256 || BN == 192 || BN == 128 || BN == 64 || BN == 32, "wgmma.cuh has m64n256 to m64n32");
#ifndef CLUSTER_M
#define CLUSTER_M 2                                  // the cluster's blocks along M, sharing B's tile
#endif
#ifndef CLUSTER_N
#define CLUSTER_N 1                                  // the cluster's blocks along N, sharing A's tile
#endif
static_assert(CLUSTER_M <= 2 && CLUSTER_N <= 2 && CLUSTER_M * CLUSTER_N > 1, "clusters of 2 x 1, 1 x 2 or 2 x 2");
constexpr int CLUSTER = CLUSTER_M * CLUSTER_N;
constexpr int BM = 128;                              // the tile's rows
constexpr int A_TILE = BM * BK * 2, B_TILE = BN * BK * 2, STAGE_BYTES = A_TILE + B_TILE;
constexpr int WG_ROWS = 64;                          // rows of the tile per warpgroup (wgmma's M)
constexpr int BOX_MN = 64, BOX_BYTES = BOX_MN * BK * 2;    // an MN-major box: 64 M or N by BK rows of K
constexpr bool A_MN = A_COL_MAJOR, B_MN = !B_COL_MAJOR;   // MN-major operands, read transposed
constexpr bool B_SHARES = !B_MN || BN / CLUSTER_M % BOX_MN == 0;  // each block copies its share of B's tile
static_assert(!B_MN || BN >= BOX_MN, "an MN-major B is whole 64-column boxes");
// Per k16 step the operand's start moves 16 elements along its 128-byte rows (K-major) or 16 rows down.
constexpr unsigned A_STEP = A_MN ? 16 * 128 : 32, B_STEP = B_MN ? 16 * 128 : 32;
constexpr unsigned A_LBO = A_MN ? BOX_BYTES : 16, B_LBO = B_MN ? BOX_BYTES : 16;
#if C_BITS == 16
typedef unsigned short c_t;                          // C's bits
#else
typedef float c_t;
#endif
constexpr int C_BOX_COLS = 128 / sizeof(c_t), C_BOX_BYTES = WG_ROWS * 128;   // one TMA box of C: 128-byte rows
constexpr int C_BUFFERS = 2;                                                // boxes per consumer warpgroup

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Two accumulators of adjacent columns as 16-bit values rounded to nearest even, the first column's in
// the low half (the lower address).
__device__ __forceinline__ unsigned pack_pair(float first, float second) {
    unsigned packed;
#if BF16
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(second), "f"(first));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(second), "f"(first));
#endif
    return packed;
}

// C's elements x0 and x1 at p and p + 1 (x1 only where `both`): one 32-bit or 64-bit store where `pair`.
__device__ __forceinline__ void store_pair(c_t *p, float x0, float x1, bool pair, bool both) {
#if C_BITS == 16
    const unsigned packed = pack_pair(x0, x1);
    if (pair) *reinterpret_cast<unsigned *>(p) = packed;
    else { p[0] = static_cast<c_t>(packed & 0xFFFF); if (both) p[1] = static_cast<c_t>(packed >> 16); }
#else
    if (pair) *reinterpret_cast<float2 *>(p) = make_float2(x0, x1);
    else { p[0] = x0; if (both) p[1] = x1; }
#endif
}

__device__ __forceinline__ void store_tile(float (&d)[BN / 2], c_t *C, int row0, int col0, int M, int N) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    // A pair is one store where every row starts at a multiple of its size, as C itself does.
    const bool pairs = N % 2 == 0 && reinterpret_cast<unsigned long long>(C) % (2 * sizeof(c_t)) == 0;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = row0 + 16 * warp + lane / 4 + 8 * h, col = col0 + 8 * j + 2 * (lane % 4);
            if (row >= M || col >= N) continue;
            store_pair(&C[static_cast<long long>(row) * N + col], d[4 * j + 2 * h], d[4 * j + 2 * h + 1],
                       pairs, col + 1 < N);
        }
}

// The warpgroup's tile, box by box through its C_BUFFERS buffers (`buffers`: 1024-byte aligned);
// warpgroup `c` of the consumers syncs on named barrier 1 + c. A buffer is refilled once the store
// C_BUFFERS boxes back has read it. `boxes` counts the warpgroup's boxes on from tile to tile: a tile of
// one box (64 columns of 16-bit C) takes the other buffer from the tile before, whose store may be reading.
__device__ __forceinline__ void store_tile_tma(float (&d)[BN / 2], const TensorMap *map_c, unsigned buffers, int row0,
                                               int col0, int c, unsigned &boxes) {
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
#pragma unroll
    for (int box = 0; box < BN / C_BOX_COLS; ++box) {
        const unsigned buffer = buffers + boxes++ % C_BUFFERS * C_BOX_BYTES;
        if (t == 0) bulk_wait_group_read<C_BUFFERS - 1>();
        named_barrier_sync(1 + c, 128);
#pragma unroll
        for (int j = 0; j < C_BOX_COLS / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {      // row r, 16-byte chunk q of its 128: stored at chunk q ^ (r % 8)
                const int r = 16 * warp + lane / 4 + 8 * h, i = 4 * (C_BOX_COLS / 8 * box + j) + 2 * h;
#if C_BITS == 16
                // 16-bit: chunk j holds the 8 columns 8j..8j+7, the pair is its 4-byte word lane % 4
                st_shared_b32(buffer + r * 128 + (j ^ r % 8) * 16 + lane % 4 * 4, pack_pair(d[i], d[i + 1]));
#else
                const int q = 2 * j + lane % 4 / 2;
                st_shared_f32x2(buffer + r * 128 + (q ^ r % 8) * 16 + lane % 2 * 8, d[i], d[i + 1]);
#endif
            }
        fence_proxy_async_shared();             // the writes, visible to TMA
        named_barrier_sync(1 + c, 128);
        if (t == 0) {
            tma_store_2d(map_c, buffer, col0 + box * C_BOX_COLS, row0);
            bulk_commit_group();
        }
    }
}

// The first row and column of the cluster's tiles number `tile` (CLUSTER_M x CLUSTER_N tiles) in grouped
// order: down GROUP_M cluster rows, then the next column of them.
__device__ __forceinline__ void tile_origin(int tile, int tiles_m, int tiles_n, int &m0, int &n0) {
    const int group = tile / (GROUP_M * tiles_n), first = group * GROUP_M;
    const int rows = min(GROUP_M, tiles_m - first);
    m0 = (first + tile % (GROUP_M * tiles_n) % rows) * BM * CLUSTER_M;
    n0 = tile % (GROUP_M * tiles_n) / rows * BN * CLUSTER_N;
}
#endif

extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(384, 1)
cluster_shapes(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b,
            const __grid_constant__ TensorMap map_c, c_t *C, int M, int N, int K) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ unsigned char smem[];
    const unsigned base = (smem_u32(smem) + 1023) & ~1023u;     // swizzled stages start 1024-aligned
    __shared__ unsigned long long full_bars[N_STAGES], empty_bars[N_STAGES];   // stage s filled / free
    const unsigned full = smem_u32(full_bars), empty = smem_u32(empty_bars);
    const int wg = threadIdx.x / 128;
    const unsigned rank = cluster_rank(), rank_m = rank % CLUSTER_M, rank_n = rank / CLUSTER_M;
    // The blocks of this one's cluster row (same tile rows: A) and cluster column (same columns: B).
    const unsigned short row_mask = CLUSTER_M == 1 ? 0b11 : 0b101 << rank_m;
    const unsigned short column_mask = ((1 << CLUSTER_M) - 1) << (CLUSTER_M * rank_n);
    const int cluster_rows = (M + CLUSTER_M * BM - 1) / (CLUSTER_M * BM);
    const int tiles_n = (N + CLUSTER_N * BN - 1) / (CLUSTER_N * BN), tiles = cluster_rows * tiles_n;
    const int k_tiles = (K + BK - 1) / BK;

    // Copy K tile kt of output tile (m0, n0) into the stage of ring step `step`: this block's share of A's
    // tile (A_ROWS rows) and of B's (B_COLS columns), each multicast to the blocks that share it. An
    // MN-major operand's map has K as its rows: one box per 64 of the tile's M or N; an MN-major B of 64
    // or 192 columns is copied box by box, by the blocks in turn. A piece (a share or a box) that starts
    // past M or N is not copied, and the stage expects only the bytes of those that are: the tile's rows
    // and columns past M and N are computed from stale data and never stored.
    constexpr int A_ROWS = BM / CLUSTER_N, B_COLS = BN / CLUSTER_M;
    constexpr int A_PIECE = A_MN ? BOX_MN : A_ROWS, B_PIECE = B_MN ? BOX_MN : B_COLS;
    auto pieces = [](int left, int piece, int all) { return max(0, min(all, (left + piece - 1) / piece)); };
    auto load = [&](int step, int kt, int m0, int n0) {
        const unsigned s = step % N_STAGES, dst = base + s * STAGE_BYTES, bar = full + 8 * s;
        mbarrier_arrive_expect_tx(bar, (pieces(M - m0, A_PIECE, BM / A_PIECE) * A_PIECE +
                                        pieces(N - n0, B_PIECE, BN / B_PIECE) * B_PIECE) * BK * 2);
        // Rows (or columns) mn on of the operand at `to`: a box of K-major rows, or of MN-major columns.
        auto copy = [&](const TensorMap *map, unsigned to, bool mn_major, int mn, bool multicast, unsigned short mask) {
            const int x = mn_major ? mn : kt * BK, y = mn_major ? kt * BK : mn;
            if (multicast) tma_load_2d_multicast(to, map, bar, x, y, mask);
            else tma_load_2d(to, map, bar, x, y);
        };
        for (int row = rank_n * A_ROWS; row < (rank_n + 1) * A_ROWS && m0 + row < M; row += A_PIECE)
            copy(&map_a, dst + row * BK * 2, A_MN, m0 + row, CLUSTER_N > 1, row_mask);
        const unsigned b = dst + A_TILE;
        if (B_SHARES)
            for (int col = rank_m * B_COLS; col < (rank_m + 1) * B_COLS && n0 + col < N; col += B_PIECE)
                copy(&map_b, b + col * BK * 2, B_MN, n0 + col, CLUSTER_M > 1, column_mask);
        else
            for (int col = rank_m * BOX_MN; col < BN && n0 + col < N; col += CLUSTER_M * BOX_MN)
                copy(&map_b, b + col * BK * 2, true, n0 + col, true, column_mask);
    };
    if (threadIdx.x == 0) {
        for (int s = 0; s < N_STAGES; ++s) {
            mbarrier_init(full + 8 * s, 1);
            mbarrier_init(empty + 8 * s, 2 * CLUSTER);   // one arrival per consumer warpgroup of the cluster
        }
        fence_barrier_init();
    }
    cluster_sync();                                 // every block's barriers exist before any copy names them
    trace_start();

    if (wg == 0) {                                  // the producer
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0)
            for (int tile = blockIdx.x / CLUSTER, step = 0; tile < tiles; tile += gridDim.x / CLUSTER) {
                int m0, n0;
                tile_origin(tile, cluster_rows, tiles_n, m0, n0);
                m0 += rank_m * BM;
                n0 += rank_n * BN;
                for (int kt = 0; kt < k_tiles; ++kt, ++step) {
                    if (step >= N_STAGES) mbarrier_wait(empty + 8 * (step % N_STAGES), (step / N_STAGES - 1) % 2);
                    load(step, kt, m0, n0);
                }
            }
    } else {
        setmaxnreg_inc<232>();
        auto release = [&](unsigned bar) {             // this stage, in every block of the cluster
#pragma unroll
            for (int r = 0; r < CLUSTER; ++r) mbarrier_arrive_cluster(cluster_address(bar, r));
        };
        const int c = wg - 1;                           // consumer 0 or 1
        float d[BN / 2] = {};
        unsigned boxes = 0;                             // boxes of C this warpgroup has stored
        for (int tile = blockIdx.x / CLUSTER, step = 0, i = 0; tile < tiles; tile += gridDim.x / CLUSTER, ++i) {
            int m0, n0;
            tile_origin(tile, cluster_rows, tiles_n, m0, n0);
            m0 += rank_m * BM;
            n0 += rank_n * BN;
            for (int kt = 0; kt < k_tiles; ++kt, ++step) {
                const unsigned s = step % N_STAGES, parity = (step / N_STAGES) % 2;
                mbarrier_wait(full + 8 * s, parity);
                if (kt == 0) trace_tile(i, STAGE_ARRIVED);
                const unsigned a = base + s * STAGE_BYTES + c * WG_ROWS * 128, b = base + s * STAGE_BYTES + A_TILE;
                wgmma_fence();
#pragma unroll
                for (int k = 0; k < BK / 16; ++k)  // the tile's first wgmma overwrites D instead of adding
                    wgmma_m64nNk16_f32_ss<BN, A_MN, B_MN, BF16>(d, descriptor_sw128(a + A_STEP * k, A_LBO),
                                                                descriptor_sw128(b + B_STEP * k, B_LBO), kt > 0 || k > 0);
                wgmma_commit_group();
                wgmma_wait_group<1>();
                if (kt > 0 && threadIdx.x % 128 == 0) release(empty + 8 * ((step - 1) % N_STAGES));
            }
            wgmma_wait_group<0>();                  // the tile's last stage is free, and D complete
            if (threadIdx.x % 128 == 0) release(empty + 8 * ((step - 1) % N_STAGES));
            wgmma_fence_operands(d);
            trace_tile(i, MAIN_LOOP_DONE);
            // The measurements SKIP_STORE and HALF_STORE keep the main loop's work: d is never NaN here.
            const bool store = !(SKIP_STORE || (HALF_STORE && blockIdx.x / CLUSTER % 2 == 0)) || isnan(d[0]);
            if (store && N * sizeof(c_t) % 16 == 0 && BN % C_BOX_COLS == 0)   // rows 16-byte aligned, whole boxes
                store_tile_tma(d, &map_c, base + N_STAGES * STAGE_BYTES + c * C_BUFFERS * C_BOX_BYTES, m0 + c * WG_ROWS, n0, c, boxes);
            else if (store)
                store_tile(d, C, m0 + c * WG_ROWS, n0, M, N);
            trace_tile(i, STORE_ISSUED);
        }
    }
    if (wg > 0 && threadIdx.x % 128 == 0) bulk_wait_group_read<0>();   // the buffers outlive the stores
    trace_end();
    cluster_sync();                                 // no block leaves while the other may still signal it
#endif
}
