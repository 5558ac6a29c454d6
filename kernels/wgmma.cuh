// PTX wrappers of Hopper's warpgroup MMA (wgmma) and the fences around it. wgmma exists only in the
// architecture-specific target sm_90a (NVRTC/nvcc: -arch=sm_90a), which defines
// __CUDA_ARCH_FEAT_SM90_ALL; elsewhere this header declares nothing.
#pragma once

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// Shared-memory stores by threads (the generic proxy) become visible to wgmma's operand reads (the
// async proxy) only after this fence.
__device__ __forceinline__ void fence_proxy_async_shared() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// The start-address field of a matrix descriptor: bits 0-13 hold the shared address >> 4.
__device__ __forceinline__ unsigned long long descriptor_start(const void *smem) {
    return (static_cast<unsigned long long>(__cvta_generic_to_shared(smem)) >> 4) & 0x3FFF;
}

// Orders this warpgroup's register accesses to the accumulators before the next wgmma.
__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit_group() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most PENDING committed groups of this warp's wgmma are still in flight.
template <int PENDING>
__device__ __forceinline__ void wgmma_wait_group() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
}

// Ties accumulator registers to this point, so the compiler neither reads them before a wait nor
// moves their updates across a fence.
template <int R>
__device__ __forceinline__ void wgmma_fence_operands(float (&d)[R]) {
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// D (64 x 8, f32) = A (64 x 16, f16) @ B (16 x 8, f16) (+ D when scale_d != 0); A and B K-major in
// shared memory, read through their descriptors.
__device__ __forceinline__ void wgmma_m64n8k16_f32_f16_ss(float (&d)[4], unsigned long long desc_a,
                                                          unsigned long long desc_b, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// D (64 x 8, f32) = A (64 x 32, e4m3) @ B (32 x 8, e4m3) (+ D when scale_d != 0); A and B K-major in
// shared memory (the only order 8-bit operands may take), read through their descriptors.
__device__ __forceinline__ void wgmma_m64n8k32_f32_e4m3_ss(float (&d)[4], unsigned long long desc_a,
                                                           unsigned long long desc_b, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%0, %1, %2, %3}, %4, %5, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// The same with N = 16. TRANS_A / TRANS_B 1: that operand is MN-major (M- or N-contiguous) in shared
// memory instead of K-major (wgmma's imm-trans-a / imm-trans-b; .f16 and .bf16 only).
template <int TRANS_A = 0, int TRANS_B = 0>
__device__ __forceinline__ void wgmma_m64n16k16_f32_f16_ss(float (&d)[8], unsigned long long desc_a,
                                                           unsigned long long desc_b, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, %11, %12;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TRANS_A), "n"(TRANS_B));
}

// The asm operands that bind accumulators d[i] onwards, 8 or 32 of them, and all of an m64n64 to an
// m64n256 wgmma's (%0 onwards).
#define WGMMA_D8_AT(d, i) \
    "+f"(d[(i) + 0]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3]), "+f"(d[(i) + 4]), "+f"(d[(i) + 5]), \
    "+f"(d[(i) + 6]), "+f"(d[(i) + 7])
#define WGMMA_D32_AT(d, i) WGMMA_D8_AT(d, i), WGMMA_D8_AT(d, (i) + 8), WGMMA_D8_AT(d, (i) + 16), WGMMA_D8_AT(d, (i) + 24)
#define WGMMA_D16_OPERANDS(d) WGMMA_D8_AT(d, 0), WGMMA_D8_AT(d, 8)
#define WGMMA_D32_OPERANDS(d) WGMMA_D32_AT(d, 0)
#define WGMMA_D64_OPERANDS(d) WGMMA_D32_AT(d, 0), WGMMA_D32_AT(d, 32)
#define WGMMA_D96_OPERANDS(d) WGMMA_D32_AT(d, 0), WGMMA_D32_AT(d, 32), WGMMA_D32_AT(d, 64)
#define WGMMA_D128_OPERANDS(d) WGMMA_D32_AT(d, 0), WGMMA_D32_AT(d, 32), WGMMA_D32_AT(d, 64), WGMMA_D32_AT(d, 96)

