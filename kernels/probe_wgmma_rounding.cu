// How wgmma rounds: the numerics chapter's rounding cases (tcgemm.numerics.rounding) run through Hopper's
// warpgroup MMA instead of mma.sync (host side: tcgemm.numerics.gpu.wgmma_rounding). Case e = blockIdx.x, 128
// threads: the host's images of A (64 x K, every row the case's a) and B (K x 8, every column its b), both
// K-major without swizzle, 32 bytes of K per row, are copied to shared memory unchanged; thread t loads
// its 4 accumulator registers with the case's C from c[(e * 128 + t) * 4 + i], one wgmma with scale-d 1
// computes D = A B + C, and thread t writes register i to d[(e * 128 + t) * 4 + i].
//   wgmma_rounding_f16_f32:  m64n8k16, f16 inputs;  wgmma_rounding_e4m3_f32: m64n8k32, e4m3 inputs.
// Built for sm_90a only (tcgemm.engine.gpu.compile.get_arch_specific_function); for other targets the entries are
// empty.
#include "wgmma.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
constexpr int A_IMAGE_BYTES = 64 * 32;
constexpr int B_IMAGE_BYTES = 8 * 32;

__device__ __forceinline__ void copy_image(uint4 *smem, const uint4 *image, int bytes) {
    for (int i = threadIdx.x; i < bytes / 16; i += blockDim.x) smem[i] = image[blockIdx.x * (bytes / 16) + i];
}

template <typename Mma>
__device__ __forceinline__ void one_case(const uint4 *a_image, const uint4 *b_image, const float *c,
                                         unsigned long long desc_a, unsigned long long desc_b, float *d, Mma mma) {
    __shared__ __align__(128) uint4 a_smem[A_IMAGE_BYTES / 16];
    __shared__ __align__(128) uint4 b_smem[B_IMAGE_BYTES / 16];
    copy_image(a_smem, a_image, A_IMAGE_BYTES);
    copy_image(b_smem, b_image, B_IMAGE_BYTES);
    fence_proxy_async_shared();
    __syncthreads();
    const int first = (blockIdx.x * 128 + threadIdx.x) * 4;
    float acc[4];
    for (int i = 0; i < 4; ++i) acc[i] = c[first + i];
    wgmma_fence();
    mma(acc, desc_a + descriptor_start(a_smem), desc_b + descriptor_start(b_smem), 1);
    wgmma_commit_group();
    wgmma_wait_group<0>();
    wgmma_fence_operands(acc);
    for (int i = 0; i < 4; ++i) d[first + i] = acc[i];
}
#define ROUNDING_ENTRY(NAME, MMA)                                                                          \
    extern "C" __global__ void __launch_bounds__(128) NAME(const uint4 *a_image, const uint4 *b_image,    \
                                                           const float *c, unsigned long long desc_a,      \
                                                           unsigned long long desc_b, float *d) {          \
        one_case(a_image, b_image, c, desc_a, desc_b, d, MMA);                                             \
    }
#else
#define ROUNDING_ENTRY(NAME, MMA)                                                                          \
    extern "C" __global__ void NAME(const uint4 *, const uint4 *, const float *, unsigned long long,      \
                                    unsigned long long, float *) {}
#endif

ROUNDING_ENTRY(wgmma_rounding_f16_f32, wgmma_m64n8k16_f32_f16_ss)
ROUNDING_ENTRY(wgmma_rounding_e4m3_f32, wgmma_m64n8k32_f32_e4m3_ss)
