// One wgmma per warpgroup on shared-memory operands chosen byte for byte by the host, to find out
// where wgmma reads A and B through a descriptor and which (thread, register) gets which entry of D.
// Experiment e = blockIdx.x, 128 threads: the host's images of A (64 x 16 f16) and B (16 x N f16), each
// K-major or MN-major as the entry says (_a_mn: A M-major, _b_mn: B N-major, read with wgmma's transpose
// immediate), are copied to shared memory unchanged, both descriptors get the start address of their
// tile added, one wgmma runs, and thread t writes its register i to d[(e * 128 + t) * N/2 + i].
// Built for sm_90a only (tcgemm.hopper.gpu.wgmma); for other targets the entries are empty.
#include "wgmma.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
constexpr int A_IMAGE_BYTES = 64 * 128;   // 64 rows, one 128-byte atom row each: the widest layout
// B: N rows (at least 16) of one 128-byte atom row each, the widest K-major layout; an N-major B is smaller.
template <int N> constexpr int B_IMAGE_BYTES = (N < 16 ? 16 : N) * 128;

__device__ __forceinline__ void copy_image(uint4 *smem, const uint4 *image, int bytes) {
    for (int i = threadIdx.x; i < bytes / 16; i += blockDim.x) smem[i] = image[blockIdx.x * (bytes / 16) + i];
}

template <int N, typename Mma>
__device__ __forceinline__ void probe(const uint4 *a_image, const uint4 *b_image, unsigned long long desc_a,
                                      unsigned long long desc_b, float *d, Mma mma) {
    // Swizzled tiles start on a 1024-byte boundary (a 128B atom): aligned here by hand, whatever
    // alignment the compiler gives the array.
    __shared__ __align__(1024) unsigned char smem[A_IMAGE_BYTES + B_IMAGE_BYTES<N> + 1024];
    const unsigned skip = (1024 - static_cast<unsigned>(__cvta_generic_to_shared(smem)) % 1024) % 1024;
    uint4 *a_smem = reinterpret_cast<uint4 *>(smem + skip);
    uint4 *b_smem = a_smem + A_IMAGE_BYTES / 16;
    copy_image(a_smem, a_image, A_IMAGE_BYTES);
    copy_image(b_smem, b_image, B_IMAGE_BYTES<N>);
    fence_proxy_async_shared();
    __syncthreads();
    float acc[N / 2] = {};
    wgmma_fence();
    mma(acc, desc_a + descriptor_start(a_smem), desc_b + descriptor_start(b_smem), 0);
    wgmma_commit_group();
    wgmma_wait_group<0>();
    wgmma_fence_operands(acc);
    for (int i = 0; i < N / 2; ++i) d[(blockIdx.x * 128 + threadIdx.x) * (N / 2) + i] = acc[i];
}
#endif

// probe_wgmma_m64n<N>k16[_a_mn|_b_mn]: one entry per wgmma shape and operand majorness probed.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define PROBE_ENTRY(NAME, N, MMA)                                                                          \
    extern "C" __global__ void __launch_bounds__(128) NAME(const uint4 *a_image, const uint4 *b_image,    \
                                                           unsigned long long desc_a,                      \
                                                           unsigned long long desc_b, float *d) {          \
        probe<N>(a_image, b_image, desc_a, desc_b, d, MMA);                                                \
    }
#else
#define PROBE_ENTRY(NAME, N, MMA)                                                                          \
    extern "C" __global__ void NAME(const uint4 *, const uint4 *, unsigned long long, unsigned long long, \
                                    float *) {}
#endif

PROBE_ENTRY(probe_wgmma_m64n8k16, 8, wgmma_m64n8k16_f32_f16_ss)
PROBE_ENTRY(probe_wgmma_m64n16k16, 16, (wgmma_m64n16k16_f32_f16_ss<0, 0>))
PROBE_ENTRY(probe_wgmma_m64n16k16_a_mn, 16, (wgmma_m64n16k16_f32_f16_ss<1, 0>))
PROBE_ENTRY(probe_wgmma_m64n16k16_b_mn, 16, (wgmma_m64n16k16_f32_f16_ss<0, 1>))
PROBE_ENTRY(probe_wgmma_m64n128k16_b_mn, 128, (wgmma_m64n128k16_f32_f16_ss<0, 1>))
