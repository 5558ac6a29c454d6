// Kernel 2.0: Kernel 1.1 with 16-byte vector loads from global memory, a permuted (XOR-swizzled)
// shared memory layout, and fragments loaded with ldmatrix. The K slice per step grows to 32.
// C is stored 8 bytes at a time: registers 2h and 2h + 1 of an accumulator fragment are adjacent
// columns of one row, so one float2 store writes both (a warp's store covers 8 rows x 32 bytes).
// Block: 16 x 16 threads = 8 warps as 2 (M) x 4 (N); each warp owns a 32 x 16 tile of C.
#include "ptx.cuh"

constexpr int BM = 64;          // block tile
constexpr int BN = 64;
constexpr int BK = 32;
constexpr int WARPS_N = 4;
constexpr int MMA_M = 16;
constexpr int MMA_N = 8;
constexpr int MMA_K = 16;
constexpr int TILES_M = 2;      // mma tiles per warp
constexpr int TILES_N = 2;
constexpr int WM = TILES_M * MMA_M;    // warp tile
constexpr int WN = TILES_N * MMA_N;
constexpr int THREADS = 256;

constexpr int CHUNK = 8;                // fp16 per 16-byte chunk (one uint4, one ldmatrix row)
constexpr int CHUNKS = BK / CHUNK;      // 4 chunks along K per tile row
constexpr int LINE = 8;                 // chunks per 128-byte shared line = all 32 banks
constexpr int K_STEPS = BK / MMA_K;     // 2 mma along K per step, each on 2 chunks
static_assert(BM * CHUNKS == THREADS && BN * CHUNKS == THREADS, "one chunk of A and B per thread");

// Where chunk `chunk` (0..3) of tile row `row` lives in a tile stored as 16-byte slots.
// Two tile rows share one 128-byte line, so the slot's byte address is
//     line * 128 + column * 16,   line = row / 2,   column = (row % 2) * 4 + chunk  (0..7),
// i.e. bits 4-6 of the address pick the 16-byte bank group and bits 7 and up the line.
// Unpermuted, the 8 rows that one ldmatrix phase reads at a fixed chunk would hit only two bank
// groups (columns chunk and 4 + chunk), four times each. XOR-ing the column with line % 4, i.e.
// address bits 4-5 with bits 7-8, spreads each run of 4 lines over all 8 groups; within one line
// the XOR is a bijection, so the 8 stores of a line stay conflict-free too.
__device__ __forceinline__ int permuted_chunk(int row, int chunk) {
    const int line = row / 2;
    const int column = (row % 2) * CHUNKS + chunk;
    return line * LINE + (column ^ (line % 4));
}

extern "C" __global__ void permuted_smem(const __half *A, const __half *B, float *C,
                                         int M, int N, int K) {
    __shared__ uint4 As[BM * CHUNKS];   // A tile, row m, chunk c at As[permuted_chunk(m, c)]
    __shared__ uint4 Bs[BN * CHUNKS];   // B tile by n: B is column-major, so k stays contiguous

    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int warp = tid / 32;
    const int lane = tid % 32;
    const int group = lane >> 2;
    const int tig = lane % 4;

    const int block_m = blockIdx.y * BM;
    const int block_n = blockIdx.x * BN;
    const int warp_m = (warp / WARPS_N) * WM;
    const int warp_n = (warp % WARPS_N) * WN;

    // Global -> shared: one 16-byte chunk of A and one of B per thread per step. Consecutive
    // lanes take consecutive chunks along K of a row, so a warp reads 8 rows x 64 bytes.
    const int ld_row = tid / CHUNKS;
    const int ld_chunk = tid % CHUNKS;
    const int st_slot = permuted_chunk(ld_row, ld_chunk);

    // ldmatrix rows. A (x4, 16 x 16 sub-tile): lanes 0-15 give rows 0-15 at the first chunk of
    // the pair, lanes 16-31 the same rows at the second, so the four 8x8 matrices come back as
    // a[0..3] of the fragment. B (x2, 8 x 16): lanes 0-7 give n 0-7 at the first chunk, lanes
    // 8-15 at the second (lanes 16-31 are ignored; they repeat lanes 0-15).
    const int a_row = lane % 16;
    const int a_chunk = lane / 16;
    const int b_row = lane % 8;
    const int b_chunk = (lane / 8) % 2;

    float acc[TILES_M][TILES_N][4] = {};

    for (int k0 = 0; k0 < K; k0 += BK) {
        As[st_slot] = *reinterpret_cast<const uint4 *>(
            &A[(block_m + ld_row) * K + k0 + ld_chunk * CHUNK]);
        Bs[st_slot] = *reinterpret_cast<const uint4 *>(
            &B[(block_n + ld_row) * K + k0 + ld_chunk * CHUNK]);
        __syncthreads();

        // Both fragments reloaded for every mma that uses them: fewer live registers, more ldmatrix.
        for (int tm = 0; tm < TILES_M; ++tm)
            for (int tn = 0; tn < TILES_N; ++tn)
                for (int ks = 0; ks < K_STEPS; ++ks) {
                    unsigned a[4], b[2];
                    const int chunk = ks * (MMA_K / CHUNK);
                    ldmatrix_x4(a, smem_u32(&As[permuted_chunk(warp_m + tm * MMA_M + a_row,
                                                               chunk + a_chunk)]));
                    ldmatrix_x2(b, smem_u32(&Bs[permuted_chunk(warp_n + tn * MMA_N + b_row,
                                                               chunk + b_chunk)]));
                    mma_m16n8k16_f32(acc[tm][tn], a, b, acc[tm][tn]);
                }
        __syncthreads();
    }

    for (int tm = 0; tm < TILES_M; ++tm)
        for (int tn = 0; tn < TILES_N; ++tn)
            for (int h = 0; h < 2; ++h) {
                const int row = tm * MMA_M + group + 8 * h;
                const int col = tn * MMA_N + 2 * tig;
                *reinterpret_cast<float2 *>(&C[(block_m + warp_m + row) * N + block_n + warp_n + col]) =
                    make_float2(acc[tm][tn][2 * h], acc[tm][tn][2 * h + 1]);
            }
}