// The accumulators' places in the text of an m64n32 (16 registers per thread), an m64n64 (32), an
// m64n128 (64) and an m64n192 wgmma (96), as WGMMA_D128_TEXT below is for m64n256.
#define WGMMA_D16_TEXT "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define WGMMA_D32_TEXT \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define WGMMA_D64_TEXT \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WGMMA_D96_TEXT \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"

// D (64 x N f32) (+)= A (64 x 16) @ B (16 x N) for N = 32, 64, 128 and 192, f16 or bf16 (AB_BF16), as
// wgmma_m64n256k16_f32_ss below: Kernel 5.11's and 5.14's narrower tiles.
template <int TRANS_A = 0, int TRANS_B = 0, int AB_BF16 = 0>
__device__ __forceinline__ void wgmma_m64n32k16_f32_ss(float (&d)[16], unsigned long long desc_a,
                                                       unsigned long long desc_b, int accumulate) {
    if constexpr (AB_BF16)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {" WGMMA_D16_TEXT "}, %16, %17, p, 1, 1, "
                     "%19, %20;\n}\n"
                     : WGMMA_D16_OPERANDS(d) : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TRANS_A), "n"(TRANS_B));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {" WGMMA_D16_TEXT "}, %16, %17, p, 1, 1, "
                     "%19, %20;\n}\n"
                     : WGMMA_D16_OPERANDS(d) : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TRANS_A), "n"(TRANS_B));
}
template <int TRANS_A = 0, int TRANS_B = 0, int AB_BF16 = 0>
__device__ __forceinline__ void wgmma_m64n64k16_f32_ss(float (&d)[32], unsigned long long desc_a,
                                                       unsigned long long desc_b, int accumulate) {
    if constexpr (AB_BF16)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" WGMMA_D32_TEXT "}, %32, %33, p, 1, 1, "
                     "%35, %36;\n}\n"
                     : WGMMA_D32_OPERANDS(d) : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TRANS_A), "n"(TRANS_B));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {" WGMMA_D32_TEXT "}, %32, %33, p, 1, 1, "
                     "%35, %36;\n}\n"
                     : WGMMA_D32_OPERANDS(d) : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TRANS_A), "n"(TRANS_B));
}

template <int TRANS_A = 0, int TRANS_B = 0, int AB_BF16 = 0>
__device__ __forceinline__ void wgmma_m64n128k16_f32_ss(float (&d)[64], unsigned long long desc_a,
                                                       unsigned long long desc_b, int accumulate) {
    if constexpr (AB_BF16)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" WGMMA_D64_TEXT "}, %64, %65, p, 1, 1, "
                     "%67, %68;\n}\n"
                     : WGMMA_D64_OPERANDS(d) : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TRANS_A), "n"(TRANS_B));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {" WGMMA_D64_TEXT "}, %64, %65, p, 1, 1, "
                     "%67, %68;\n}\n"
                     : WGMMA_D64_OPERANDS(d) : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TRANS_A), "n"(TRANS_B));
}

template <int TRANS_A = 0, int TRANS_B = 0, int AB_BF16 = 0>
__device__ __forceinline__ void wgmma_m64n192k16_f32_ss(float (&d)[96], unsigned long long desc_a,
                                                       unsigned long long desc_b, int accumulate) {
    if constexpr (AB_BF16)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 {" WGMMA_D96_TEXT "}, %96, %97, p, 1, 1, "
                     "%99, %100;\n}\n"
                     : WGMMA_D96_OPERANDS(d) : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TRANS_A), "n"(TRANS_B));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n192k16.f32.f16.f16 {" WGMMA_D96_TEXT "}, %96, %97, p, 1, 1, "
                     "%99, %100;\n}\n"
                     : WGMMA_D96_OPERANDS(d) : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TRANS_A), "n"(TRANS_B));
}

// N = 128 in f16 (64 registers per thread): the wgmma probe's B spans two 128-byte swizzle atoms
// along N when it is N-major, so that the leading byte offset matters; Kernel 5.8 issues two per k16 step.
template <int TRANS_A = 0, int TRANS_B = 0>
__device__ __forceinline__ void wgmma_m64n128k16_f32_f16_ss(float (&d)[64], unsigned long long desc_a,
                                                            unsigned long long desc_b, int scale_d) {
    wgmma_m64n128k16_f32_ss<TRANS_A, TRANS_B, 0>(d, desc_a, desc_b, scale_d);
}

