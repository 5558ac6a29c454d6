// Kernel 5.13: Kernel 5.11 writing C column-major, element (r, c) at c * M + r, from the threads. For a
// short M against a long N, tcgemm.matmul computes the product turned round, C^T = B^T A^T: N fills the
// tiles' rows and the clusters, M is the tile's 64 or 128 columns, and C^T written column-major is C itself,
// row-major. 128 x 14336 x 4096 is then 56 clusters of two 128 x 128 tiles, every row of them real, where
// one block of each of Kernel 5.9's 56 clusters works on rows past M. TMA stores boxes of rows, so the
// threads store C: each pair of accumulators is two elements M apart. Everything else is Kernel 5.11's.
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
#define BN 256                                       // the tile's columns: 256, 192, 128 or 64
#endif
static_assert(BN == 256 || BN == 192 || BN == 128 || BN == 64, "wgmma.cuh has m64n256, n192, n128 and n64");
constexpr int BM = 128;                              // the tile's rows
constexpr int A_TILE = BM * BK * 2, B_TILE = BN * BK * 2, STAGE_BYTES = A_TILE + B_TILE;
constexpr int WG_ROWS = 64;                          // rows of the tile per warpgroup (wgmma's M)
constexpr int BOX_MN = 64, BOX_BYTES = BOX_MN * BK * 2;    // an MN-major box: 64 M or N by BK rows of K
constexpr bool A_MN = A_COL_MAJOR, B_MN = !B_COL_MAJOR;   // MN-major operands, read transposed
constexpr bool B_HALVES = !B_MN || BN / 2 % BOX_MN == 0;  // each block copies half of B's tile
// Per k16 step the operand's start moves 16 elements along its 128-byte rows (K-major) or 16 rows down.
constexpr unsigned A_STEP = A_MN ? 16 * 128 : 32, B_STEP = B_MN ? 16 * 128 : 32;
constexpr unsigned A_LBO = A_MN ? BOX_BYTES : 16, B_LBO = B_MN ? BOX_BYTES : 16;
#if C_BITS == 16
typedef unsigned short c_t;                          // C's bits
#else
typedef float c_t;
#endif

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

// C's elements x0 and x1 at p and p + step (x1 only where `both`).
__device__ __forceinline__ void store_apart(c_t *p, long long step, float x0, float x1, bool both) {
#if C_BITS == 16
    const unsigned packed = pack_pair(x0, x1);
    p[0] = static_cast<c_t>(packed & 0xFFFF);
    if (both) p[step] = static_cast<c_t>(packed >> 16);
#else
    p[0] = x0;
    if (both) p[step] = x1;
#endif
}

__device__ __forceinline__ void store_tile(float (&d)[BN / 2], c_t *C, int row0, int col0, int M, int N) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = row0 + 16 * warp + lane / 4 + 8 * h, col = col0 + 8 * j + 2 * (lane % 4);
            if (row >= M || col >= N) continue;
            store_apart(&C[static_cast<long long>(col) * M + row], M, d[4 * j + 2 * h], d[4 * j + 2 * h + 1], col + 1 < N);
        }
}

