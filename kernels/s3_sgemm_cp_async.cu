// Kernel S3: Kernel S2 with the global -> shared copies made by cp.async, which Maxwell did not
// have: the next K tile goes straight into the other shared buffer while this one is computed, so
// the staging registers and their STS are gone and the copy needs no thread to wait for it until
// the barrier. Each thread still owns an 8 x 8 set of C: four 4 x 4 blocks
// HALF apart in m and n. Per k it reads 8 floats of A and 8 of B with four 128-bit shared loads and
// issues 64 FFMA (an outer product), while the next k's 8 + 8 floats load into a second set of
// registers. One barrier per K tile. C leaves through shared memory so that each warp stores whole rows.
// A: M x K column-major, B: K x N row-major, C: M x N row-major. M, N multiples of TILE; K of BK.
#include "ptx.cuh"

constexpr int TILE = 128;                // C tile per block (TILE x TILE)
constexpr int THREADS = TILE * TILE / 64;
constexpr int MIN_BLOCKS = 2;            // __launch_bounds__: ask for 128 registers or fewer
constexpr int BK = 8;                    // K per shared-memory tile
constexpr int HALF = TILE / 2;           // the four 4 x 4 blocks of a thread are HALF apart
constexpr int GROUPS = TILE / 8;         // groups of 4 rows (or columns) in a half
constexpr int WARPS_N = TILE / 32;
constexpr int LOADERS = THREADS / 2;     // the first half of the block loads A, the second B
constexpr int VEC_PER_ROW = TILE / 4;    // float4 per stripe row
constexpr int ROWS_STEP = LOADERS / VEC_PER_ROW;
constexpr int LOADS = BK / ROWS_STEP;    // float4 loads per thread per K tile
constexpr int STAGE_PITCH = TILE + 8;    // padded staging row: 128-bit stores without bank conflicts
constexpr int STAGE_ROWS = TILE / 4;     // C rows staged per pass (row p of every 4 x 4 block)
constexpr int STORES = STAGE_ROWS * VEC_PER_ROW / THREADS;
static_assert(LOADS * ROWS_STEP == BK && STORES * THREADS == STAGE_ROWS * VEC_PER_ROW, "whole sweeps");

struct Tiles {
    float a[BK][TILE];                   // As[k][m]
    float b[BK][TILE];                   // Bs[k][n]
};
constexpr int BUFFER = sizeof(Tiles) / 4;      // floats per shared buffer
constexpr int SMEM_FLOATS = 2 * BUFFER > STAGE_ROWS * STAGE_PITCH ? 2 * BUFFER : STAGE_ROWS * STAGE_PITCH;

__device__ __forceinline__ float4 load4(const float *p) { return *reinterpret_cast<const float4 *>(p); }
__device__ __forceinline__ void store4(float *p, float4 v) { *reinterpret_cast<float4 *>(p) = v; }
__device__ __forceinline__ float at(const float4 (&v)[2], int i) {
    const float4 &h = v[i >> 2];
    const int e = i & 3;
    return e == 0 ? h.x : e == 1 ? h.y : e == 2 ? h.z : h.w;
}

struct Fragments {
    float4 a[2];                         // A rows ra..ra+3 and ra+HALF..ra+HALF+3 at one k
    float4 b[2];                         // B cols rb..rb+3 and rb+HALF..rb+HALF+3
};

__device__ __forceinline__ void read_fragments(Fragments &f, const Tiles &t, int k, int ra, int rb) {
    f.a[0] = load4(&t.a[k][ra]);
    f.a[1] = load4(&t.a[k][ra + HALF]);
    f.b[0] = load4(&t.b[k][rb]);
    f.b[1] = load4(&t.b[k][rb + HALF]);
}

__device__ __forceinline__ void outer_product(float (&acc)[8][8], const Fragments &f) {
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = fmaf(at(f.a, i), at(f.b, j), acc[i][j]);
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_cp_async(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int M, int N, int K)
{
    __shared__ __align__(16) float smem[SMEM_FLOATS];   // two Tiles buffers, later the C staging
    Tiles *tiles = reinterpret_cast<Tiles *>(smem);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;

    // Which 8 floats of A and of B this thread reads (and so which 8 x 8 of C it owns).
    const int gm = (warp / WARPS_N) * 8 + ((lane >> 1) & 7);
    const int gn = (warp % WARPS_N) * 4 + ((lane >> 4) & 1) * 2 + (lane & 1);
    const int ra = 4 * gm, rb = 4 * gn;

    // What it copies: LOADS float4 of the A stripe (first half of the block) or of the B stripe.
    const bool loads_a = tid < LOADERS;
    const int li = tid % LOADERS;
    const int col = 4 * (li % VEC_PER_ROW), k_first = li / VEC_PER_ROW;
    const int ld = loads_a ? M : N;
    const float *src = (loads_a ? A + m0 : B + n0) + (size_t)k_first * ld + col;
    const int dst = (loads_a ? 0 : BK * TILE) + k_first * TILE + col;   // float offset in a Tiles

    auto copy_tile = [&](Tiles &t, int k0) {
        float *base = reinterpret_cast<float *>(&t) + dst;
#pragma unroll
        for (int j = 0; j < LOADS; ++j)
            cp_async_16((unsigned)__cvta_generic_to_shared(base + j * ROWS_STEP * TILE),
                        src + (size_t)(k0 + j * ROWS_STEP) * ld);
        cp_async_commit();
    };

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

    copy_tile(tiles[0], 0);
    cp_async_wait<0>();
    __syncthreads();
    Fragments frag[2];
    read_fragments(frag[0], tiles[0], 0, ra, rb);

    const int k_tiles = K / BK;
    for (int kt = 0; kt < k_tiles; ++kt) {
        const Tiles &now = tiles[kt & 1];
        const bool more = kt + 1 < k_tiles;
        if (more) copy_tile(tiles[(kt + 1) & 1], (kt + 1) * BK);
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            if (k < BK - 1) {
                read_fragments(frag[(k + 1) & 1], now, k + 1, ra, rb);
            } else if (more) {
                cp_async_wait<0>();
                __syncthreads();
                read_fragments(frag[0], tiles[(kt + 1) & 1], 0, ra, rb);
            }
            outer_product(acc, frag[k & 1]);
        }
    }

    // C through shared memory, in 4 passes: pass p stages row p of every 4 x 4 block.
    float *stage = smem;
    for (int p = 0; p < 4; ++p) {
        __syncthreads();                 // the tiles (or the previous pass) are no longer read
#pragma unroll
        for (int hm = 0; hm < 2; ++hm)
#pragma unroll
            for (int hn = 0; hn < 2; ++hn) {
                const float *row = acc[4 * hm + p] + 4 * hn;
                store4(stage + (gm + GROUPS * hm) * STAGE_PITCH + rb + HALF * hn,
                       make_float4(row[0], row[1], row[2], row[3]));
            }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < STORES; ++j) {
            const int q = tid + j * THREADS;
            const int s = q / VEC_PER_ROW, c = 4 * (q % VEC_PER_ROW);
            const int m = 4 * (s % GROUPS) + p + HALF * (s / GROUPS);
            store4(C + (size_t)(m0 + m) * N + n0 + c, load4(stage + s * STAGE_PITCH + c));
        }
    }
}