// ---- for the GEMM kernels 5.1-5.5 ----

// The 128 accumulators of an m64n256 wgmma (f32: 128 registers per thread): their place in the
// instruction's text (WGMMA_D128_OPERANDS above binds them).
#define WGMMA_D128_TEXT \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

// D (64 x 256 f32) (+)= A (64 x 16) @ B (16 x 256), A and B f16 (or bf16 where AB_BF16 is 1) in shared
// memory, read through their descriptors, K-major (or MN-major where TRANS_A / TRANS_B is 1); D is added
// to when accumulate != 0.
template <int TRANS_A = 0, int TRANS_B = 0, int AB_BF16 = 0>
__device__ __forceinline__ void wgmma_m64n256k16_f32_ss(float (&d)[128], unsigned long long desc_a,
                                                        unsigned long long desc_b, int accumulate) {
    if constexpr (AB_BF16)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" WGMMA_D128_TEXT "}, %128, %129, p, 1, 1, "
                     "%131, %132;\n}\n"
                     : WGMMA_D128_OPERANDS(d) : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TRANS_A), "n"(TRANS_B));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {" WGMMA_D128_TEXT "}, %128, %129, p, 1, 1, "
                     "%131, %132;\n}\n"
                     : WGMMA_D128_OPERANDS(d) : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(TRANS_A), "n"(TRANS_B));
}

// The f16 instruction, as Kernels 5.1-5.7 call it.
template <int TRANS_A = 0, int TRANS_B = 0>
__device__ __forceinline__ void wgmma_m64n256k16_f32_f16_ss(float (&d)[128], unsigned long long desc_a,
                                                            unsigned long long desc_b, int accumulate) {
    wgmma_m64n256k16_f32_ss<TRANS_A, TRANS_B, 0>(d, desc_a, desc_b, accumulate);
}

// wgmma m64nNk16 for the tile widths N of Kernels 5.11 on: 32, 64, 128, 192 or 256 columns, d[N / 2] per thread.
template <int N, int TRANS_A = 0, int TRANS_B = 0, int AB_BF16 = 0>
__device__ __forceinline__ void wgmma_m64nNk16_f32_ss(float (&d)[N / 2], unsigned long long desc_a,
                                                      unsigned long long desc_b, int accumulate) {
    static_assert(N == 32 || N == 64 || N == 128 || N == 192 || N == 256, "the tiles are 32, 64, 128, 192 or 256 wide");
    if constexpr (N == 256) wgmma_m64n256k16_f32_ss<TRANS_A, TRANS_B, AB_BF16>(d, desc_a, desc_b, accumulate);
    else if constexpr (N == 192) wgmma_m64n192k16_f32_ss<TRANS_A, TRANS_B, AB_BF16>(d, desc_a, desc_b, accumulate);
    else if constexpr (N == 128) wgmma_m64n128k16_f32_ss<TRANS_A, TRANS_B, AB_BF16>(d, desc_a, desc_b, accumulate);
    else if constexpr (N == 64) wgmma_m64n64k16_f32_ss<TRANS_A, TRANS_B, AB_BF16>(d, desc_a, desc_b, accumulate);
    else wgmma_m64n32k16_f32_ss<TRANS_A, TRANS_B, AB_BF16>(d, desc_a, desc_b, accumulate);
}

// An operand tile in the 128-byte swizzle that TMA writes (CU_TENSOR_MAP_SWIZZLE_128B): rows of 128
// bytes, 8-row atoms 1024 bytes apart (stride byte offset). K-major, the leading byte offset is unused
// (16: the field's 1); MN-major, it is the distance between atoms along M or N (64 elements apart).
__device__ __forceinline__ unsigned long long descriptor_sw128(unsigned smem_address, unsigned leading_bytes = 16) {
    return static_cast<unsigned long long>((smem_address & 0x3FFFF) >> 4) |
           (static_cast<unsigned long long>((leading_bytes & 0x3FFFF) >> 4) << 16) |
           (static_cast<unsigned long long>(1024 >> 4) << 32) | (1ull << 62);
}

// Gives this warpgroup's registers back to (dec) or takes them from (inc) the SM's pool; every warp of
// the warpgroup executes it with the same count.
template <int REGS> __device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS> __device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
