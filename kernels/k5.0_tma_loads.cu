// Kernel 5.0: Kernel 4.4 with its copies made by the tensor memory accelerator (TMA, sm_90 on). One
// thread issues the two tile copies of a stage (cp.async.bulk.tensor); the TMA unit computes every
// address and writes each tile in the XOR-permuted layout itself: a tile row of BK = 64 halves is
// 128 bytes and the tensor maps (built on the host by tcgemm.engine.gpu.tma) ask for the 128-byte swizzle
// (BK = 32: 64 bytes, the 64-byte swizzle), which is Kernel 4.4's permuted_chunk exactly, so the
// ldmatrix reads are 4.4's. The swizzle XORs bits of the shared address, so every stage starts on a
// 1024-byte boundary. Each stage has two mbarriers: "full" counts the bytes still to land, "empty" the
// warps that still read the stage; thread 0 refills a stage once every warp has released it, so no
// barrier across the block is left in the main loop. BLOCK_SYNC=1 releases the stages as Kernel 4.4
// does instead, by one __syncthreads per K tile (a measurement of what the empty barriers buy).
// Block: 256 threads = 8 warps as 2 (M) x 4 (N). M, N and K multiples of the block tile.
#include "ptx.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "Kernel 5.0 copies with TMA and waits on mbarrier byte counts: compile it for sm_90 (Hopper) or later"
#endif

#ifndef N_STAGES
#define N_STAGES 4
#endif
#ifndef BK
#define BK 32
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef BLOCK_SYNC
#define BLOCK_SYNC 0
#endif
static_assert(N_STAGES >= 2, "a ring buffer needs at least two stages");
static_assert(BK == 32 || BK == 64, "a tile row is half or all of a 128-byte shared line");

constexpr int BM = 128;         // block tile
constexpr int BN = 256;
constexpr int WARPS_N = 4;
constexpr int MMA_M = 16;
constexpr int MMA_N = 8;
constexpr int MMA_K = 16;
constexpr int TILES_M = 4;      // mma tiles per warp
constexpr int TILES_N = 8;
constexpr int WM = TILES_M * MMA_M;    // warp tile
constexpr int WN = TILES_N * MMA_N;
constexpr int THREADS = 256;

constexpr int CHUNK = 8;                // fp16 per 16-byte chunk (one uint4, one ldmatrix row)
constexpr int CHUNKS = BK / CHUNK;      // chunks along K per tile row: 4 or 8
constexpr int LINE = 8;                 // chunks per 128-byte shared line = all 32 banks
constexpr int ROWS_PER_LINE = LINE / CHUNKS;
constexpr int K_STEPS = BK / MMA_K;
constexpr int A_STAGE = BM * CHUNKS;    // uint4 slots per stage
constexpr int B_STAGE = BN * CHUNKS;
constexpr unsigned STAGE_BYTES = (A_STAGE + B_STAGE) * sizeof(uint4);   // what one stage's copies bring
constexpr unsigned SWIZZLE_REPEAT = 1024;   // the 128-byte swizzle repeats every 8 lines (64-byte: 4)
static_assert(A_STAGE * sizeof(uint4) % SWIZZLE_REPEAT == 0 && B_STAGE * sizeof(uint4) % SWIZZLE_REPEAT == 0,
              "every stage starts on a swizzle boundary");

// Kernel 2.0's XOR permutation for either tile width: line = 128 bytes = ROWS_PER_LINE tile rows;
// the 16-byte column is XOR-ed with line % CHUNKS, so 8 consecutive rows at one chunk (one
// ldmatrix phase) land in 8 different bank groups. For BK = 64 this is column ^ (row % 8).
// On byte offsets that is TMA's swizzle: bits 4-6 ^= bits 7-9 (128-byte), bits 4-5 ^= bits 7-8 (64-byte).
__device__ __forceinline__ int permuted_chunk(int row, int chunk) {
    const int line = row / ROWS_PER_LINE;
    const int column = (row % ROWS_PER_LINE) * CHUNKS + chunk;
    return line * LINE + (column ^ (line % CHUNKS));
}
// Moving MMA_M rows down moves a whole number of XOR periods, so it is a plain offset.
static_assert((MMA_M / ROWS_PER_LINE) % CHUNKS == 0, "row offsets of fragments keep the XOR pattern");

