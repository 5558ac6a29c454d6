// Where does a WMMA fragment keep each element? CUDA does not say. One warp fills one fragment with
// load_matrix_sync from a 16 x 16 matrix chosen by the host (stored with leading dimension 16 in the
// fragment's own memory order) and writes every lane's frag.x[i] to out[lane * num_elements + i];
// lane 0 also writes num_elements to *count. Tagging the matrix with its row indices, then with its
// column indices, tells which element each (lane, i) holds.
#include <mma.h>
#include <cuda_fp16.h>

using namespace nvcuda;

template <typename Fragment, typename T>
__device__ __forceinline__ void write_out(const Fragment &f, T *out, int *count) {
    for (int i = 0; i < f.num_elements; ++i) out[threadIdx.x * f.num_elements + i] = f.x[i];
    if (threadIdx.x == 0) *count = f.num_elements;
}

#define PROBE_OPERAND(name, use, T, layout)                                          \
    extern "C" __global__ void name(const T *src, T *out, int *count) {              \
        wmma::fragment<wmma::use, 16, 16, 16, T, wmma::layout> f;                    \
        wmma::load_matrix_sync(f, src, 16);                                          \
        write_out(f, out, count);                                                    \
    }

#define PROBE_ACCUMULATOR(name, T)                                                   \
    extern "C" __global__ void name(const T *src, T *out, int *count) {              \
        wmma::fragment<wmma::accumulator, 16, 16, 16, T> f;                          \
        wmma::load_matrix_sync(f, src, 16, wmma::mem_row_major);                     \
        write_out(f, out, count);                                                    \
    }

PROBE_OPERAND(probe_wmma_f16_a_row, matrix_a, __half, row_major)
PROBE_OPERAND(probe_wmma_f16_a_col, matrix_a, __half, col_major)
PROBE_OPERAND(probe_wmma_f16_b_row, matrix_b, __half, row_major)
PROBE_OPERAND(probe_wmma_f16_b_col, matrix_b, __half, col_major)
PROBE_ACCUMULATOR(probe_wmma_f32_acc, float)
PROBE_OPERAND(probe_wmma_s8_a_row, matrix_a, signed char, row_major)
PROBE_OPERAND(probe_wmma_s8_a_col, matrix_a, signed char, col_major)
PROBE_OPERAND(probe_wmma_s8_b_row, matrix_b, signed char, row_major)
PROBE_OPERAND(probe_wmma_s8_b_col, matrix_b, signed char, col_major)
PROBE_ACCUMULATOR(probe_wmma_s32_acc, int)
