// Kernel 5.4: Kernel 5.3 made persistent, for any M and N. The grid has one block per SM, and each
// block loops over output tiles, taken GROUP_M tile rows at a time (consecutive tiles share B's
// columns, and a group's rows of A stay in L2). The ring of stages runs on across tiles, so the
// producer already copies the next tile's first K tiles while the consumers store C. TMA fills rows
// and columns past the matrix with zeros; the stores are guarded. K must be a multiple of 8 (TMA
// wants 16-byte row strides).
#include "ptx.cuh"
#include "wgmma.cuh"

#ifndef N_STAGES
#define N_STAGES 4
#endif
#ifndef BK
#define BK 64                                        // fp16 = 128 bytes: one swizzle row
#endif
static_assert(BK == 64, "a tile row is one row of the 128-byte swizzle");
#ifndef GROUP_M
#define GROUP_M 8
#endif

constexpr int BM = 128, BN = 256;                   // block tile
constexpr int A_TILE = BM * BK * 2, B_TILE = BN * BK * 2, STAGE_BYTES = A_TILE + B_TILE;
constexpr int WG_ROWS = 64;                          // rows of the tile per warpgroup (wgmma's M)

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

// Output tile `tile` in grouped order: down GROUP_M tile rows, then the next column of tiles.
__device__ __forceinline__ void tile_origin(int tile, int tiles_m, int tiles_n, int &m0, int &n0) {
    const int group = tile / (GROUP_M * tiles_n), first = group * GROUP_M;
    const int rows = min(GROUP_M, tiles_m - first);
    m0 = (first + tile % (GROUP_M * tiles_n) % rows) * BM;
    n0 = tile % (GROUP_M * tiles_n) / rows * BN;
}
#endif

extern "C" __global__ void __launch_bounds__(384, 1)
persistent(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, float *C,
            int M, int N, int K) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ unsigned char smem[];
    const unsigned base = (smem_u32(smem) + 1023) & ~1023u;     // swizzled stages start 1024-aligned
    __shared__ unsigned long long full_bars[N_STAGES], empty_bars[N_STAGES];   // stage s filled / free
    const unsigned full = smem_u32(full_bars), empty = smem_u32(empty_bars);
    const int wg = threadIdx.x / 128;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, tiles = tiles_m * tiles_n;
    const int k_tiles = (K + BK - 1) / BK;

    // Copy K tile kt of output tile (m0, n0) into the stage of ring step `step`.
    auto load = [&](int step, int kt, int m0, int n0) {
        const unsigned s = step % N_STAGES, dst = base + s * STAGE_BYTES;
        mbarrier_arrive_expect_tx(full + 8 * s, STAGE_BYTES);
        tma_load_2d(dst, &map_a, full + 8 * s, kt * BK, m0);
        tma_load_2d(dst + A_TILE, &map_b, full + 8 * s, kt * BK, n0);
    };
    if (threadIdx.x == 0) {
        for (int s = 0; s < N_STAGES; ++s) {
            mbarrier_init(full + 8 * s, 1);
            mbarrier_init(empty + 8 * s, 2);       // one arrival per consumer warpgroup
        }
        fence_barrier_init();
    }
    __syncthreads();

    if (wg == 0) {                                  // the producer
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0)
            for (int tile = blockIdx.x, step = 0; tile < tiles; tile += gridDim.x) {
                int m0, n0;
                tile_origin(tile, tiles_m, tiles_n, m0, n0);
                for (int kt = 0; kt < k_tiles; ++kt, ++step) {
                    if (step >= N_STAGES) mbarrier_wait(empty + 8 * (step % N_STAGES), (step / N_STAGES - 1) % 2);
                    load(step, kt, m0, n0);
                }
            }
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1;                           // consumer 0 or 1
        float d[128] = {};
        for (int tile = blockIdx.x, step = 0; tile < tiles; tile += gridDim.x) {
            int m0, n0;
            tile_origin(tile, tiles_m, tiles_n, m0, n0);
            for (int kt = 0; kt < k_tiles; ++kt, ++step) {
                const unsigned s = step % N_STAGES, parity = (step / N_STAGES) % 2;
                mbarrier_wait(full + 8 * s, parity);
                const unsigned a = base + s * STAGE_BYTES + c * WG_ROWS * 128, b = base + s * STAGE_BYTES + A_TILE;
                wgmma_fence();
#pragma unroll
                for (int k = 0; k < BK / 16; ++k)  // the tile's first wgmma overwrites D instead of adding
                    wgmma_m64n256k16_f32_f16_ss(d, descriptor_sw128(a + 32 * k), descriptor_sw128(b + 32 * k),
                                                kt > 0 || k > 0);
                wgmma_commit_group();
                wgmma_wait_group<1>();
                if (kt > 0 && threadIdx.x % 128 == 0) mbarrier_arrive_once(empty + 8 * ((step - 1) % N_STAGES));
            }
            wgmma_wait_group<0>();                  // the tile's last stage is free, and D complete
            if (threadIdx.x % 128 == 0) mbarrier_arrive_once(empty + 8 * ((step - 1) % N_STAGES));
            wgmma_fence_operands(d);
            store_tile(d, C, m0 + c * WG_ROWS, n0, M, N);
        }
    }
#endif
}
