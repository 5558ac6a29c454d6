// Kernel 5.1: TMA copies and wgmma. Two warpgroups (256 threads) share a 128 x 256 block tile, 64 rows
// each; per K tile of 64 each issues four wgmma m64n256k16 that read A and B straight from the shared
// memory that TMA filled (128-byte swizzle, N_STAGES-deep ring). Thread 0 also issues the copies: it
// refills a stage once both warpgroups have released it (mbarrier `empty`). A row-major (M x K), B
// column-major (stored N x K), C row-major fp32; M, N multiples of the tile, K of 64.
#include "ptx.cuh"
#include "wgmma.cuh"

#ifndef N_STAGES
#define N_STAGES 4
#endif
#ifndef BK
#define BK 64                                        // fp16 = 128 bytes: one swizzle row
#endif
static_assert(BK == 64, "a tile row is one row of the 128-byte swizzle");

constexpr int BM = 128, BN = 256;                   // block tile
constexpr int A_TILE = BM * BK * 2, B_TILE = BN * BK * 2, STAGE_BYTES = A_TILE + B_TILE;
constexpr int WG_ROWS = 64;                          // rows of the tile per warpgroup (wgmma's M)

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ void store_tile(float (&d)[128], float *C, int row0, int col0, int N) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const int row = row0 + 16 * warp + lane / 4;
#pragma unroll
    for (int j = 0; j < 32; ++j) {
        const int col = col0 + 8 * j + 2 * (lane % 4);
        *reinterpret_cast<float2 *>(&C[row * N + col]) = make_float2(d[4 * j], d[4 * j + 1]);
        *reinterpret_cast<float2 *>(&C[(row + 8) * N + col]) = make_float2(d[4 * j + 2], d[4 * j + 3]);
    }
}
#endif

extern "C" __global__ void __launch_bounds__(256, 1)
wgmma_tiles(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b, float *C,
            int M, int N, int K) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ unsigned char smem[];
    const unsigned base = (smem_u32(smem) + 1023) & ~1023u;     // swizzled stages start 1024-aligned
    __shared__ unsigned long long full_bars[N_STAGES], empty_bars[N_STAGES];   // stage s filled / free
    const unsigned full = smem_u32(full_bars), empty = smem_u32(empty_bars);
    const int wg = threadIdx.x / 128;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int k_tiles = K / BK;

    auto load = [&](int kt) {
        const unsigned s = kt % N_STAGES, dst = base + s * STAGE_BYTES;
        mbarrier_arrive_expect_tx(full + 8 * s, STAGE_BYTES);
        tma_load_2d(dst, &map_a, full + 8 * s, kt * BK, m0);
        tma_load_2d(dst + A_TILE, &map_b, full + 8 * s, kt * BK, n0);
    };
    if (threadIdx.x == 0) {
        for (int s = 0; s < N_STAGES; ++s) {
            mbarrier_init(full + 8 * s, 1);
            mbarrier_init(empty + 8 * s, 2);       // one arrival per warpgroup
        }
        fence_barrier_init();
        for (int kt = 0; kt < N_STAGES && kt < k_tiles; ++kt) load(kt);
    }
    __syncthreads();

    float d[128] = {};
    for (int kt = 0; kt < k_tiles; ++kt) {
        const unsigned s = kt % N_STAGES, parity = (kt / N_STAGES) % 2;
        mbarrier_wait(full + 8 * s, parity);
        const unsigned a = base + s * STAGE_BYTES + wg * WG_ROWS * 128, b = base + s * STAGE_BYTES + A_TILE;
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < BK / 16; ++k)      // k16 slice k starts 32 bytes into each 128-byte row
            wgmma_m64n256k16_f32_f16_ss(d, descriptor_sw128(a + 32 * k), descriptor_sw128(b + 32 * k), 1);
        wgmma_commit_group();
        wgmma_wait_group<0>();
        if (threadIdx.x % 128 == 0) mbarrier_arrive_once(empty + 8 * s);
        if (threadIdx.x == 0 && kt + N_STAGES < k_tiles) {
            mbarrier_wait(empty + 8 * s, parity);
            load(kt + N_STAGES);
        }
    }
    wgmma_fence_operands(d);
    store_tile(d, C, m0 + wg * WG_ROWS, n0, N);
#endif
}
