// Kernel W1.1: WMMA, int8 in, int32 accumulate. D = alpha * A B + beta * C, one warp per 16 x 16 tile
// of D. A is M x K and B is K x N, each stored row- or column-major; C and D are M x N row-major, int32.
// alpha and beta are integers; products and sums wrap modulo 2^32 like any int32 arithmetic.
// The memory order of A and of B is a compile-time choice (A_COL_MAJOR, B_COL_MAJOR): it is the
// layout parameter of the fragment type, so load_matrix_sync reads a transposed operand in place.
// M, N and K are multiples of 16. With beta == 0, C is not read (it may be the output D itself).
#include <mma.h>

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

// Offset of element (row, col) of a matrix stored with leading dimension ld.
__device__ __forceinline__ int at(int row, int col, int ld, bool column_major) {
    return column_major ? col * ld + row : row * ld + col;
}

extern "C" __global__ void __launch_bounds__(32 * WARPS_M * WARPS_N)
wmma_imma(const signed char *A, const signed char *B, const int *C, int *D,
          int M, int N, int K, int alpha, int beta) {
    const int warp = threadIdx.x / 32;
    const int m0 = (blockIdx.y * WARPS_M + warp / WARPS_N) * TILE;
    const int n0 = (blockIdx.x * WARPS_N + warp % WARPS_N) * TILE;
    if (m0 >= M || n0 >= N) return;   // the whole warp: its tile lies past the edge of D
    const int lda = A_COL_MAJOR ? M : K;
    const int ldb = B_COL_MAJOR ? K : N;

    wmma::fragment<wmma::matrix_a, TILE, TILE, TILE, signed char, Layout<A_COL_MAJOR>::type> a;
    wmma::fragment<wmma::matrix_b, TILE, TILE, TILE, signed char, Layout<B_COL_MAJOR>::type> b;
    wmma::fragment<wmma::accumulator, TILE, TILE, TILE, int> acc;
    wmma::fill_fragment(acc, 0);
    for (int k0 = 0; k0 < K; k0 += TILE) {
        wmma::load_matrix_sync(a, A + at(m0, k0, lda, A_COL_MAJOR), lda);
        wmma::load_matrix_sync(b, B + at(k0, n0, ldb, B_COL_MAJOR), ldb);
        wmma::mma_sync(acc, a, b, acc);
    }

    // The epilogue works element by element on the fragment: any element-wise map of acc and C
    // is legal, because acc and c share one (unspecified) layout.
    wmma::fragment<wmma::accumulator, TILE, TILE, TILE, int> c;
    if (beta != 0) {
        wmma::load_matrix_sync(c, C + m0 * N + n0, N, wmma::mem_row_major);
        for (int i = 0; i < c.num_elements; ++i) c.x[i] = alpha * acc.x[i] + beta * c.x[i];
    } else {
        for (int i = 0; i < c.num_elements; ++i) c.x[i] = alpha * acc.x[i];
    }
    wmma::store_matrix_sync(D + m0 * N + n0, c, N, wmma::mem_row_major);
}
