// Kernel 1.0: one mma.m16n8k16 per warp per K step, fragments gathered element by element.
// Block: 16 x 16 threads = 8 warps as 2 (M) x 4 (N); each warp owns one 16 x 8 tile of C.
// The copy loops have a trip count the compiler knows (BM * BK / THREADS = 2), so it unrolls them and
// issues all four global loads of a thread before the first shared store. Written as
// `for (i = tid; i < BM * BK; i += THREADS)` the count depends on tid, the loop stays a loop, and each
// load waits for the store before it (book/mma_fragments.ipynb shows the SASS of both forms).
#include "ptx.cuh"

constexpr int BM = 32;          // block tile
constexpr int BN = 32;
constexpr int BK = 16;
constexpr int WARPS_N = 4;
constexpr int WM = 16;          // warp tile
constexpr int WN = 8;
constexpr int THREADS = 256;

extern "C" __global__ void naive_mma(const __half *A, const __half *B, float *C,
                                     int M, int N, int K) {
    __shared__ __half As[BM][BK];   // As[m][k]
    __shared__ __half Bs[BN][BK];   // Bs[n][k]: B is column-major, so k stays contiguous

    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int warp = tid / 32;
    const int lane = tid % 32;
    const int group = lane >> 2;
    const int tig = lane % 4;

    const int block_m = blockIdx.y * BM;
    const int block_n = blockIdx.x * BN;
    const int warp_m = (warp / WARPS_N) * WM;
    const int warp_n = (warp % WARPS_N) * WN;

    float acc[4] = {0.f, 0.f, 0.f, 0.f};

    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int r = 0; r < BM * BK / THREADS; ++r) {
            const int i = tid + r * THREADS;
            As[i / BK][i % BK] = A[(block_m + i / BK) * K + k0 + i % BK];
        }
        for (int r = 0; r < BN * BK / THREADS; ++r) {
            const int i = tid + r * THREADS;
            Bs[i / BK][i % BK] = B[(block_n + i / BK) * K + k0 + i % BK];
        }
        __syncthreads();

        __half a_elem[8];
        for (int i = 0; i < 8; ++i) {
            const int row = group + 8 * ((i / 2) % 2);
            const int col = 2 * tig + (i % 2) + 8 * (i / 4);
            a_elem[i] = As[warp_m + row][col];
        }
        __half b_elem[4];
        for (int i = 0; i < 4; ++i) {
            const int row = 2 * tig + (i % 2) + 8 * (i / 2);
            const int col = group;
            b_elem[i] = Bs[warp_n + col][row];
        }

        unsigned a[4], b[2];
        for (int r = 0; r < 4; ++r) a[r] = pack_half2(a_elem[2 * r], a_elem[2 * r + 1]);
        for (int r = 0; r < 2; ++r) b[r] = pack_half2(b_elem[2 * r], b_elem[2 * r + 1]);

        mma_m16n8k16_f32(acc, a, b, acc);
        __syncthreads();
    }

    for (int i = 0; i < 4; ++i) {
        const int row = group + 8 * (i / 2);
        const int col = 2 * tig + (i % 2);
        C[(block_m + warp_m + row) * N + block_n + warp_n + col] = acc[i];
    }
}
