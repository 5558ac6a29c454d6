// HGEMM: one warp per 16 x 8 tile of C; fragments loaded with ldmatrix, fp16 accumulate, fp16 out.
#include "ptx.cuh"

constexpr int TM = 16;
constexpr int TN = 8;
constexpr int TK = 16;

extern "C" __global__ void ldmatrix_hgemm_f16(const __half *A, const __half *B, __half *C,
                                              int M, int N, int K) {
    __shared__ __align__(16) __half As[TM][TK];   // As[m][k]
    __shared__ __align__(16) __half Bs[TN][TK];   // Bs[n][k]: column-major B, k contiguous

    const int lane = threadIdx.x;
    const int tile_m = blockIdx.y * TM;
    const int tile_n = blockIdx.x * TN;

    // Global -> shared, 8 halves (16 bytes) per lane: A needs all 32 lanes, B the first 16.
    const int ld_row = lane / 2;
    const int ld_col = (lane % 2) * 8;

    // ldmatrix row addresses. A (x4): lanes 0-15 give rows 0-15 at k 0, lanes 16-31 rows 0-15 at
    // k 8, so the four 8x8 matrices come back as a0..a3 of the fragment. B (x2): lanes 0-7 give
    // n 0-7 at k 0, lanes 8-15 at k 8 (lanes 16-31 are ignored; they repeat lanes 0-15).
    const unsigned a_addr = smem_u32(&As[lane % 16][(lane / 16) * 8]);
    const unsigned b_addr = smem_u32(&Bs[lane % 8][((lane / 8) % 2) * 8]);

    unsigned acc[2] = {0u, 0u};

    for (int k0 = 0; k0 < K; k0 += TK) {
        *reinterpret_cast<uint4 *>(&As[ld_row][ld_col]) =
            *reinterpret_cast<const uint4 *>(&A[(tile_m + ld_row) * K + k0 + ld_col]);
        if (lane < TN * 2)
            *reinterpret_cast<uint4 *>(&Bs[ld_row][ld_col]) =
                *reinterpret_cast<const uint4 *>(&B[(tile_n + ld_row) * K + k0 + ld_col]);
        __syncthreads();

        unsigned a[4], b[2];
        ldmatrix_x4(a, a_addr);
        ldmatrix_x2(b, b_addr);
        mma_m16n8k16_f16(acc, a, b, acc);
        __syncthreads();
    }

    // acc[0]: row lane/4, columns 2*(lane%4) and +1; acc[1]: the same 8 rows further down.
    const int row = lane / 4;
    const int col = 2 * (lane % 4);
    *reinterpret_cast<unsigned *>(&C[(tile_m + row) * N + tile_n + col]) = acc[0];
    *reinterpret_cast<unsigned *>(&C[(tile_m + row + 8) * N + tile_n + col]) = acc[1];
}
