// Kernel 5.12: Kernel 5.11 with the last wave's tiles shared out along K (stream-K). A persistent kernel
// runs its tiles in waves of one per cluster; 3072 x 3072 is 144 tile pairs, 2.18 waves of 66 clusters, so
// the third wave keeps 12 clusters busy and 54 idle. Here the tiles that do not fill a whole wave, and one
// wave more, are cut along K into equal runs of K steps, one run per cluster, each run crossing from tile to
// tile. A piece of a tile that is not the whole of it writes its fp32 sum to a slot in global memory and
// counts itself in at its tile's counter; the piece that comes last adds the others' slots and its own
// sum, always in the order of K, and stores C; the tile's first piece, which usually finishes last, keeps
// its sum in registers where the others are in. No block waits for another, so the kernel cannot hang if
// some clusters run late, and the result is the same in every run. Everything else is Kernel 5.11's.
#include "ptx.cuh"
#include "wgmma.cuh"
#include "trace.cuh"

#ifndef N_STAGES
#define N_STAGES 4
#endif
#ifndef BK
#define BK 64                                        // fp16 = 128 bytes: one swizzle row
#endif
static_assert(BK == 64, "a tile row is one row of the 128-byte swizzle");
#ifndef SKIP_STORE
#define SKIP_STORE 0                                 // 1: C is not stored (a measurement only, see below)
#endif
#ifndef HALF_STORE
#define HALF_STORE 0                                 // 1: only odd clusters store C (a measurement only)
#endif
#ifndef SKIP_FIXUP
#define SKIP_FIXUP 0                                 // 1: pieces are not added up (a measurement only)
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef BF16
#define BF16 0                                       // 1: A and B (and a 16-bit C) are bf16 instead of f16
#endif
#ifndef C_BITS
#define C_BITS 16                                    // 16: C in the inputs' type; 32: C in fp32
#endif
#ifndef A_COL_MAJOR
#define A_COL_MAJOR 0
#endif
#ifndef B_COL_MAJOR
#define B_COL_MAJOR 1
#endif

#ifndef BN
#define BN 256                                       // the tile's columns: 256, 192, 128 or 64
#endif
static_assert(BN == 256 || BN == 192 || BN == 128 || BN == 64, "wgmma.cuh has m64n256, n192, n128 and n64");
constexpr int BM = 128;                              // the tile's rows
constexpr int A_TILE = BM * BK * 2, B_TILE = BN * BK * 2, STAGE_BYTES = A_TILE + B_TILE;
constexpr int WG_ROWS = 64;                          // rows of the tile per warpgroup (wgmma's M)
constexpr int BOX_MN = 64, BOX_BYTES = BOX_MN * BK * 2;    // an MN-major box: 64 M or N by BK rows of K
constexpr bool A_MN = A_COL_MAJOR, B_MN = !B_COL_MAJOR;   // MN-major operands, read transposed
constexpr bool B_HALVES = !B_MN || BN / 2 % BOX_MN == 0;  // each block copies half of B's tile
// Per k16 step the operand's start moves 16 elements along its 128-byte rows (K-major) or 16 rows down.
constexpr unsigned A_STEP = A_MN ? 16 * 128 : 32, B_STEP = B_MN ? 16 * 128 : 32;
constexpr unsigned A_LBO = A_MN ? BOX_BYTES : 16, B_LBO = B_MN ? BOX_BYTES : 16;
#if C_BITS == 16
typedef unsigned short c_t;                          // C's bits
#else
typedef float c_t;
#endif
constexpr int C_BOX_COLS = 128 / sizeof(c_t), C_BOX_BYTES = WG_ROWS * 128;   // one TMA box of C: 128-byte rows
constexpr int C_BUFFERS = 2;                                                // boxes per consumer warpgroup

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Two accumulators of adjacent columns as 16-bit values rounded to nearest even, the first column's in
// the low half (the lower address).
__device__ __forceinline__ unsigned pack_pair(float first, float second) {
    unsigned packed;
#if BF16
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(second), "f"(first));
#else
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(second), "f"(first));
#endif
    return packed;
}

