// The PTX instructions of the book, one wrapper each. Every register is a 32-bit word:
// `unsigned` holds two packed halves (the lower-indexed element in the low 16 bits) or four int8s.
#pragma once
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned smem_u32(const void *ptr) {
    return static_cast<unsigned>(__cvta_generic_to_shared(ptr));
}

__device__ __forceinline__ unsigned pack_half2(__half lo, __half hi) {
    return static_cast<unsigned>(__half_as_ushort(lo)) |
           (static_cast<unsigned>(__half_as_ushort(hi)) << 16);
}

// ---- mma.sync: D = A * B + C, A row-major (m x k), B column-major (k x n) ----

__device__ __forceinline__ void mma_m16n8k16_f32(float d[4], const unsigned a[4],
                                                 const unsigned b[2], const float c[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

__device__ __forceinline__ void mma_m16n8k16_f16(unsigned d[2], const unsigned a[4],
                                                 const unsigned b[2], const unsigned c[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 "
        "{%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%8, %9};\n"
        : "=r"(d[0]), "=r"(d[1])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "r"(c[0]), "r"(c[1]));
}

__device__ __forceinline__ void mma_m16n8k8_f32(float d[4], const unsigned a[2], unsigned b,
                                                const float c[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(b), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

__device__ __forceinline__ void mma_m16n8k32_s32(int d[4], const unsigned a[4],
                                                 const unsigned b[2], const int c[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
}

// The other input types, fp32 accumulators: bf16 has f16's m16n8k16 fragments; tf32 (m16n8k8)
// holds one value per register; e4m3 and e5m2 (sm_89 on) have s8's m16n8k32 fragments.

__device__ __forceinline__ void mma_m16n8k16_bf16_f32(float d[4], const unsigned a[4],
                                                     const unsigned b[2], const float c[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

// fp32 bits rounded to tf32 (to nearest, ties away from zero: the low 13 bits become zero).
__device__ __forceinline__ unsigned round_to_tf32(unsigned x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(x)));
    return r;
}

__device__ __forceinline__ void mma_m16n8k8_tf32_f32(float d[4], const unsigned a[4],
                                                    const unsigned b[2], const float c[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 890
__device__ __forceinline__ void mma_m16n8k32_e4m3_f32(float d[4], const unsigned a[4],
                                                     const unsigned b[2], const float c[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

__device__ __forceinline__ void mma_m16n8k32_e5m2_f32(float d[4], const unsigned a[4],
                                                     const unsigned b[2], const float c[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
#endif

// ---- ldmatrix: lane l gives the shared address of row l % 8 of matrix l / 8 (16-byte aligned) ----

__device__ __forceinline__ void ldmatrix_x1(unsigned &r, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
                 : "=r"(r) : "r"(addr) : "memory");
}

__device__ __forceinline__ void ldmatrix_x2(unsigned r[2], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(addr) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(unsigned r[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
}

// x4 read as two B fragments: matrices 0 and 1 into `lo`, 2 and 3 into `hi`.
__device__ __forceinline__ void ldmatrix_x4_pair(unsigned lo[2], unsigned hi[2], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(lo[0]), "=r"(lo[1]), "=r"(hi[0]), "=r"(hi[1]) : "r"(addr) : "memory");
}

__device__ __forceinline__ void ldmatrix_x1_trans(unsigned &r, unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
                 : "=r"(r) : "r"(addr) : "memory");
}

__device__ __forceinline__ void ldmatrix_x2_trans(unsigned r[2], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(addr) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned r[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
}

// ldmatrix_x4_pair for a tile stored k-major (rows along K): each matrix transposed on the way.
__device__ __forceinline__ void ldmatrix_x4_trans_pair(unsigned lo[2], unsigned hi[2], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(lo[0]), "=r"(lo[1]), "=r"(hi[0]), "=r"(hi[1]) : "r"(addr) : "memory");
}

// ---- cp.async: 16 bytes global -> shared, bypassing L1; both addresses 16-byte aligned ----

__device__ __forceinline__ void cp_async_16(unsigned smem_addr, const void *gmem) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n"
                 :: "r"(smem_addr), "l"(gmem) : "memory");
}

// As cp_async_16, but when `valid` is false nothing is read and the 16 bytes are zero-filled.
__device__ __forceinline__ void cp_async_16_or_zero(unsigned smem_addr, const void *gmem, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(smem_addr), "l"(gmem), "r"(valid ? 16 : 0) : "memory");
}

// As cp_async_16, but only the first `bytes` (0 to 16) are read; the rest of the 16 are zero-filled.
__device__ __forceinline__ void cp_async_16_first(unsigned smem_addr, const void *gmem, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(smem_addr), "l"(gmem), "r"(bytes) : "memory");
}

// 4 bytes global -> shared, through L1 (.ca: .cg copies 16 bytes only); both addresses 4-byte aligned.
__device__ __forceinline__ void cp_async_4(unsigned smem_addr, const void *gmem) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n"
                 :: "r"(smem_addr), "l"(gmem) : "memory");
}

__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}

// ---- Hopper (sm_90 on): mbarriers and TMA tile copies. TMA and mbarrier transaction counts need
// sm_90, not sm_90a (only wgmma and setmaxnreg need the "a" target). ----

// The driver's CUtensorMap (cuda.h, which NVRTC cannot include: it includes libc headers): 128 opaque
// bytes that cuTensorMapEncodeTiled fills on the host, passed to a kernel as a __grid_constant__ value.
struct alignas(64) TensorMap {
    unsigned long long opaque[16];
};

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// An mbarrier is a 64-bit word in shared memory that counts arrivals and, separately, bytes still to
// land. A phase completes when `count` threads have arrived and the byte count is back to zero; then
// the next phase starts, and the phase's parity (0, 1, 0, ...) says which one a waiter waits for.
__device__ __forceinline__ void mbarrier_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count) : "memory");
}

