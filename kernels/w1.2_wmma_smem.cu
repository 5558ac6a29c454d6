// Kernel W1.2: WMMA from shared memory. Kernel W1.0 with the block's tiles of A and B copied to shared
// memory first (16-byte loads), so the fragments load from there: D = alpha * A B + beta * C, fp16 in,
// fp32 accumulate, one warp per 16 x 16 tile of D. A is M x K and B is K x N, each stored row- or
// column-major; C and D are M x N row-major, fp32.
// The memory order of A and of B is a compile-time choice (A_COL_MAJOR, B_COL_MAJOR): it is the
// layout parameter of the fragment type, and the shared tiles keep the order of global memory.
// M, N and K are multiples of 16. With beta == 0, C is not read (it may be the output D itself).
#include <mma.h>
#include <cuda_fp16.h>

using namespace nvcuda;

#ifndef A_COL_MAJOR
#define A_COL_MAJOR 0
#endif
#ifndef B_COL_MAJOR
#define B_COL_MAJOR 0
#endif

template <bool column_major> struct Layout { using type = wmma::row_major; };
template <> struct Layout<true> { using type = wmma::col_major; };

constexpr int TILE = 16;                  // m = n = k = 16: one wmma::mma_sync
constexpr int WARPS_M = 4, WARPS_N = 2;   // a block of 8 warps covers 64 x 32 of D
constexpr int BM = WARPS_M * TILE, BN = WARPS_N * TILE, BK = 2 * TILE;
constexpr int PAD = 8;                    // halves after each stored row of a shared tile (16 bytes)

// Offset of element (row, col) of a matrix stored with leading dimension ld.
__device__ __forceinline__ int at(int row, int col, int ld, bool column_major) {
    return column_major ? col * ld + row : row * ld + col;
}

// Copy the rows x cols tile at (row0, col0) of a rows_all x cols_all matrix stored with leading
// dimension ld into dst, in the same memory order, each stored line padded to its length + PAD.
// 16-byte pieces; pieces past the edge of the matrix are skipped (no warp reads them).
template <int ROWS, int COLS, bool COLUMN_MAJOR>
__device__ __forceinline__ void copy_tile(__half *dst, const __half *src, int row0, int col0,
                                          int rows_all, int cols_all, int ld) {
    constexpr int LINE = COLUMN_MAJOR ? ROWS : COLS, LINES = COLUMN_MAJOR ? COLS : ROWS;
    for (int piece = threadIdx.x; piece < LINES * LINE / 8; piece += blockDim.x) {
        const int line = piece / (LINE / 8), along = piece % (LINE / 8) * 8;
        const int row = row0 + (COLUMN_MAJOR ? along : line), col = col0 + (COLUMN_MAJOR ? line : along);
        if (row < rows_all && col < cols_all)
            *reinterpret_cast<uint4 *>(dst + line * (LINE + PAD) + along) =
                *reinterpret_cast<const uint4 *>(src + at(row, col, ld, COLUMN_MAJOR));
    }
}

extern "C" __global__ void __launch_bounds__(32 * WARPS_M * WARPS_N)
wmma_smem(const __half *A, const __half *B, const float *C, float *D,
          int M, int N, int K, float alpha, float beta) {
    constexpr int LDA = (A_COL_MAJOR ? BM : BK) + PAD, LDB = (B_COL_MAJOR ? BK : BN) + PAD;
    __shared__ __align__(32) __half As[(A_COL_MAJOR ? BK : BM) * LDA];
    __shared__ __align__(32) __half Bs[(B_COL_MAJOR ? BN : BK) * LDB];
    const int warp = threadIdx.x / 32, wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int m0 = blockIdx.y * BM + wm * TILE;
    const int n0 = blockIdx.x * BN + wn * TILE;
    const bool inside = m0 < M && n0 < N;   // the warp's tile of D; all warps help copy
    const int lda = A_COL_MAJOR ? M : K;
    const int ldb = B_COL_MAJOR ? K : N;

    wmma::fragment<wmma::matrix_a, TILE, TILE, TILE, __half, Layout<A_COL_MAJOR>::type> a;
    wmma::fragment<wmma::matrix_b, TILE, TILE, TILE, __half, Layout<B_COL_MAJOR>::type> b;
    wmma::fragment<wmma::accumulator, TILE, TILE, TILE, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < K; k0 += BK) {
        copy_tile<BM, BK, A_COL_MAJOR>(As, A, blockIdx.y * BM, k0, M, K, lda);
        copy_tile<BK, BN, B_COL_MAJOR>(Bs, B, k0, blockIdx.x * BN, K, N, ldb);
        __syncthreads();
        for (int kk = 0; inside && kk < BK && k0 + kk < K; kk += TILE) {
            wmma::load_matrix_sync(a, As + at(wm * TILE, kk, LDA, A_COL_MAJOR), LDA);
            wmma::load_matrix_sync(b, Bs + at(kk, wn * TILE, LDB, B_COL_MAJOR), LDB);
            wmma::mma_sync(acc, a, b, acc);
        }
        __syncthreads();
    }
    if (!inside) return;

    // The epilogue works element by element on the fragment: any element-wise map of acc and C
    // is legal, because acc and c share one (unspecified) layout.
    wmma::fragment<wmma::accumulator, TILE, TILE, TILE, float> c;
    if (beta != 0.0f) {
        wmma::load_matrix_sync(c, C + m0 * N + n0, N, wmma::mem_row_major);
        for (int i = 0; i < c.num_elements; ++i) c.x[i] = alpha * acc.x[i] + beta * c.x[i];
    } else {
        for (int i = 0; i < c.num_elements; ++i) c.x[i] = alpha * acc.x[i];
    }
    wmma::store_matrix_sync(D + m0 * N + n0, c, N, wmma::mem_row_major);
}
