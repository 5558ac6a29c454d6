// The mma.sync ceiling: the rate at which this GPU executes one mma variant when nothing else is in
// the way. Each warp loads CHAINS different A fragments, a B fragment and -B into registers once,
// then runs `rounds` rounds with no memory access: every round adds A_c B to chain c and subtracts
// it again (an mma with B, then one with -B). The CHAINS accumulators are independent, so an mma
// never waits for the previous one's result. Every chain is back at zero after a round, so every
// partial result is exact in any accumulator type (fp16 included); one more mma with B leaves
// A_c B, and every lane writes the sum of its chains, sum_c A_c B, checked exactly by the host.
#include "ptx.cuh"

constexpr int CHAINS = 8;

// One mma variant: register counts of A, B and the accumulator, and the accumulator's elements as
// float (4 per lane in every variant).
struct F16F32 {
    static constexpr int A = 4, B = 2, C = 4;
    using Acc = float;
    __device__ static void mma(Acc (&d)[C], const unsigned (&a)[A], const unsigned (&b)[B]) { mma_m16n8k16_f32(d, a, b, d); }
    __device__ static float value(const Acc (&d)[C], int i) { return d[i]; }
};

struct F16F16 {
    static constexpr int A = 4, B = 2, C = 2;
    using Acc = unsigned;   // two fp16 per register
    __device__ static void mma(Acc (&d)[C], const unsigned (&a)[A], const unsigned (&b)[B]) { mma_m16n8k16_f16(d, a, b, d); }
    __device__ static float value(const Acc (&d)[C], int i) {
        return __half2float(__ushort_as_half(static_cast<unsigned short>(d[i / 2] >> (16 * (i % 2)))));
    }
};

struct F16K8F32 {
    static constexpr int A = 2, B = 1, C = 4;
    using Acc = float;
    __device__ static void mma(Acc (&d)[C], const unsigned (&a)[A], const unsigned (&b)[B]) { mma_m16n8k8_f32(d, a, b[0], d); }
    __device__ static float value(const Acc (&d)[C], int i) { return d[i]; }
};

struct S8S32 {
    static constexpr int A = 4, B = 2, C = 4;
    using Acc = int;
    __device__ static void mma(Acc (&d)[C], const unsigned (&a)[A], const unsigned (&b)[B]) { mma_m16n8k32_s32(d, a, b, d); }
    __device__ static float value(const Acc (&d)[C], int i) { return static_cast<float>(d[i]); }
};

// The variants with four A, two B and four fp32 accumulator registers differ only in the wrapper.
using MmaF32 = void (*)(float *, const unsigned *, const unsigned *, const float *);

template <MmaF32 MMA>
struct FourAF32 {
    static constexpr int A = 4, B = 2, C = 4;
    using Acc = float;
    __device__ static void mma(Acc (&d)[C], const unsigned (&a)[A], const unsigned (&b)[B]) { MMA(d, a, b, d); }
    __device__ static float value(const Acc (&d)[C], int i) { return d[i]; }
};

template <class V>
__device__ __forceinline__ void ceiling(const unsigned *a, const unsigned *b, const unsigned *b_neg, float *d,
                                        int rounds) {
    const int lane = threadIdx.x % 32;
    unsigned ra[CHAINS][V::A], rb[V::B], rn[V::B];
    for (int c = 0; c < CHAINS; ++c)
        for (int i = 0; i < V::A; ++i) ra[c][i] = a[(c * 32 + lane) * V::A + i];
    for (int i = 0; i < V::B; ++i) {
        rb[i] = b[lane * V::B + i];
        rn[i] = b_neg[lane * V::B + i];
    }

    typename V::Acc acc[CHAINS][V::C] = {};
    // One round per trip: unrolled, ptxas may compute an mma it sees twice with the same operands once
    // (it does for sm_90's fp8, whose products leave the Tensor Core before C is added).
#pragma unroll 1
    for (int round = 0; round < rounds; ++round) {
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) V::mma(acc[c], ra[c], rb);
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) V::mma(acc[c], ra[c], rn);
    }
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) V::mma(acc[c], ra[c], rb);

    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    for (int i = 0; i < 4; ++i) {
        float sum = 0.0f;
        for (int c = 0; c < CHAINS; ++c) sum += V::value(acc[c], i);
        d[(warp * 32 + lane) * 4 + i] = sum;
    }
}

#define CEILING_ENTRY(name, V)                                                                       \
    extern "C" __global__ void name(const unsigned *a, const unsigned *b, const unsigned *b_neg,   \
                                    float *d, int rounds) {                                        \
        ceiling<V>(a, b, b_neg, d, rounds);                                                        \
    }

CEILING_ENTRY(mma_ceiling_m16n8k16_f32, F16F32)
CEILING_ENTRY(mma_ceiling_m16n8k16_f16, F16F16)
CEILING_ENTRY(mma_ceiling_m16n8k8_f32, F16K8F32)
CEILING_ENTRY(mma_ceiling_m16n8k32_s32, S8S32)
CEILING_ENTRY(mma_ceiling_m16n8k16_bf16_f32, FourAF32<mma_m16n8k16_bf16_f32>)
CEILING_ENTRY(mma_ceiling_m16n8k8_tf32_f32, FourAF32<mma_m16n8k8_tf32_f32>)

// fp8 mma exists from sm_89 on: compiled for an older GPU these two entries do nothing (the Python
// side does not launch them there).
extern "C" __global__ void mma_ceiling_m16n8k32_e4m3_f32(const unsigned *a, const unsigned *b,
                                                         const unsigned *b_neg, float *d, int rounds) {
#if __CUDA_ARCH__ >= 890
    ceiling<FourAF32<mma_m16n8k32_e4m3_f32>>(a, b, b_neg, d, rounds);
#endif
}

extern "C" __global__ void mma_ceiling_m16n8k32_e5m2_f32(const unsigned *a, const unsigned *b,
                                                         const unsigned *b_neg, float *d, int rounds) {
#if __CUDA_ARCH__ >= 890
    ceiling<FourAF32<mma_m16n8k32_e5m2_f32>>(a, b, b_neg, d, rounds);
#endif
}
