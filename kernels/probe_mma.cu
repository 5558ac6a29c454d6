// One mma per warp on registers chosen by the host, to find out which (lane, register) holds which
// matrix element. Experiment e = blockIdx.x; lane l's register r of A is a[(e*32 + l)*NA + r].
#include "ptx.cuh"

template <int N>
__device__ __forceinline__ void load_regs(unsigned (&r)[N], const unsigned *src) {
    const int slot = blockIdx.x * 32 + threadIdx.x;
    for (int i = 0; i < N; ++i) r[i] = src[slot * N + i];
}

template <int N>
__device__ __forceinline__ void store_regs(unsigned *dst, const unsigned (&r)[N]) {
    const int slot = blockIdx.x * 32 + threadIdx.x;
    for (int i = 0; i < N; ++i) dst[slot * N + i] = r[i];
}

// The mma with four A, two B and four fp32 C/D registers: m16n8k16 (f16, bf16), m16n8k8 (tf32) and
// m16n8k32 (e4m3, e5m2).
using MmaF32 = void (*)(float *, const unsigned *, const unsigned *, const float *);

template <MmaF32 MMA>
__device__ __forceinline__ void probe_f32(const unsigned *a, const unsigned *b, const unsigned *c, unsigned *d) {
    unsigned ra[4], rb[2], rc[4], rd[4];
    load_regs(ra, a);
    load_regs(rb, b);
    load_regs(rc, c);
    float fc[4], fd[4];
    for (int i = 0; i < 4; ++i) fc[i] = __uint_as_float(rc[i]);
    MMA(fd, ra, rb, fc);
    for (int i = 0; i < 4; ++i) rd[i] = __float_as_uint(fd[i]);
    store_regs(d, rd);
}

extern "C" __global__ void probe_mma_m16n8k16_f32(const unsigned *a, const unsigned *b,
                                                  const unsigned *c, unsigned *d) {
    probe_f32<mma_m16n8k16_f32>(a, b, c, d);
}

extern "C" __global__ void probe_mma_m16n8k16_f16(const unsigned *a, const unsigned *b,
                                                  const unsigned *c, unsigned *d) {
    unsigned ra[4], rb[2], rc[2], rd[2];
    load_regs(ra, a);
    load_regs(rb, b);
    load_regs(rc, c);
    mma_m16n8k16_f16(rd, ra, rb, rc);
    store_regs(d, rd);
}

extern "C" __global__ void probe_mma_m16n8k8_f32(const unsigned *a, const unsigned *b,
                                                 const unsigned *c, unsigned *d) {
    unsigned ra[2], rb[1], rc[4], rd[4];
    load_regs(ra, a);
    load_regs(rb, b);
    load_regs(rc, c);
    float fc[4], fd[4];
    for (int i = 0; i < 4; ++i) fc[i] = __uint_as_float(rc[i]);
    mma_m16n8k8_f32(fd, ra, rb[0], fc);
    for (int i = 0; i < 4; ++i) rd[i] = __float_as_uint(fd[i]);
    store_regs(d, rd);
}

extern "C" __global__ void probe_mma_m16n8k32_s32(const unsigned *a, const unsigned *b,
                                                  const unsigned *c, unsigned *d) {
    unsigned ra[4], rb[2], rc[4], rd[4];
    load_regs(ra, a);
    load_regs(rb, b);
    load_regs(rc, c);
    int ic[4], id[4];
    for (int i = 0; i < 4; ++i) ic[i] = static_cast<int>(rc[i]);
    mma_m16n8k32_s32(id, ra, rb, ic);
    for (int i = 0; i < 4; ++i) rd[i] = static_cast<unsigned>(id[i]);
    store_regs(d, rd);
}

extern "C" __global__ void probe_mma_m16n8k16_bf16_f32(const unsigned *a, const unsigned *b,
                                                       const unsigned *c, unsigned *d) {
    probe_f32<mma_m16n8k16_bf16_f32>(a, b, c, d);
}

extern "C" __global__ void probe_mma_m16n8k8_tf32_f32(const unsigned *a, const unsigned *b,
                                                      const unsigned *c, unsigned *d) {
    probe_f32<mma_m16n8k8_tf32_f32>(a, b, c, d);
}

// fp8 mma exists from sm_89 on: compiled for an older GPU these two entries do nothing (the
// Python side does not launch them there; tcgemm.fragment_layouts.runs_on says where they run).
extern "C" __global__ void probe_mma_m16n8k32_e4m3_f32(const unsigned *a, const unsigned *b,
                                                       const unsigned *c, unsigned *d) {
#if __CUDA_ARCH__ >= 890
    probe_f32<mma_m16n8k32_e4m3_f32>(a, b, c, d);
#endif
}

extern "C" __global__ void probe_mma_m16n8k32_e5m2_f32(const unsigned *a, const unsigned *b,
                                                       const unsigned *c, unsigned *d) {
#if __CUDA_ARCH__ >= 890
    probe_f32<mma_m16n8k32_e5m2_f32>(a, b, c, d);
#endif
}
