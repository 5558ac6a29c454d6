// How mma.sync rounds. Every operand arrives as the 32-bit register words of its warp fragments,
// packed by the host (tcgemm.numerics.gpu.rounding, from the layouts of tcgemm.fragment_layouts): lane l's
// register r of a fragment of N registers is word l*N + r of that fragment's 32*N words.
//   rounding_<type>:   case e = blockIdx.x runs ONE mma.sync, D = A B + C, on its own A, B and C.
//   accumulate_<type>: block (x, y) is the 16 x 8 tile (y, x) of C = A B, one warp summing all
//                      k-steps in one accumulator as the GEMM kernels do: A holds the fragments of
//                      tile row y, step after step; B those of tile column x.
#include "ptx.cuh"

template <int N, typename T>
__device__ __forceinline__ void load(T (&r)[N], const unsigned *words) {
    for (int i = 0; i < N; ++i) r[i] = reinterpret_cast<const T *>(words)[threadIdx.x * N + i];
}

template <int N, typename T>
__device__ __forceinline__ void store(unsigned *words, const T (&r)[N]) {
    for (int i = 0; i < N; ++i) reinterpret_cast<T *>(words)[threadIdx.x * N + i] = r[i];
}

// NA, NB, NC: registers of A, B and C per lane; Acc: the accumulator register's type.
#define MMA_PROBES(type, NA, NB, NC, Acc, wrapper)                                                  \
    extern "C" __global__ void rounding_##type(const unsigned *a, const unsigned *b,                \
                                               const unsigned *c, unsigned *d) {                    \
        const int e = blockIdx.x;                                                                   \
        unsigned ra[NA], rb[NB];                                                                    \
        Acc rc[NC], rd[NC];                                                                         \
        load(ra, a + e * 32 * NA);                                                                  \
        load(rb, b + e * 32 * NB);                                                                  \
        load(rc, c + e * 32 * NC);                                                                  \
        wrapper(rd, ra, rb, rc);                                                                    \
        store(d + e * 32 * NC, rd);                                                                 \
    }                                                                                               \
    extern "C" __global__ void accumulate_##type(const unsigned *a, const unsigned *b, unsigned *d, \
                                                 int k_steps) {                                     \
        const unsigned *a_row = a + blockIdx.y * k_steps * 32 * NA;                                 \
        const unsigned *b_col = b + blockIdx.x * k_steps * 32 * NB;                                 \
        unsigned ra[NA], rb[NB];                                                                    \
        Acc acc[NC] = {};                                                                           \
        for (int s = 0; s < k_steps; ++s) {                                                         \
            load(ra, a_row + s * 32 * NA);                                                          \
            load(rb, b_col + s * 32 * NB);                                                          \
            wrapper(acc, ra, rb, acc);                                                              \
        }                                                                                           \
        store(d + (blockIdx.y * gridDim.x + blockIdx.x) * 32 * NC, acc);                            \
    }

MMA_PROBES(f16_f32, 4, 2, 4, float, mma_m16n8k16_f32)
MMA_PROBES(f16_f16, 4, 2, 2, unsigned, mma_m16n8k16_f16)
MMA_PROBES(bf16_f32, 4, 2, 4, float, mma_m16n8k16_bf16_f32)
MMA_PROBES(tf32_f32, 4, 2, 4, float, mma_m16n8k8_tf32_f32)
MMA_PROBES(s8_s32, 4, 2, 4, int, mma_m16n8k32_s32)

// fp8 mma.sync exists from sm_89 on; below that these kernels do nothing and the host skips them.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
MMA_PROBES(e4m3_f32, 4, 2, 4, float, mma_m16n8k32_e4m3_f32)
MMA_PROBES(e5m2_f32, 4, 2, 4, float, mma_m16n8k32_e5m2_f32)
#else
#define NO_FP8(type)                                                                                \
    extern "C" __global__ void rounding_##type(const unsigned *, const unsigned *, const unsigned *, \
                                               unsigned *) {}                                       \
    extern "C" __global__ void accumulate_##type(const unsigned *, const unsigned *, unsigned *, int) {}
NO_FP8(e4m3_f32)
NO_FP8(e5m2_f32)
#endif