extern "C" __global__ void __launch_bounds__(THREADS, 1)
tma_loads(const __grid_constant__ TensorMap a_map, const __grid_constant__ TensorMap b_map, float *C,
          int M, int N, int K) {
    // N_STAGES stages of A, then N_STAGES stages of B, from the first 1024-byte boundary on (the
    // launcher allocates SWIZZLE_REPEAT bytes more than the stages need).
    extern __shared__ uint4 smem[];
    __shared__ unsigned long long full[N_STAGES];    // per stage: "its tiles have landed"
    __shared__ unsigned long long empty[N_STAGES];   // per stage: "every warp is done reading it"
    const unsigned as0 = (smem_u32(smem) + SWIZZLE_REPEAT - 1) & ~(SWIZZLE_REPEAT - 1);
    const unsigned bs0 = as0 + N_STAGES * A_STAGE * sizeof(uint4);
    const unsigned full0 = smem_u32(full);
    const unsigned empty0 = smem_u32(empty);

    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int lane = tid % 32;
    const int group = lane >> 2;
    const int tig = lane % 4;

    // Launch index -> tile: groups of GROUP_M tile rows (fewer in the last group), column-major inside.
    const int grid_m = gridDim.y, grid_n = gridDim.x;
    const int launched = blockIdx.y * grid_n + blockIdx.x;
    const int first_row = launched / (GROUP_M * grid_n) * GROUP_M;
    const int group_rows = min(GROUP_M, grid_m - first_row);
    const int in_group = launched % (GROUP_M * grid_n);
    const int block_m = (first_row + in_group % group_rows) * BM;
    const int block_n = (in_group / group_rows) * BN;
    const int warp_m = (warp / WARPS_N) * WM;
    const int warp_n = (warp % WARPS_N) * WN;

    // ldmatrix rows. A (x4, 16 x 16): as before. B (x4, two 8 x 16 n-tiles): lanes 0-7 and 8-15
    // give the first n-tile at the two chunks, lanes 16-23 and 24-31 the second one.
    const int a_row = lane % 16;
    const int a_chunk = lane / 16;
    const int b_row = lane % 8 + 8 * (lane / 16);
    const int b_chunk = (lane / 8) % 2;

    if (tid == 0) {
        for (int s = 0; s < N_STAGES; ++s) {
            mbarrier_init(full0 + s * sizeof(unsigned long long), 1);
            mbarrier_init(empty0 + s * sizeof(unsigned long long), THREADS / 32);
        }
        fence_barrier_init();
    }
    __syncthreads();

    const int k_tiles = K / BK;
    // Thread 0 starts the copies of tile `t` into stage t % N_STAGES, once every warp has released the
    // tile t - N_STAGES it held (the (t / N_STAGES - 1)-th phase of its empty barrier): the stage's full
    // barrier expects the bytes of both tiles, and completes its phase when they have landed.
    auto load_tile = [&](int t) {
        if (tid == 0 && t < k_tiles) {
            const int stage = t % N_STAGES;
            if (!BLOCK_SYNC && t >= N_STAGES)
                mbarrier_wait(empty0 + stage * sizeof(unsigned long long), (t / N_STAGES - 1) % 2);
            const unsigned bar = full0 + stage * sizeof(unsigned long long);
            mbarrier_arrive_expect_tx(bar, STAGE_BYTES);
            tma_load_2d(as0 + stage * A_STAGE * sizeof(uint4), &a_map, bar, t * BK, block_m);
            tma_load_2d(bs0 + stage * B_STAGE * sizeof(uint4), &b_map, bar, t * BK, block_n);
        }
    };
    // Tile t is the (t / N_STAGES)-th fill of its stage: it completes the phase of that parity.
    auto wait_tile = [&](int t) {
        mbarrier_wait(full0 + (t % N_STAGES) * sizeof(unsigned long long), (t / N_STAGES) % 2);
    };

    float acc[TILES_M][TILES_N][4] = {};

    unsigned a[2][TILES_M][4], b[2][TILES_N][2];     // [slice parity][tile][register]
    // Byte offsets in a stage of this lane's ldmatrix row for tile 0, slice 0. Slice ks adds 2 ks to
    // the chunk (MMA_K = 2 chunks), i.e. XORs ks << 5 into the byte offset: the permutation only
    // flips chunk bits by row bits, and tile row offsets are whole XOR periods (asserted above).
    static_assert(MMA_K == 2 * CHUNK, "a slice is two chunks");
    const unsigned a_off = permuted_chunk(warp_m + a_row, a_chunk) * sizeof(uint4);
    const unsigned b_off = permuted_chunk(warp_n + b_row, b_chunk) * sizeof(uint4);
    constexpr unsigned A_TILE_BYTES = MMA_M * CHUNKS * sizeof(uint4);        // 16 rows down
    constexpr unsigned B_PAIR_BYTES = 2 * MMA_N * CHUNKS * sizeof(uint4);    // 16 rows down
    auto load_fragments = [&](unsigned (&fa)[TILES_M][4], unsigned (&fb)[TILES_N][2], int kt, int ks) {
        const int stage = kt % N_STAGES;
        const unsigned pa = as0 + stage * A_STAGE * sizeof(uint4) + (a_off ^ (ks << 5));
        const unsigned pb = bs0 + stage * B_STAGE * sizeof(uint4) + (b_off ^ (ks << 5));
        for (int tm = 0; tm < TILES_M; ++tm)
            ldmatrix_x4(fa[tm], pa + tm * A_TILE_BYTES);
        for (int tn = 0; tn < TILES_N; tn += 2)
            ldmatrix_x4_pair(fb[tn], fb[tn + 1], pb + tn / 2 * B_PAIR_BYTES);
    };

    for (int t = 0; t < N_STAGES - 1; ++t) load_tile(t);
    wait_tile(0);
    load_fragments(a[0], b[0], 0, 0);

    for (int kt = 0; kt < k_tiles; ++kt) {
#pragma unroll
        for (int ks = 0; ks < K_STEPS; ++ks) {
            // Copies into stage (kt - 1) % N_STAGES, once every warp has released tile kt - 1 (BLOCK_SYNC:
            // free since the barrier at the end of tile kt - 1).
            if (ks == 0) load_tile(kt + N_STAGES - 1);
            const int cur = ks % 2, next = (ks + 1) % 2;
            if (ks + 1 < K_STEPS) {
                load_fragments(a[next], b[next], kt, ks + 1);
            } else if (kt + 1 < k_tiles) {
                // Every slice of tile kt is in this warp's registers: it releases the stage (one arrival
                // per warp, after all its lanes' reads), then waits for tile kt + 1 to land.
                if (BLOCK_SYNC) {
                    wait_tile(kt + 1);
                    __syncthreads();
                } else {
                    __syncwarp();
                    if (lane == 0) mbarrier_arrive_once(empty0 + (kt % N_STAGES) * sizeof(unsigned long long));
                    wait_tile(kt + 1);
                }
                load_fragments(a[next], b[next], kt + 1, 0);
            }
            for (int tm = 0; tm < TILES_M; ++tm)
                for (int tn = 0; tn < TILES_N; ++tn)
                    mma_m16n8k16_f32(acc[tm][tn], a[cur][tm], b[cur][tn], acc[tm][tn]);
        }
    }

    for (int tm = 0; tm < TILES_M; ++tm)
        for (int tn = 0; tn < TILES_N; ++tn)
            for (int h = 0; h < 2; ++h) {       // rows group and group + 8
                const int row = tm * MMA_M + group + 8 * h;
                const int col = tn * MMA_N + 2 * tig;
                *reinterpret_cast<float2 *>(&C[(block_m + warp_m + row) * N + block_n + warp_n + col]) =
                    make_float2(acc[tm][tn][2 * h], acc[tm][tn][2 * h + 1]);
            }
}