// Output tile pair `tile` (in units of two tile rows) in grouped order: down GROUP_M pair rows, then the
// next column of tiles.
__device__ __forceinline__ void tile_origin(int tile, int tiles_m, int tiles_n, int &m0, int &n0) {
    const int group = tile / (GROUP_M * tiles_n), first = group * GROUP_M;
    const int rows = min(GROUP_M, tiles_m - first);
    m0 = (first + tile % (GROUP_M * tiles_n) % rows) * BM;   // the pair's first row / 2
    n0 = tile % (GROUP_M * tiles_n) / rows * BN;
}
#endif

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
c_column_major(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, c_t *C, int M, int N,
               int K) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ unsigned char smem[];
    const unsigned base = (smem_u32(smem) + 1023) & ~1023u;     // swizzled stages start 1024-aligned
    __shared__ unsigned long long full_bars[N_STAGES], empty_bars[N_STAGES];   // stage s filled / free
    const unsigned full = smem_u32(full_bars), empty = smem_u32(empty_bars);
    const int wg = threadIdx.x / 128;
    const unsigned rank = cluster_rank();
    const int pairs_m = (M + 2 * BM - 1) / (2 * BM), tiles_n = (N + BN - 1) / BN, tiles = pairs_m * tiles_n;
    const int k_tiles = (K + BK - 1) / BK;

    // Copy K tile kt of output tile (m0, n0) into the stage of ring step `step`.
    // An MN-major operand's map has K as its rows: one box per 64 of the tile's M or N.
    auto load = [&](int step, int kt, int m0, int n0) {
        const unsigned s = step % N_STAGES, dst = base + s * STAGE_BYTES, bar = full + 8 * s;
        mbarrier_arrive_expect_tx(bar, STAGE_BYTES);
        if (A_MN)
            for (int j = 0; j < BM / BOX_MN; ++j) tma_load_2d(dst + j * BOX_BYTES, &map_a, bar, m0 + j * BOX_MN, kt * BK);
        else
            tma_load_2d(dst, &map_a, bar, kt * BK, m0);
        if (!B_HALVES) {                            // an MN-major B of 64 or 192 columns: its boxes in turn
            for (int j = rank; j < BN / BOX_MN; j += 2)
                tma_load_2d_multicast(dst + A_TILE + j * BOX_BYTES, &map_b, bar, n0 + j * BOX_MN, kt * BK, 0b11);
            return;
        }
        const unsigned b = dst + A_TILE + rank * B_TILE / 2;
        const int b0 = n0 + rank * BN / 2;
        if (B_MN)
            for (int j = 0; j < BN / 2 / BOX_MN; ++j)
                tma_load_2d_multicast(b + j * BOX_BYTES, &map_b, bar, b0 + j * BOX_MN, kt * BK, 0b11);
        else
            tma_load_2d_multicast(b, &map_b, bar, kt * BK, b0, 0b11);
    };
    if (threadIdx.x == 0) {
        for (int s = 0; s < N_STAGES; ++s) {
            mbarrier_init(full + 8 * s, 1);
            mbarrier_init(empty + 8 * s, 4);       // one arrival per consumer warpgroup of either block
        }
        fence_barrier_init();
    }
    cluster_sync();                                 // both blocks' barriers exist before any copy names them
    trace_start();

    if (wg == 0) {                                  // the producer
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0)
            for (int tile = blockIdx.x / 2, step = 0; tile < tiles; tile += gridDim.x / 2) {
                int m0, n0;
                tile_origin(tile, pairs_m, tiles_n, m0, n0);
                m0 = m0 * 2 + rank * BM;
                for (int kt = 0; kt < k_tiles; ++kt, ++step) {
                    if (step >= N_STAGES) mbarrier_wait(empty + 8 * (step % N_STAGES), (step / N_STAGES - 1) % 2);
                    load(step, kt, m0, n0);
                }
            }
    } else {
        setmaxnreg_inc<232>();
        auto release = [&](unsigned bar) {             // this stage, in both blocks of the cluster
            mbarrier_arrive_cluster(cluster_address(bar, 0));
            mbarrier_arrive_cluster(cluster_address(bar, 1));
        };
        const int c = wg - 1;                           // consumer 0 or 1
        float d[BN / 2] = {};
        for (int tile = blockIdx.x / 2, step = 0, i = 0; tile < tiles; tile += gridDim.x / 2, ++i) {
            int m0, n0;
            tile_origin(tile, pairs_m, tiles_n, m0, n0);
            m0 = m0 * 2 + rank * BM;
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
            const bool store = !(SKIP_STORE || (HALF_STORE && blockIdx.x / 2 % 2 == 0)) || isnan(d[0]);
            if (store)
                store_tile(d, C, m0 + c * WG_ROWS, n0, M, N);
            trace_tile(i, STORE_ISSUED);
        }
    }
    trace_end();
    cluster_sync();                                 // no block leaves while the other may still signal it
#endif
}
