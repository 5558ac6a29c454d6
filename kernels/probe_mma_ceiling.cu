// The mma.sync ceiling: the rate at which this GPU executes m16n8k16 (fp16 in, fp32 accumulate)
// when nothing else is in the way. Each warp loads CHAINS different A fragments and one B fragment
// into registers once, then issues iters x CHAINS mma with no memory access in the loop. The
// CHAINS accumulators are independent, so an mma never waits for the previous one's result.
// Every lane writes the sum of its chains: iters * (sum of the A tiles) @ B, checked by the host.
#include "ptx.cuh"

constexpr int CHAINS = 8;

extern "C" __global__ void mma_ceiling(const unsigned *a, const unsigned *b, float *d, int iters) {
    const int lane = threadIdx.x % 32;
    unsigned ra[CHAINS][4], rb[2];
    for (int c = 0; c < CHAINS; ++c)
        for (int i = 0; i < 4; ++i) ra[c][i] = a[(c * 32 + lane) * 4 + i];
    for (int i = 0; i < 2; ++i) rb[i] = b[lane * 2 + i];

    float acc[CHAINS][4] = {};
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) mma_m16n8k16_f32(acc[c], ra[c], rb, acc[c]);
    }

    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    for (int i = 0; i < 4; ++i) {
        float sum = 0.0f;
        for (int c = 0; c < CHAINS; ++c) sum += acc[c][i];
        d[(warp * 32 + lane) * 4 + i] = sum;
    }
}
