// ldmatrix on a known 16 x 16 tile (four 8x8 matrices of 16-bit values), one block of 32 lanes:
// lane l passes the row address tile + row_offset[l] and writes the registers it gets to
// out[l*NUM + j], so the host can see which elements land in which lane and register.
#include "ptx.cuh"

template <int NUM, bool TRANS>
__device__ __forceinline__ void probe_ldmatrix(const unsigned short *src, const int *row_offset,
                                               unsigned *out) {
    __shared__ __align__(16) unsigned short tile[256];
    for (int i = threadIdx.x; i < 256; i += 32) tile[i] = src[i];
    __syncthreads();

    const unsigned addr = smem_u32(tile + row_offset[threadIdx.x]);
    unsigned r[NUM];
    if constexpr (NUM == 1 && !TRANS) ldmatrix_x1(r[0], addr);
    if constexpr (NUM == 2 && !TRANS) ldmatrix_x2(r, addr);
    if constexpr (NUM == 4 && !TRANS) ldmatrix_x4(r, addr);
    if constexpr (NUM == 1 && TRANS) ldmatrix_x1_trans(r[0], addr);
    if constexpr (NUM == 2 && TRANS) ldmatrix_x2_trans(r, addr);
    if constexpr (NUM == 4 && TRANS) ldmatrix_x4_trans(r, addr);
    for (int j = 0; j < NUM; ++j) out[threadIdx.x * NUM + j] = r[j];
}

extern "C" __global__ void probe_ldmatrix_x1(const unsigned short *src, const int *row_offset,
                                             unsigned *out) {
    probe_ldmatrix<1, false>(src, row_offset, out);
}

extern "C" __global__ void probe_ldmatrix_x2(const unsigned short *src, const int *row_offset,
                                             unsigned *out) {
    probe_ldmatrix<2, false>(src, row_offset, out);
}

extern "C" __global__ void probe_ldmatrix_x4(const unsigned short *src, const int *row_offset,
                                             unsigned *out) {
    probe_ldmatrix<4, false>(src, row_offset, out);
}

extern "C" __global__ void probe_ldmatrix_x1_trans(const unsigned short *src,
                                                   const int *row_offset, unsigned *out) {
    probe_ldmatrix<1, true>(src, row_offset, out);
}

extern "C" __global__ void probe_ldmatrix_x2_trans(const unsigned short *src,
                                                   const int *row_offset, unsigned *out) {
    probe_ldmatrix<2, true>(src, row_offset, out);
}

extern "C" __global__ void probe_ldmatrix_x4_trans(const unsigned short *src,
                                                   const int *row_offset, unsigned *out) {
    probe_ldmatrix<4, true>(src, row_offset, out);
}