// C's elements x0 and x1 at p and p + 1 (x1 only where `both`): one 32-bit or 64-bit store where `pair`.
__device__ __forceinline__ void store_pair(c_t *p, float x0, float x1, bool pair, bool both) {
#if C_BITS == 16
    const unsigned packed = pack_pair(x0, x1);
    if (pair) *reinterpret_cast<unsigned *>(p) = packed;
    else { p[0] = static_cast<c_t>(packed & 0xFFFF); if (both) p[1] = static_cast<c_t>(packed >> 16); }
#else
    if (pair) *reinterpret_cast<float2 *>(p) = make_float2(x0, x1);
    else { p[0] = x0; if (both) p[1] = x1; }
#endif
}

__device__ __forceinline__ void store_tile(float (&d)[BN / 2], c_t *C, int row0, int col0, int M, int N) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    // A pair is one store where every row starts at a multiple of its size, as C itself does.
    const bool pairs = N % 2 == 0 && reinterpret_cast<unsigned long long>(C) % (2 * sizeof(c_t)) == 0;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = row0 + 16 * warp + lane / 4 + 8 * h, col = col0 + 8 * j + 2 * (lane % 4);
            if (row >= M || col >= N) continue;
            store_pair(&C[static_cast<long long>(row) * N + col], d[4 * j + 2 * h], d[4 * j + 2 * h + 1],
                       pairs, col + 1 < N);
        }
}

