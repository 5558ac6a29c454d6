// Kernel 5.6: Kernel 5.5 with C stored by TMA. Each consumer warpgroup writes its 64 x 256 tile into
// shared memory 64 x 32 floats at a time (one TMA box: 128-byte rows in the 128-byte swizzle), and one
// thread hands each box to TMA, which writes it to C while the threads fill the other of two buffers,
// and then the threads go on to the next tile. Rows of C that do not start on 16-byte boundaries (N not
// a multiple of 4) cannot be TMA's: that C is stored as in 5.5.
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

constexpr int BM = 128, BN = 256;                   // block tile
constexpr int A_TILE = BM * BK * 2, B_TILE = BN * BK * 2, STAGE_BYTES = A_TILE + B_TILE;
constexpr int WG_ROWS = 64;                          // rows of the tile per warpgroup (wgmma's M)
constexpr int C_BOX_COLS = 32, C_BOX_BYTES = WG_ROWS * C_BOX_COLS * 4;   // one TMA box of C: 128-byte rows
constexpr int C_BUFFERS = 2;                                              // boxes per consumer warpgroup

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ void store_tile(float (&d)[128], float *C, int row0, int col0, int M, int N) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const bool pairs = N % 2 == 0;               // float2 stores need 8-byte aligned rows
#pragma unroll
    for (int j = 0; j < 32; ++j)
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

// The warpgroup's tile, box by box through its C_BUFFERS buffers (`buffers`: 1024-byte aligned);
// warpgroup `c` of the consumers syncs on named barrier 1 + c. A buffer is refilled once the store
// C_BUFFERS boxes back has read it.
__device__ __forceinline__ void store_tile_tma(float (&d)[128], const TensorMap *map_c, unsigned buffers, int row0,
                                               int col0, int c) {
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
#pragma unroll
    for (int box = 0; box < 256 / C_BOX_COLS; ++box) {
        const unsigned buffer = buffers + box % C_BUFFERS * C_BOX_BYTES;
        if (t == 0) bulk_wait_group_read<C_BUFFERS - 1>();
        named_barrier_sync(1 + c, 128);
#pragma unroll
        for (int j = 0; j < C_BOX_COLS / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {      // row r, 16-byte chunk q of its 128: stored at chunk q ^ (r % 8)
                const int r = 16 * warp + lane / 4 + 8 * h, q = 2 * j + lane % 4 / 2, i = 4 * (4 * box + j) + 2 * h;
                st_shared_f32x2(buffer + r * 128 + (q ^ r % 8) * 16 + lane % 2 * 8, d[i], d[i + 1]);
            }
        fence_proxy_async_shared();             // the writes, visible to TMA
        named_barrier_sync(1 + c, 128);
        if (t == 0) {
            tma_store_2d(map_c, buffer, col0 + box * C_BOX_COLS, row0);
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
tma_store(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b,
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

    // Copy K tile kt of output tile (m0, n0) into the stage of ring step `step`.
    auto load = [&](int step, int kt, int m0, int n0) {
        const unsigned s = step % N_STAGES, dst = base + s * STAGE_BYTES;
        mbarrier_arrive_expect_tx(full + 8 * s, STAGE_BYTES);
        tma_load_2d(dst, &map_a, full + 8 * s, kt * BK, m0);
        tma_load_2d_multicast(dst + A_TILE + rank * B_TILE / 2, &map_b, full + 8 * s, kt * BK, n0 + rank * BN / 2, 0b11);
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
        float d[128] = {};
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
                    wgmma_m64n256k16_f32_f16_ss(d, descriptor_sw128(a + 32 * k), descriptor_sw128(b + 32 * k),
                                                kt > 0 || k > 0);
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
            if (store && N % 4 == 0)
                store_tile_tma(d, &map_c, base + N_STAGES * STAGE_BYTES + c * C_BUFFERS * C_BOX_BYTES, m0 + c * WG_ROWS, n0, c);
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
