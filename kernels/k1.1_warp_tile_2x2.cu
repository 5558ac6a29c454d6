// Kernel 1.1: Kernel 1.0 with 2 x 2 warp tiling: each warp owns a 32 x 16 tile of C, i.e. 2 x 2
// mma tiles, so every A fragment serves 2 mma and so does every B fragment.
// Block: 16 x 16 threads = 8 warps as 2 (M) x 4 (N). Copy loops as in Kernel 1.0.
#include "ptx.cuh"

constexpr int BM = 64;          // block tile
constexpr int BN = 64;
constexpr int BK = 16;
constexpr int WARPS_N = 4;
constexpr int MMA_M = 16;
constexpr int MMA_N = 8;
constexpr int TILES_M = 2;      // mma tiles per warp
constexpr int TILES_N = 2;
constexpr int WM = TILES_M * MMA_M;    // warp tile
constexpr int WN = TILES_N * MMA_N;
constexpr int THREADS = 256;

extern "C" __global__ void warp_tile_2x2(const __half *A, const __half *B, float *C,
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

    float acc[TILES_M][TILES_N][4] = {};

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

        unsigned a[TILES_M][4], b[TILES_N][2];
        for (int tm = 0; tm < TILES_M; ++tm) {
            __half a_elem[8];
            for (int i = 0; i < 8; ++i) {
                const int row = group + 8 * ((i / 2) % 2);
                const int col = 2 * tig + (i % 2) + 8 * (i / 4);
                a_elem[i] = As[warp_m + tm * MMA_M + row][col];
            }
            for (int r = 0; r < 4; ++r) a[tm][r] = pack_half2(a_elem[2 * r], a_elem[2 * r + 1]);
        }
        for (int tn = 0; tn < TILES_N; ++tn) {
            __half b_elem[4];
            for (int i = 0; i < 4; ++i) {
                const int row = 2 * tig + (i % 2) + 8 * (i / 2);
                const int col = group;
                b_elem[i] = Bs[warp_n + tn * MMA_N + col][row];
            }
            for (int r = 0; r < 2; ++r) b[tn][r] = pack_half2(b_elem[2 * r], b_elem[2 * r + 1]);
        }

        for (int tm = 0; tm < TILES_M; ++tm)
            for (int tn = 0; tn < TILES_N; ++tn)
                mma_m16n8k16_f32(acc[tm][tn], a[tm], b[tn], acc[tm][tn]);
        __syncthreads();
    }

    for (int tm = 0; tm < TILES_M; ++tm)
        for (int tn = 0; tn < TILES_N; ++tn)
            for (int i = 0; i < 4; ++i) {
                const int row = tm * MMA_M + group + 8 * (i / 2);
                const int col = tn * MMA_N + 2 * tig + (i % 2);
                C[(block_m + warp_m + row) * N + block_n + warp_n + col] = acc[tm][tn][i];
            }
}
