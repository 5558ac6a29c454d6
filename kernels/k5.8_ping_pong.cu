// Kernel 5.8: Kernel 5.7 with ping-pong consumers. Each consumer warpgroup computes a 128 x 128 tile of
// its own (two wgmma m64n128k16 per k16 step, one per 64-row half: the same 128 accumulator registers),
// and the two take turns along the block's tiles: consumer c the tiles j = c, c + 2, ... The producer
// fills the ring tile after tile, so while one consumer stores its C the other runs its main loop on the
// next tile, and the tensor cores need not wait for the epilogue. A stage holds 128 x BK of A and of B
// (32 KB instead of 48), so the ring has more of them.
// The main loops take turns too: a consumer starts tile j only once the other has passed every full
// barrier of tile j - 1 (named barrier 3 + c). Without that, a consumer waiting on a stage two fills
// ahead of the last one it saw would take the phase parity of the fill before as its own.
#include "ptx.cuh"
#include "wgmma.cuh"
#include "trace.cuh"

#ifndef N_STAGES
#define N_STAGES 6                                   // 6 x 32 KB + 32 KB of C: fits 227 KB
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
#ifndef A_COL_MAJOR
#define A_COL_MAJOR 0
#endif
#ifndef B_COL_MAJOR
#define B_COL_MAJOR 1
#endif

constexpr int BM = 128, BN = 128;                   // a consumer's tile
constexpr int A_TILE = BM * BK * 2, B_TILE = BN * BK * 2, STAGE_BYTES = A_TILE + B_TILE;
constexpr int WG_ROWS = 64;                          // rows of one wgmma (its M): half the tile
constexpr int BOX_MN = 64, BOX_BYTES = BOX_MN * BK * 2;    // an MN-major box: 64 M or N by BK rows of K
constexpr bool A_MN = A_COL_MAJOR, B_MN = !B_COL_MAJOR;   // MN-major operands, read transposed
// Per k16 step the operand's start moves 16 elements along its 128-byte rows (K-major) or 16 rows down.
constexpr unsigned A_STEP = A_MN ? 16 * 128 : 32, B_STEP = B_MN ? 16 * 128 : 32;
constexpr unsigned A_LBO = A_MN ? BOX_BYTES : 16, B_LBO = B_MN ? BOX_BYTES : 16;
constexpr int C_BOX_COLS = 32, C_BOX_BYTES = WG_ROWS * C_BOX_COLS * 4;   // one TMA box of C: 128-byte rows
constexpr int C_BUFFERS = 2;                                              // boxes per consumer warpgroup
constexpr int C_BOXES_N = BN / C_BOX_COLS;                                // boxes along a tile row

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ void store_tile(float (&d)[64], float *C, int row0, int col0, int M, int N) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const bool pairs = N % 2 == 0;               // float2 stores need 8-byte aligned rows
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = row0 + 16 * warp + lane / 4 + 8 * h, col = col0 + 8 * j + 2 * (lane % 4);
            if (row >= M) continue;
            float *p = &C[static_cast<long long>(row) * N + col];
            if (pairs && col < N) {
                *reinterpret_cast<float2 *>(p) = make_float2(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
            } else {
                if (col < N) p[0] = d[4 * j + 2 * h];
                if (col + 1 < N) p[1] = d[4 * j + 2 * h + 1];
            }
        }
}