// The warpgroup's tile, box by box through its C_BUFFERS buffers (`buffers`: 1024-byte aligned);
// warpgroup `c` of the consumers syncs on named barrier 1 + c. A buffer is refilled once the store
// C_BUFFERS boxes back has read it. `boxes` counts the warpgroup's boxes on from tile to tile: a tile of
// one box (64 columns of 16-bit C) takes the other buffer from the tile before, whose store may be reading.
__device__ __forceinline__ void store_tile_tma(float (&d)[BN / 2], const TensorMap *map_c, unsigned buffers, int row0,
                                               int col0, int c, unsigned &boxes) {
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
#pragma unroll
    for (int box = 0; box < BN / C_BOX_COLS; ++box) {
        const unsigned buffer = buffers + boxes++ % C_BUFFERS * C_BOX_BYTES;
        if (t == 0) bulk_wait_group_read<C_BUFFERS - 1>();
        named_barrier_sync(1 + c, 128);
#pragma unroll
        for (int j = 0; j < C_BOX_COLS / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {      // row r, 16-byte chunk q of its 128: stored at chunk q ^ (r % 8)
                const int r = 16 * warp + lane / 4 + 8 * h, i = 4 * (C_BOX_COLS / 8 * box + j) + 2 * h;
#if C_BITS == 16
                // 16-bit: chunk j holds the 8 columns 8j..8j+7, the pair is its 4-byte word lane % 4
                st_shared_b32(buffer + r * 128 + (j ^ r % 8) * 16 + lane % 4 * 4, pack_pair(d[i], d[i + 1]));
#else
                const int q = 2 * j + lane % 4 / 2;
                st_shared_f32x2(buffer + r * 128 + (q ^ r % 8) * 16 + lane % 2 * 8, d[i], d[i + 1]);
#endif
            }
        fence_proxy_async_shared();             // the writes, visible to TMA
        named_barrier_sync(1 + c, 128);
        if (t == 0) {
            tma_store_2d(map_c, buffer, col0 + box * C_BOX_COLS, row0);
            bulk_commit_group();
        }
    }
}

// Output tile pair `tile` (in units of two tile rows) in grouped order: down GROUP_M pair rows, then the
// next column of tiles.
__device__ __forceinline__ void tile_origin(int tile, int tiles_m, int tiles_n, int &m0, int &n0) {
    const int group = tile / (GROUP_M * tiles_n), first = group * GROUP_M;
    const int rows = min(GROUP_M, tiles_m - first);
    m0 = (first + tile % (GROUP_M * tiles_n) % rows) * BM;   // the pair's first row / 2
    n0 = tile % (GROUP_M * tiles_n) / rows * BN;
}

// K steps [k0, k1) of tile pair `tile`: the whole tile where k0 = 0 and k1 = k_tiles.
struct Piece {
    int tile, k0, k1;
};

// The stream-K tiles are the last sk_tiles; their steps, sk_steps in all, one after another, are cut into
// `runs` runs, run r from step run_start(r) to run_start(r + 1).
__device__ __forceinline__ long long run_start(int r, long long sk_steps, int runs) {
    return r * sk_steps / runs;
}

// Cluster q's work: its whole tiles (q, q + clusters, ... of the first dp_tiles), then its run [a, b).
struct Work {
    int dp_tiles, whole, k_tiles;
    long long a, b;
};

__device__ __forceinline__ Work work_of(int q, int clusters, int tiles, int sk_tiles, int runs, int k_tiles) {
    const int dp_tiles = tiles - sk_tiles;
    const long long sk_steps = static_cast<long long>(sk_tiles) * k_tiles;
    const bool has_run = q < runs;
    return {dp_tiles, q < dp_tiles ? (dp_tiles - 1 - q) / clusters + 1 : 0, k_tiles,
            has_run ? run_start(q, sk_steps, runs) : 0, has_run ? run_start(q + 1, sk_steps, runs) : 0};
}

// Piece u of the work: a whole tile, or the part of tile t its run covers. False past the last.
__device__ __forceinline__ bool piece(const Work &w, int u, int q, int clusters, Piece &p) {
    if (u < w.whole) {
        p = {q + u * clusters, 0, w.k_tiles};
        return true;
    }
    const long long t = w.a / w.k_tiles + (u - w.whole);
    const long long lo = max(w.a, t * w.k_tiles), hi = min(w.b, (t + 1) * w.k_tiles);
    if (lo >= hi) return false;
    p = {w.dp_tiles + static_cast<int>(t), static_cast<int>(lo - t * w.k_tiles), static_cast<int>(hi - t * w.k_tiles)};
    return true;
}

// The slot of consumer c of block `rank` for run r's piece: its run's first, or the one that ends it.
// 64 x BN fp32, stored as float4 j of thread i at 128 j + i.
__device__ __forceinline__ float4 *slot(float *partials, int r, bool first, int rank, int c) {
    return reinterpret_cast<float4 *>(partials) + (((r * 2 + !first) * 2 + rank) * 2 + c) * (WG_ROWS * BN / 4);
}

// The runs that have a piece of stream-K tile t (steps tk to tk + k_tiles), in the order of K: from the
// last run starting at or before tk, those not empty and starting before tk + k_tiles. f(r, first) for each.
template <typename F>
__device__ __forceinline__ void for_each_piece(long long tk, int k_tiles, long long sk_steps, int runs, F f) {
    for (int r = static_cast<int>(((tk + 1) * runs - 1) / sk_steps); r < runs; ++r) {
        const long long a = run_start(r, sk_steps, runs);
        if (a >= tk + k_tiles) break;
        if (a < run_start(r + 1, sk_steps, runs)) f(r, a >= tk);
    }
}

// A piece of a stream-K tile; true where it is the tile's last to finish, and then d holds the tile's sum:
// the pieces added in the order of K, from the first's (k0 = 0, `head`), whichever finished last. The first
// piece looks at the tile's counter before it writes: where every other piece has counted itself in, its
// own sum is the start of the total and needs no slot. Otherwise a piece writes its sum to its slot and
// counts itself in. `word` is this consumer's word of shared memory; the last piece sets the counter back
// to zero.
__device__ __forceinline__ bool add_pieces(float (&d)[BN / 2], float *partials, unsigned *counts, volatile int *word,
                                           int q, long long tk, int t, int k_tiles, long long sk_steps, int runs,
                                           bool head, bool first, int rank, int c) {
    const int i = threadIdx.x % 128;
    unsigned *count = counts + (t * 2 + rank) * 2 + c;
    int pieces = 0;
    if (i == 0) for_each_piece(tk, k_tiles, sk_steps, runs, [&](int, bool) { ++pieces; });
    named_barrier_sync(1 + c, 128);                  // the word's last reading is done
    if (i == 0) *word = head && load_acquire(count) == pieces - 1;
    named_barrier_sync(1 + c, 128);
    const bool own_in_registers = *word;
    if (!own_in_registers) {
        float4 *mine = slot(partials, q, first, rank, c) + i;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
            __stcg(mine + 128 * j, make_float4(d[4 * j], d[4 * j + 1], d[4 * j + 2], d[4 * j + 3]));
        named_barrier_sync(1 + c, 128);              // every thread's sum written before the count
        if (i == 0) *word = atomic_add_acq_rel(count, 1) == pieces - 1;
        named_barrier_sync(1 + c, 128);
        if (!*word) return false;
    }
    if (i == 0) *count = 0;
    if (!own_in_registers)
#pragma unroll
        for (int j = 0; j < BN / 2; ++j) d[j] = -0.f;       // x + -0 is x, for every x
    bool skip = own_in_registers;
    for_each_piece(tk, k_tiles, sk_steps, runs, [&](int r, bool first_of_run) {
        if (skip) {
            skip = false;
            return;
        }
        const float4 *src = slot(partials, r, first_of_run, rank, c) + i;
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
            const float4 v = __ldcg(src + 128 * j);
            d[4 * j] += v.x, d[4 * j + 1] += v.y, d[4 * j + 2] += v.z, d[4 * j + 3] += v.w;
        }
    });
    return true;
}
#endif

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
stream_k(const __grid_constant__ TensorMap map_a, const __grid_constant__ TensorMap map_b,
         const __grid_constant__ TensorMap map_c, c_t *C, int M, int N, int K, float *partials, unsigned *counts,
         int sk_tiles, int runs) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ unsigned char smem[];
    const unsigned base = (smem_u32(smem) + 1023) & ~1023u;     // swizzled stages start 1024-aligned
    __shared__ unsigned long long full_bars[N_STAGES], empty_bars[N_STAGES];   // stage s filled / free
    const unsigned full = smem_u32(full_bars), empty = smem_u32(empty_bars);
    const int wg = threadIdx.x / 128;
    const unsigned rank = cluster_rank();
    const int pairs_m = (M + 2 * BM - 1) / (2 * BM), tiles_n = (N + BN - 1) / BN, tiles = pairs_m * tiles_n;
    const int k_tiles = (K + BK - 1) / BK;
    const int q = blockIdx.x / 2, clusters = gridDim.x / 2;
    const Work work = work_of(q, clusters, tiles, sk_tiles, runs, k_tiles);

    // Copy K tile kt of output tile (m0, n0) into the stage of ring step `step`.
    // An MN-major operand's map has K as its rows: one box per 64 of the tile's M or N.
    auto load = [&](int step, int kt, int m0, int n0) {
        const unsigned s = step % N_STAGES, dst = base + s * STAGE_BYTES, bar = full + 8 * s;
        mbarrier_arrive_expect_tx(bar, STAGE_BYTES);
        if (A_MN)
            for (int j = 0; j < BM / BOX_MN; ++j) tma_load_2d(dst + j * BOX_BYTES, &map_a, bar, m0 + j * BOX_MN, kt * BK);
        else
            tma_load_2d(dst, &map_a, bar, kt * BK, m0);
        if (!B_HALVES) {                            // an MN-major B of 64 or 192 columns: its boxes in turn
            for (int j = rank; j < BN / BOX_MN; j += 2)
                tma_load_2d_multicast(dst + A_TILE + j * BOX_BYTES, &map_b, bar, n0 + j * BOX_MN, kt * BK, 0b11);
            return;
        }
        const unsigned b = dst + A_TILE + rank * B_TILE / 2;
        const int b0 = n0 + rank * BN / 2;
        if (B_MN)
            for (int j = 0; j < BN / 2 / BOX_MN; ++j)
                tma_load_2d_multicast(b + j * BOX_BYTES, &map_b, bar, b0 + j * BOX_MN, kt * BK, 0b11);
        else
            tma_load_2d_multicast(b, &map_b, bar, kt * BK, b0, 0b11);
    };
    if (threadIdx.x == 0) {
        for (int s = 0; s < N_STAGES; ++s) {
            mbarrier_init(full + 8 * s, 1);
            mbarrier_init(empty + 8 * s, 4);       // one arrival per consumer warpgroup of either block
        }
        fence_barrier_init();
    }
    cluster_sync();                                 // both blocks' barriers exist before any copy names them
    trace_start();

    if (wg == 0) {                                  // the producer
        setmaxnreg_dec<40>();
        Piece p;
        if (threadIdx.x == 0)
            for (int u = 0, step = 0; piece(work, u, q, clusters, p); ++u) {
                int m0, n0;
                tile_origin(p.tile, pairs_m, tiles_n, m0, n0);
                m0 = m0 * 2 + rank * BM;
                for (int kt = p.k0; kt < p.k1; ++kt, ++step) {
                    if (step >= N_STAGES) mbarrier_wait(empty + 8 * (step % N_STAGES), (step / N_STAGES - 1) % 2);
                    load(step, kt, m0, n0);
                }
            }
    } else {
        setmaxnreg_inc<232>();
        auto release = [&](unsigned bar) {             // this stage, in both blocks of the cluster
            mbarrier_arrive_cluster(cluster_address(bar, 0));
            mbarrier_arrive_cluster(cluster_address(bar, 1));
        };
        const int c = wg - 1;                           // consumer 0 or 1
        __shared__ int word[2];                        // each consumer's, for add_pieces
        const long long sk_steps = static_cast<long long>(sk_tiles) * k_tiles;
        float d[BN / 2] = {};
        unsigned boxes = 0;                             // boxes of C this warpgroup has stored
        Piece p;
        for (int u = 0, step = 0; piece(work, u, q, clusters, p); ++u) {
            int m0, n0;
            tile_origin(p.tile, pairs_m, tiles_n, m0, n0);
            m0 = m0 * 2 + rank * BM;
            for (int kt = p.k0; kt < p.k1; ++kt, ++step) {
                const unsigned s = step % N_STAGES, parity = (step / N_STAGES) % 2;
                mbarrier_wait(full + 8 * s, parity);
                if (kt == p.k0) trace_tile(u, STAGE_ARRIVED);
                const unsigned a = base + s * STAGE_BYTES + c * WG_ROWS * 128, b = base + s * STAGE_BYTES + A_TILE;
                wgmma_fence();
#pragma unroll
                for (int k = 0; k < BK / 16; ++k)  // a piece's first wgmma overwrites D instead of adding
                    wgmma_m64nNk16_f32_ss<BN, A_MN, B_MN, BF16>(d, descriptor_sw128(a + A_STEP * k, A_LBO),
                                                                descriptor_sw128(b + B_STEP * k, B_LBO), kt > p.k0 || k > 0);
                wgmma_commit_group();
                wgmma_wait_group<1>();
                if (kt > p.k0 && threadIdx.x % 128 == 0) release(empty + 8 * ((step - 1) % N_STAGES));
            }
            wgmma_wait_group<0>();                  // the tile's last stage is free, and D complete
            if (threadIdx.x % 128 == 0) release(empty + 8 * ((step - 1) % N_STAGES));
            wgmma_fence_operands(d);
            trace_tile(u, MAIN_LOOP_DONE);
            if (SKIP_FIXUP && p.k0 > 0) continue;    // the measurement: each tile's first piece stores C
            if (!SKIP_FIXUP && (p.k0 > 0 || p.k1 < k_tiles)) {   // a piece of a stream-K tile
                const int t = p.tile - (tiles - sk_tiles);
                const long long tk = static_cast<long long>(t) * k_tiles;
                if (!add_pieces(d, partials, counts, &word[c], q, tk, t, k_tiles, sk_steps, runs, p.k0 == 0,
                                work.a == tk + p.k0, rank, c))
                    continue;
            }
            // The measurements SKIP_STORE and HALF_STORE keep the main loop's work: d is never NaN here.
            const bool store = !(SKIP_STORE || (HALF_STORE && blockIdx.x / 2 % 2 == 0)) || isnan(d[0]);
            if (store && N * sizeof(c_t) % 16 == 0)   // TMA addresses rows 16-byte aligned
                store_tile_tma(d, &map_c, base + N_STAGES * STAGE_BYTES + c * C_BUFFERS * C_BOX_BYTES, m0 + c * WG_ROWS, n0, c, boxes);
            else if (store)
                store_tile(d, C, m0 + c * WG_ROWS, n0, M, N);
            trace_tile(u, STORE_ISSUED);
        }
    }
    if (wg > 0 && threadIdx.x % 128 == 0) bulk_wait_group_read<0>();   // the buffers outlive the stores
    trace_end();
    cluster_sync();                                 // no block leaves while the other may still signal it
#endif
}