// Makes initialised mbarriers visible to the copy engine (the async proxy) before any copy names them.
__device__ __forceinline__ void fence_barrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival, and `bytes` more to land before the current phase can complete.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
}

// Whether the phase of parity `parity` has completed (the hardware may suspend the thread a while first).
__device__ __forceinline__ bool mbarrier_try_wait(unsigned bar, unsigned parity) {
    unsigned done;
    asm volatile("{\n .reg .pred p;\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    return done;
}

__device__ __forceinline__ void mbarrier_wait(unsigned bar, unsigned parity) {
    while (!mbarrier_try_wait(bar, parity)) {
    }
}

// TMA: copy the box of the tensor map `map` whose first element is at (x, y) (x along the contiguous
// dimension) into shared memory at `dst`, laid out (and swizzled) as the map says; the bytes count
// down mbarrier `bar`. Issued by one thread. Boxes past the tensor's edge are filled with zeros.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TensorMap *map, unsigned bar, int x, int y) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4}], [%2];\n"
                 :: "r"(dst), "l"(map), "r"(bar), "r"(x), "r"(y) : "memory");
}

// One arrival on an mbarrier of this block.
__device__ __forceinline__ void mbarrier_arrive_once(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Thread-block clusters (Kernel 5.5): blocks of one cluster run at once on neighbouring SMs and can
// address each other's shared memory.
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
// The address, in the cluster's shared window, of the same shared variable in block `rank` of the cluster.
__device__ __forceinline__ unsigned cluster_address(unsigned smem_address, unsigned rank) {
    unsigned out;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(out) : "r"(smem_address), "r"(rank));
    return out;
}

// One arrival on an mbarrier named by its cluster address (this block's or another's).
__device__ __forceinline__ void mbarrier_arrive_cluster(unsigned cluster_bar) {
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_bar) : "memory");
}

// Every thread of every block of the cluster arrives, then waits for all of them.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// TMA copy of a box into the same shared offset of every block in `mask` (bit r: cluster rank r); the
// bytes count down the mbarrier at offset `bar` in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const TensorMap *map, unsigned bar, int x, int y,
                                                      unsigned short mask) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%3, %4}], [%2], %5;\n"
                 :: "r"(dst), "l"(map), "r"(bar), "r"(x), "r"(y), "h"(mask) : "memory");
}

// The threads of one warpgroup (or any `threads` of the block, a multiple of 32) wait for each other at
// named barrier `id` (1-15; 0 is __syncthreads's), leaving the block's other warps running.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" :: "r"(id), "r"(threads) : "memory");
}

// Counts the calling warps' arrival at named barrier `id` without waiting: `threads` in all, arriving here
// or waiting in named_barrier_sync, complete it (a signal from one group of warps to another).
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;\n" :: "r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ void st_shared_f32x2(unsigned smem_addr, float x, float y) {
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" :: "r"(smem_addr), "f"(x), "f"(y) : "memory");
}

__device__ __forceinline__ void st_shared_b32(unsigned smem_addr, unsigned x) {
    asm volatile("st.shared.b32 [%0], %1;\n" :: "r"(smem_addr), "r"(x) : "memory");
}

// stmatrix.x4 (sm_90): four 8 x 8 matrices of 16-bit elements from the warp's registers to shared memory.
// Lanes 8i to 8i + 7 give the addresses of matrix i's rows; register i of lane l holds matrix i's row l / 4,
// columns 2 (l % 4) and 2 (l % 4) + 1 (the first in the low half), as ldmatrix would have loaded them.
__device__ __forceinline__ void stmatrix_x4(unsigned smem_addr, unsigned r0, unsigned r1, unsigned r2, unsigned r3) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 :: "r"(smem_addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
}

// TMA store: the box of `map` whose first element is at (x, y) from shared memory at `src` (laid out as
// the map's swizzle says) to global memory, clipped at the tensor's edges. Issued by one thread; it
// joins that thread's current bulk group.
__device__ __forceinline__ void tma_store_2d(const TensorMap *map, unsigned src, int x, int y) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
                 :: "l"(map), "r"(src), "r"(x), "r"(y) : "memory");
}

__device__ __forceinline__ void bulk_commit_group() {
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Waits until at most N of this thread's bulk groups still read their shared-memory source.
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" :: "n"(N) : "memory");
}
#endif

// A counter in global memory that blocks of one grid share (Kernel 5.12): an atomic add that releases this
// block's writes before it and acquires those released before the values it adds to, and a load that
// acquires them.
__device__ __forceinline__ unsigned atomic_add_acq_rel(unsigned *p, unsigned x) {
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;\n" : "=r"(old) : "l"(p), "r"(x) : "memory");
    return old;
}

__device__ __forceinline__ unsigned load_acquire(const unsigned *p) {
    unsigned x;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(x) : "l"(p) : "memory");
    return x;
}

// ---- timers: the GPU's global nanosecond clock (the same on every SM), and the SM a thread runs on ----

__device__ __forceinline__ unsigned long long globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ unsigned sm_id() {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}