// The warpgroup's tile, half by half, box by box through its C_BUFFERS buffers (`buffers`: 1024-byte
// aligned); warpgroup `c` of the consumers syncs on named barrier 1 + c. A buffer is refilled once the
// store C_BUFFERS boxes back has read it.
__device__ __forceinline__ void store_tile_tma(float (&d)[2][64], const TensorMap *map_c, unsigned buffers, int row0,
                                               int col0, int c) {
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
#pragma unroll
    for (int box = 0; box < 2 * C_BOXES_N; ++box) {
        const int half = box / C_BOXES_N, col = box % C_BOXES_N;
        const unsigned buffer = buffers + box % C_BUFFERS * C_BOX_BYTES;
        if (t == 0) bulk_wait_group_read<C_BUFFERS - 1>();
        named_barrier_sync(1 + c, 128);
#pragma unroll
        for (int j = 0; j < C_BOX_COLS / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {      // row r, 16-byte chunk q of its 128: stored at chunk q ^ (r % 8)
                const int r = 16 * warp + lane / 4 + 8 * h, q = 2 * j + lane % 4 / 2, i = 4 * (4 * col + j) + 2 * h;
                st_shared_f32x2(buffer + r * 128 + (q ^ r % 8) * 16 + lane % 2 * 8, d[half][i], d[half][i + 1]);
            }
        fence_proxy_async_shared();             // the writes, visible to TMA
        named_barrier_sync(1 + c, 128);
        if (t == 0) {
            tma_store_2d(map_c, buffer, col0 + col * C_BOX_COLS, row0 + half * WG_ROWS);
            bulk_commit_group();
        }
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
ping_pong(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b,
          const __grid_constant__ TensorMap map_c, float *C, int M, int N, int K) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ unsigned char smem[];
    const unsigned base = (smem_u32(smem) + 1023) & ~1023u;     // swizzled stages start 1024-aligned
    __shared__ unsigned long long full_bars[N_STAGES], empty_bars[N_STAGES];   // stage s filled / free
    const unsigned full = smem_u32(full_bars), empty = smem_u32(empty_bars);
    const int wg = threadIdx.x / 128;
    const unsigned rank = cluster_rank();
    const int pairs_m = (M + 2 * BM - 1) / (2 * BM), tiles_n = (N + BN - 1) / BN, tiles = pairs_m * tiles_n;
    const int k_tiles = (K + BK - 1) / BK;

    // Copy K tile kt of output tile (m0, n0) into the stage of ring step `step`: the block's tile j, K tile kt
    // is step j * k_tiles + kt.
    // An MN-major operand's map has K as its rows: one box per 64 of the tile's M or N.
    auto load = [&](int step, int kt, int m0, int n0) {
        const unsigned s = step % N_STAGES, dst = base + s * STAGE_BYTES, bar = full + 8 * s;
        mbarrier_arrive_expect_tx(bar, STAGE_BYTES);
        if (A_MN)
            for (int j = 0; j < BM / BOX_MN; ++j) tma_load_2d(dst + j * BOX_BYTES, &map_a, bar, m0 + j * BOX_MN, kt * BK);
        else
            tma_load_2d(dst, &map_a, bar, kt * BK, m0);
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
            mbarrier_init(empty + 8 * s, 2);       // one arrival per block: its consumer of the stage's tile
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
        float d[2][64] = {};                            // the tile's two 64-row halves
        for (int tile = blockIdx.x / 2 + c * gridDim.x / 2, j = c; tile < tiles; tile += gridDim.x, j += 2) {
            int m0, n0;
            tile_origin(tile, pairs_m, tiles_n, m0, n0);
            m0 = m0 * 2 + rank * BM;
            int step = j * k_tiles;                 // the ring step of the tile's first K tile
            if (j > 0) named_barrier_sync(3 + c, 256);  // the other consumer has passed tile j - 1's stages
            for (int kt = 0; kt < k_tiles; ++kt, ++step) {
                const unsigned s = step % N_STAGES, parity = (step / N_STAGES) % 2;
                mbarrier_wait(full + 8 * s, parity);
                if (kt == 0) trace_tile(j / 2, STAGE_ARRIVED);
                const unsigned a = base + s * STAGE_BYTES, b = base + s * STAGE_BYTES + A_TILE;
                wgmma_fence();
#pragma unroll
                for (int k = 0; k < BK / 16; ++k)  // the tile's first wgmma overwrites D instead of adding
#pragma unroll
                    for (int h = 0; h < 2; ++h)     // an MN-major A's half is its box h: also 64 x 128 bytes on
                        wgmma_m64n128k16_f32_f16_ss<A_MN, B_MN>(d[h], descriptor_sw128(a + h * WG_ROWS * 128 + A_STEP * k, A_LBO),
                                                                descriptor_sw128(b + B_STEP * k, B_LBO), kt > 0 || k > 0);
                wgmma_commit_group();
                wgmma_wait_group<1>();
                if (kt > 0 && threadIdx.x % 128 == 0) release(empty + 8 * ((step - 1) % N_STAGES));
            }
            if (tile + gridDim.x / 2 < tiles) named_barrier_arrive(4 - c, 256);   // tile j + 1's turn
            wgmma_wait_group<0>();                  // the tile's last stage is free, and D complete
            if (threadIdx.x % 128 == 0) release(empty + 8 * ((step - 1) % N_STAGES));
            wgmma_fence_operands(d[0]);
            wgmma_fence_operands(d[1]);
            trace_tile(j / 2, MAIN_LOOP_DONE);
            // The measurements SKIP_STORE and HALF_STORE keep the main loop's work: d is never NaN here.
            const bool store = !(SKIP_STORE || (HALF_STORE && blockIdx.x / 2 % 2 == 0)) || isnan(d[0][0]);
            if (store && N % 4 == 0) {
                store_tile_tma(d, &map_c, base + N_STAGES * STAGE_BYTES + c * C_BUFFERS * C_BOX_BYTES, m0, n0, c);
            } else if (store) {
                store_tile(d[0], C, m0, n0, M, N);
                store_tile(d[1], C, m0 + WG_ROWS, n0, M, N);
            }
            trace_tile(j / 2, STORE_ISSUED);
        }
    }
    if (wg > 0 && threadIdx.x % 128 == 0) bulk_wait_group_read<0>();   // the buffers outlive the stores
    trace_end();
    cluster_sync();                                 // no block leaves while the other may still signal it
#endif
}
