// The FFMA ceiling: the rate at which this GPU's CUDA cores execute fp32 fused multiply-adds when
// nothing else is in the way. Each thread runs CHAINS independent chains x = x * s + t in registers,
// UNROLL rounds per loop trip so the loop's own instructions stay a few percent. s and t are kernel
// arguments (1 and a power of two from the host), so the compiler cannot fold the FFMA away and
// every result is exact: chain c ends at c + iters * t.

constexpr int CHAINS = 8;
constexpr int UNROLL = 16;

extern "C" __global__ void ffma_ceiling(float *out, float s, float t, int trips) {
    float x[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) x[c] = (float)c;
    for (int i = 0; i < trips; ++i) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int c = 0; c < CHAINS; ++c) x[c] = fmaf(x[c], s, t);
    }
    const int thread = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) out[thread * CHAINS + c] = x[c];
}
