"""The kernels of the book, as data: where each lives, how it is launched, what it accepts.

Pure module: the launcher (tcgemm.engine.gpu), the SASS tests and the bench all read these tables
(GEMM_KERNELS, WMMA_KERNELS, PROBES, ELEMENTS, WMMA_CASES), whose entries are the types of
tcgemm.engine.kernel_types (which says the operand conventions, the signatures and the schedules). A kernel's
configuration on a target architecture of tcgemm.arch is `configured`'s: the first of its `configs`
that fits the shared memory one block may use there.
"""
from __future__ import annotations

from tcgemm.arch import TARGET_ARCHS, arch_limits, arch_specific_target
from tcgemm.fragment_layouts import MMA_VARIANTS, variant_identifier
from tcgemm.engine.kernel_types import Element, GemmKernel, ProbeKernel, Schedule, Signature, WmmaKernel


# sm_90 has no fp8 mma.sync instruction: ptxas converts each fragment to fp16 (F2FP) and runs HMMA.16816.F32
# from a zero accumulator, adding C after (book/data_types.ipynb), which needs registers: Kernel D1's 64 x 64
# warp tiles spill there (and the 32 x 64 ones a few), its 32 x 32 ones do not.
FP8_WARP_TILE_LIMITS = (("sm_90", 32 * 32),)


ELEMENTS = {e.name: e for e in (
    Element("fp16", 0, "m16n8k16.f32", "float16", "float32"),
    Element("bf16", 1, "m16n8k16.bf16.f32", "uint16", "float32"),
    Element("tf32", 2, "m16n8k8.tf32.f32", "float32", "float32"),
    Element("int8", 3, "m16n8k32.s32", "int8", "int32"),
    Element("e4m3", 4, "m16n8k32.e4m3.f32", "uint8", "float32", FP8_WARP_TILE_LIMITS),
    Element("e5m2", 5, "m16n8k32.e5m2.f32", "uint8", "float32", FP8_WARP_TILE_LIMITS),
)}


# The blocks other than kernel_types.FLAT_BLOCK's 256 threads in a row: the first kernels' 16 x 16 threads,
# Hopper's producer warpgroup beside two consumer warpgroups (Kernel 5.2 on).
SQUARE_BLOCK = (16, 16, 1)
WARPGROUPS_BLOCK = (384, 1, 1)
# What the cp.async kernels of 128 x 256 tiles (4.0 on) and those of 128 x 128 with stages in dynamic shared
# memory (3.4 on) compile to; the SGEMM kernels' loads, shared-memory traffic and stores.
CP_ASYNC_SASS = ("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64")
SGEMM_SASS = ("FFMA", "LDS.128", "LDG.E.128", "STS.128", "STG.E.128")
# (tile_k, stages) of the 128 x 256 kernels, fastest first on the H100: 192 KB fits sm_90 only,
# 144 KB fits sm_80 too, 96 KB fits every target (sm_86 and sm_89 allow 99 KB per block).
BIG_TILE_CONFIGS = ((64, 4), (64, 3), (32, 4))
# Kernels 4.0 to 5.0, A1 and D1: 128 x 256 tiles of 8 warps, each with a 64 x 64 warp tile, 4 stages of
# tile_k = 32 by default in dynamic shared memory; those whose tile is planned (4.6, 4.7, D1) add _PLANNED.
_BIG_TILE = dict(tile_m=128, tile_n=256, tile_k=32, stages=4, dynamic_smem=True, configs=BIG_TILE_CONFIGS,
                 sass=CP_ASYNC_SASS)
_PLANNED = dict(any_shape=True, warps=(2, 4), planned=True)
WGMMA_CONFIGS = ((64, 4), (64, 3))   # (tile_k, stages) of Kernels 5.1-5.5: a tile row is one 128-byte swizzle row

# Kernels 5.1-5.5: TMA copies into the 128-byte swizzle and wgmma m64n256k16 from shared memory, 128 x 256
# tiles, built for sm_90a (book/hopper.ipynb). WGMMA_SASS: what every one of them compiles to; TMA_WGMMA_SASS:
# all of it but the HGMMA's shape, which Kernel 5.8's smaller tiles change.
TMA_WGMMA_SASS = ("UTMALDG.2D", "SYNCS.PHASECHK.TRANS64", "WARPGROUP.DEPBAR.LE")
WGMMA_SASS = ("HGMMA.64x256x16.F32",) + TMA_WGMMA_SASS
_HOPPER = dict(tile_m=128, tile_n=256, tile_k=64, stages=4, dynamic_smem=True, configs=WGMMA_CONFIGS,
               signature=Signature.TENSOR_MAPS, archs=("sm_90",), arch_specific=True)
# Kernels 5.2 on: a producer warpgroup beside two consumers; 5.5 on persistent clusters of two; 5.6 on store
# C by TMA, and take its switches.
_WARPGROUPS = dict(_HOPPER, base_block=WARPGROUPS_BLOCK)
_CLUSTERS = dict(_WARPGROUPS, any_shape=True, schedule=Schedule.CLUSTERS)
# Kernel 5.8: each consumer warpgroup its own 128 x 128 tile, two wgmma m64n128k16 per k16 step; a stage of
# 32 KB, so 6 fit in 227 KB beside the buffers of C (7 would not).
PING_PONG_CONFIGS = ((64, 6), (64, 5))
# The measurement switches of Kernels 5.6 to 5.8: the main loop without the stores of C, or with half of
# them; the tile timeline of tcgemm.hopper.gpu.timeline (kernels/trace.cuh).
STORE_SWITCH = ("SKIP_STORE", "C is not stored (wrong result: a measurement only)")
HALF_STORE_SWITCH = ("HALF_STORE", "only the blocks of odd clusters store C (wrong result: a measurement only)")
TRACE_SWITCH = ("TRACE", "one thread per block stamps the global timer and its SM's clock counter at each "
                "tile's boundaries (tcgemm.hopper.gpu.timeline)")
TILE_SWITCHES = (STORE_SWITCH, HALF_STORE_SWITCH, TRACE_SWITCH)
FIXUP_SWITCH = ("SKIP_FIXUP", "the pieces of a split tile are not added up; each tile's first stores C "
                "(wrong result: a measurement only)")
_TMA_STORE = dict(_CLUSTERS, signature=Signature.TENSOR_MAPS_AND_C, switches=TILE_SWITCHES)
# Kernel 5.9's (in_dtype, out_dtype) pairs, its default first: C in the inputs' 16-bit type, or in fp32.
HOPPER_DTYPES = (("float16", "float16"), ("bfloat16", "bfloat16"), ("float16", "float32"), ("bfloat16", "float32"))
# Kernel 5.11's tile widths (tile_n) and the stages each runs with, its default first: a narrower stage
# leaves room for more in the 192 KB the 128 x 256 tiles' 4 stages take.
TILE_WIDTHS = ((256, 4), (192, 4), (128, 6), (64, 8))
# Kernel 5.14's: 5.11's and 32 columns (9 stages of 20 KB), and the cluster shapes (blocks along M, along N).
NARROW_TILE_WIDTHS = TILE_WIDTHS + ((32, 9),)
CLUSTER_SHAPES = ((2, 2), (2, 1), (1, 2))
# Kernel 5.15's 64-row tiles: the stages of each width within 5.14's shared memory (16 of 12 KB at 32 wide).
ROW_TILE_WIDTHS = ((256, 4), (192, 6), (128, 8), (64, 12), (32, 16))
ONE_CONSUMER_BLOCK = (256, 1, 1)     # a producer warpgroup and one consumer
HOPPER_KERNELS = (
    GemmKernel(key="k5.1", title="Kernel 5.1: TMA and wgmma", entry="wgmma_tiles",
               sass=WGMMA_SASS + ("STG.E.64",), **_HOPPER),
    GemmKernel(key="k5.2", title="Kernel 5.2: a producer warpgroup", entry="warp_specialised",
               sass=WGMMA_SASS + ("USETMAXREG.DEALLOC.CTAPOOL",), **_WARPGROUPS),
    GemmKernel(key="k5.3", title="Kernel 5.3: one wgmma group in flight", entry="one_group_in_flight",
               sass=WGMMA_SASS + ("USETMAXREG.DEALLOC.CTAPOOL",), **_WARPGROUPS),
    GemmKernel(key="k5.4", title="Kernel 5.4: persistent, any shape", entry="persistent",
               any_shape=True, schedule=Schedule.PERSISTENT, sass=WGMMA_SASS + ("USETMAXREG.DEALLOC.CTAPOOL",),
               **_WARPGROUPS),
    GemmKernel(key="k5.5", title="Kernel 5.5: clusters of two, B multicast", entry="cluster_multicast",
               sass=WGMMA_SASS + ("UTMALDG.2D.MULTICAST", "UCGABAR_ARV"), **_CLUSTERS),
    GemmKernel(key="k5.6", title="Kernel 5.6: C stored by TMA", entry="tma_store",
               sass=WGMMA_SASS + ("UTMALDG.2D.MULTICAST", "UTMASTG.2D", "STS.64"), **_TMA_STORE),
    GemmKernel(key="k5.7", title="Kernel 5.7: A and B in either memory order, by TMA and wgmma",
               entry="operand_orders", either_order=True,
               sass=WGMMA_SASS + ("UTMALDG.2D.MULTICAST", "UTMASTG.2D"), **_TMA_STORE),
    GemmKernel(key="k5.8", title="Kernel 5.8: ping-pong consumers", entry="ping_pong", either_order=True,
               sass=("HGMMA.64x128x16.F32",) + TMA_WGMMA_SASS + ("UTMALDG.2D.MULTICAST", "UTMASTG.2D", "BAR.ARV"),
               **dict(_TMA_STORE, tile_n=128, stages=6, configs=PING_PONG_CONFIGS)),
    GemmKernel(key="k5.9", title="Kernel 5.9: C in 16 bits", entry="c_in_16_bits", either_order=True,
               out_dtype="float16", dtypes=HOPPER_DTYPES,
               sass=WGMMA_SASS + ("UTMALDG.2D.MULTICAST", "UTMASTG.2D", "F2FP.F16.F32.PACK_AB"), **_TMA_STORE),
    GemmKernel(key="k5.10", title="Kernel 5.10: C staged by stmatrix", entry="stmatrix_epilogue", either_order=True,
               out_dtype="float16", dtypes=HOPPER_DTYPES,
               sass=WGMMA_SASS + ("UTMALDG.2D.MULTICAST", "UTMASTG.2D", "F2FP.F16.F32.PACK_AB", "STSM.16.M88.4"),
               **_TMA_STORE),
    GemmKernel(key="k5.11", title="Kernel 5.11: tile widths", entry="tile_widths", either_order=True,
               out_dtype="float16", dtypes=HOPPER_DTYPES, tile_widths=TILE_WIDTHS,
               sass=WGMMA_SASS + ("UTMALDG.2D.MULTICAST", "UTMASTG.2D", "F2FP.F16.F32.PACK_AB"), **_TMA_STORE),
    GemmKernel(key="k5.12", title="Kernel 5.12: stream-K", entry="stream_k", either_order=True,
               out_dtype="float16", dtypes=HOPPER_DTYPES, tile_widths=TILE_WIDTHS,
               sass=WGMMA_SASS + ("UTMALDG.2D.MULTICAST", "UTMASTG.2D", "F2FP.F16.F32.PACK_AB", "ATOMG.E.ADD.STRONG.GPU"),
               **dict(_TMA_STORE, signature=Signature.STREAM_K, switches=TILE_SWITCHES + (FIXUP_SWITCH,))),
    GemmKernel(key="k5.13", title="Kernel 5.13: C column-major", entry="c_column_major", either_order=True,
               out_dtype="float16", dtypes=HOPPER_DTYPES, tile_widths=TILE_WIDTHS, c_order="F",
               sass=WGMMA_SASS + ("UTMALDG.2D.MULTICAST", "F2FP.F16.F32.PACK_AB"),
               **dict(_CLUSTERS, switches=TILE_SWITCHES)),
    GemmKernel(key="k5.14", title="Kernel 5.14: cluster shapes", entry="cluster_shapes", either_order=True,
               out_dtype="float16", dtypes=HOPPER_DTYPES, tile_widths=NARROW_TILE_WIDTHS, cluster_shapes=CLUSTER_SHAPES,
               sass=WGMMA_SASS + ("UTMALDG.2D.MULTICAST", "UTMASTG.2D", "F2FP.F16.F32.PACK_AB"), **_TMA_STORE),
    GemmKernel(key="k5.15", title="Kernel 5.15: 64-row tiles", entry="tile_rows", either_order=True,
               out_dtype="float16", dtypes=HOPPER_DTYPES, tile_widths=ROW_TILE_WIDTHS, cluster_shapes=CLUSTER_SHAPES[1:],
               sass=WGMMA_SASS + ("UTMALDG.2D.MULTICAST", "UTMASTG.2D", "F2FP.F16.F32.PACK_AB"),
               **dict(_TMA_STORE, tile_m=64, base_block=ONE_CONSUMER_BLOCK)),
)
# What Kernel 5.7's HGMMA reads transposed (MN-major, wgmma's imm-trans) in each order case, as cuobjdump
# prints it: a suffix of the descriptor operand, e.g. "HGMMA.64x256x16.F32 R24, gdesc[UR16].tnspB, ...".
TRANSPOSE_SASS = {"A": ".tnspA", "B": ".tnspB"}
# (tile_k, stages) of the 128 x 128 kernels with dynamic shared memory (3.5, 3.6): 96 KB fits every
# target, and on the H100 it was the fastest of the sweep in book/pipelines.ipynb (two blocks per SM;
# with 4 stages, 128 KB, one block fits and the kernel is 7% slower).
MID_TILE_CONFIGS = ((64, 3),)
# The measurement switches of Kernels 4.4 and 4.5.
SKIP_SWITCHES = (("SKIP_COPIES", "no copies in the main loop (wrong result: a measurement only)"),
                 ("SKIP_SYNC", "no wait and barrier in the main loop (wrong result: a measurement only)"))

# The ablation kernel's switches (a1): each undoes one step of the earlier chapters (FRESH_ACC adds the numerics
# chapter's remedy instead). kernels/a1_ablation.cu says how each is done.
ABLATION_SWITCHES = (
    ("NO_XOR", "tiles row-major in shared memory, no XOR permutation (ldmatrix bank conflicts)"),
    ("COPY_4B", "4-byte cp.async copies instead of 16-byte ones"),
    ("NO_CP_ASYNC", "register staging instead of cp.async: LDG to registers, STS after the stage's mma"),
    ("NO_REG_DB", "no register double buffering: each slice's fragments loaded right before its mma"),
    ("NO_L2_ORDER", "blocks in plain blockIdx order instead of groups of GROUP_M tile rows"),
    ("NO_VEC_STORE", "C stored one float at a time instead of float2 pairs"),
    ("SMALL_WARP_TILE", "64 x 32 warp tiles instead of 64 x 64: 2 x 8 warps, 512 threads per block"),
    ("FRESH_ACC", "each mma accumulates into zero; its result is added to the fp32 sum outside the mma"),
)

GEMM_KERNELS: dict[str, GemmKernel] = {
    k.key: k
    for k in (
        GemmKernel(
            key="k1.0", title="Kernel 1.0: naive mma",
            entry="naive_mma", base_block=SQUARE_BLOCK, tile_m=32, tile_n=32, tile_k=16,
            sass=("HMMA.16816.F32",),
        ),
        GemmKernel(
            key="k1.1", title="Kernel 1.1: naive mma + 2x2 warp tiling",
            entry="warp_tile_2x2", base_block=SQUARE_BLOCK, tile_m=64, tile_n=64, tile_k=16,
            sass=("HMMA.16816.F32",),
        ),
        GemmKernel(
            key="h1", title="HGEMM: ldmatrix + mma, fp16 accumulate and output",
            entry="ldmatrix_hgemm_f16", base_block=(32, 1, 1),
            tile_m=16, tile_n=8, tile_k=16, out_dtype="float16", accumulator="float16",
            sass=("HMMA.16816.F16", "LDSM.16.M88.4", "LDSM.16.M88.2"),
        ),
        GemmKernel(
            key="k2.0", title="Kernel 2.0: permuted shared memory",
            entry="permuted_smem", base_block=SQUARE_BLOCK, tile_m=64, tile_n=64, tile_k=32,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDSM.16.M88.2", "LDG.E.128", "STS.128", "STG.E.64"),
        ),
        GemmKernel(
            key="k2.1", title="Kernel 2.1: permuted shared memory, fragments loaded once",
            entry="permuted_smem_a_once", base_block=SQUARE_BLOCK,
            tile_m=64, tile_n=64, tile_k=32,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDSM.16.M88.2", "LDG.E.128", "STS.128", "STG.E.64"),
        ),
        GemmKernel(
            key="k3.0", title="Kernel 3.0: N-stage cp.async pipeline",
            entry="cp_async_pipeline", base_block=SQUARE_BLOCK, tile_m=64, tile_n=64, tile_k=32, stages=4,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDGSTS.E.BYPASS", "LDGDEPBAR", "DEPBAR.LE", "STG.E.64"),
        ),
        GemmKernel(
            key="k3.1", title="Kernel 3.1: N-stage pipeline + 4x tiling",
            entry="pipeline_4x_tiles", base_block=SQUARE_BLOCK, tile_m=128, tile_n=128, tile_k=32, stages=3,
            sass=CP_ASYNC_SASS,
        ),
        GemmKernel(
            key="k3.2", title="Kernel 3.2: fragments one k16 slice at a time",
            entry="fragments_per_slice", base_block=SQUARE_BLOCK, tile_m=128, tile_n=128, tile_k=32, stages=3,
            sass=("HMMA.16816.F32", "LDSM.16.M88.4", "LDSM.16.M88.2", "LDGSTS.E.BYPASS", "STG.E.64"),
        ),
        GemmKernel(
            key="k3.3", title="Kernel 3.3: B fragments in pairs (ldmatrix.x4)",
            entry="ldmatrix_b_pairs", base_block=SQUARE_BLOCK, tile_m=128, tile_n=128, tile_k=32, stages=3,
            sass=CP_ASYNC_SASS,
        ),
        GemmKernel(
            key="k3.4", title="Kernel 3.4: 1-D block with launch bounds",
            entry="flat_block", tile_m=128, tile_n=128, tile_k=32, stages=3, sass=CP_ASYNC_SASS,
        ),
        GemmKernel(
            key="k3.5", title="Kernel 3.5: stages in dynamic shared memory",
            entry="dynamic_smem", tile_m=128, tile_n=128, tile_k=32, stages=4,
            dynamic_smem=True, configs=MID_TILE_CONFIGS, sass=CP_ASYNC_SASS,
        ),
        GemmKernel(
            key="k3.6", title="Kernel 3.6: one copy address per operand",
            entry="copy_offsets", tile_m=128, tile_n=128, tile_k=32, stages=4,
            dynamic_smem=True, configs=MID_TILE_CONFIGS, sass=CP_ASYNC_SASS,
        ),
        GemmKernel(key="k4.0", title="Kernel 4.0: 64 x 64 warp tiles, 128 x 256 blocks", entry="large_warp_tiles",
                   **_BIG_TILE),
        GemmKernel(key="k4.1", title="Kernel 4.1: fragments double-buffered in registers",
                   entry="fragment_double_buffer", **_BIG_TILE),
        GemmKernel(key="k4.2", title="Kernel 4.2: L2-friendly block order", entry="l2_block_order", **_BIG_TILE),
        GemmKernel(
            key="k4.3", title="Kernel 4.3: C staged through shared memory (a switch)", entry="staged_c",
            switches=(("STAGE_C", "C through shared memory, stored as whole rows with 16-byte stores"),),
            **_BIG_TILE,
        ),
        GemmKernel(key="k4.4", title="Kernel 4.4: ldmatrix addresses by XOR", entry="slice_xor",
                   switches=SKIP_SWITCHES, **_BIG_TILE),
        GemmKernel(key="k4.5", title="Kernel 4.5: any shape", entry="any_shape", any_shape=True,
                   switches=SKIP_SWITCHES, **_BIG_TILE),
        GemmKernel(key="k4.6", title="Kernel 4.6: a tile plan per problem", entry="tile_plans",
                   **_BIG_TILE, **_PLANNED),
        GemmKernel(key="k4.7", title="Kernel 4.7: A and B in either memory order", entry="operand_orders",
                   either_order=True, signature=Signature.BLAS, **_BIG_TILE, **_PLANNED),
        GemmKernel(
            key="k5.0", title="Kernel 5.0: TMA loads", entry="tma_loads", signature=Signature.TENSOR_MAPS,
            archs=("sm_90",),
            switches=(("BLOCK_SYNC", "stages released by one __syncthreads per K tile, as Kernel 4.4 does, "
                                     "instead of the empty mbarriers"),),
            **dict(_BIG_TILE, sass=("HMMA.16816.F32", "LDSM.16.M88.4", "UTMALDG.2D", "SYNCS.ARRIVE.TRANS64",
                                    "SYNCS.PHASECHK.TRANS64", "STG.E.64")),
        ),
        *HOPPER_KERNELS,
        GemmKernel(
            key="a1", title="Ablation: Kernel 4.4 with each step a switch", entry="ablation",
            switches=ABLATION_SWITCHES + SKIP_SWITCHES, switch_blocks=(("SMALL_WARP_TILE", (512, 1, 1)),),
            in_bench=False, **_BIG_TILE,
        ),
        GemmKernel(key="d1", title="Kernel D1: Kernel 4.6 for every input type", entry="data_types",
                   elements=tuple(ELEMENTS.values()), element="fp16", in_bench=False, **_BIG_TILE, **_PLANNED),
        GemmKernel(
            key="s1", title="Kernel S1: Maxas SGEMM, 64 threads, 64 x 64 tile",
            entry="sgemm_64", base_block=(64, 1, 1), tile_m=64, tile_n=64, tile_k=8, in_dtype="float32",
            sass=SGEMM_SASS,
        ),
        GemmKernel(
            key="s2", title="Kernel S2: Maxas SGEMM, 256 threads, 128 x 128 tile",
            entry="sgemm_128", tile_m=128, tile_n=128, tile_k=8, in_dtype="float32", sass=SGEMM_SASS,
        ),
        GemmKernel(
            key="s3", title="Kernel S3: S2 with cp.async copies",
            entry="sgemm_cp_async", tile_m=128, tile_n=128, tile_k=8, in_dtype="float32",
            sass=("FFMA", "LDS.128", "LDGSTS.E.BYPASS.128", "STS.128", "STG.E.128"),
        ),
    )
}


# The WMMA kernels (book/wmma.ipynb): D = alpha * A @ B + beta * C on 16 x 16 x 16 wmma tiles, one warp
# per tile of D. A and B may each be row- ("C") or column-major ("F"): the memory order is the layout
# parameter of the fragment type, compiled in with -DA_COL_MAJOR / -DB_COL_MAJOR. Keyed by the case as
# BLAS names it for row-major arrays: "A^T B" is At.T @ B for a row-major (K, M) At, i.e. a column-major A.
WMMA_CASES: dict[str, tuple[str, str]] = {
    "A B": ("C", "C"), "A^T B": ("F", "C"), "A B^T": ("C", "F"), "A^T B^T": ("F", "F"),
}

WMMA_KERNELS: dict[str, WmmaKernel] = {
    k.key: k
    for k in (
        WmmaKernel(key="w1.0", title="Kernel W1.0: WMMA, fp16 in, fp32 accumulate (HMMA)", entry="wmma_hmma",
                   in_dtype="float16", out_dtype="float32",
                   sass=("HMMA.16816.F32", "STG.E.64"), repack_sass=("MOVM.16.MT88",)),
        WmmaKernel(key="w1.1", title="Kernel W1.1: WMMA, int8 in, int32 accumulate (IMMA)", entry="wmma_imma",
                   in_dtype="int8", out_dtype="int32",
                   sass=("IMMA.16816.S8.S8", "STG.E.64"), repack_sass=("LDG.E.U8", "PRMT")),
        WmmaKernel(key="w1.2", title="Kernel W1.2: WMMA from shared memory (HMMA)", entry="wmma_smem",
                   in_dtype="float16", out_dtype="float32",
                   sass=("HMMA.16816.F32", "LDSM.16.", "LDG.E.128", "STS.128"), repack_sass=("LDSM.16.MT88.4",)),
    )
}


def bench_keys() -> list[str]:
    """The kernels `python -m tcgemm bench` times by default, in teaching order."""
    return [k for k, spec in GEMM_KERNELS.items() if spec.in_bench]


def keys_for(in_dtype: str) -> list[str]:
    """The GEMM kernels that take `in_dtype` inputs, in teaching order."""
    return [k for k, spec in GEMM_KERNELS.items() if spec.in_dtype == in_dtype]

# The mma instructions of every variant but fp8, as every target's SASS spells them.
_MMA_SASS = ("HMMA.16816.F32", "HMMA.16816.F16", "HMMA.1688.F32", "IMMA.16832.S8.S8", "HMMA.16816.F32.BF16",
             "HMMA.1688.F32.TF32")

PROBES: dict[str, ProbeKernel] = {
    # One entry per mma variant; the fp8 ones hold their mma from sm_89 on only, so their SASS is
    # checked per target in tests/test_dtypes.py.
    "mma": ProbeKernel(
        key="mma",
        entries=tuple("probe_mma_" + variant_identifier(v) for v in MMA_VARIANTS),
        sass=_MMA_SASS,
    ),
    "mma_ceiling": ProbeKernel(
        key="mma_ceiling",
        entries=tuple("mma_ceiling_" + variant_identifier(v) for v in MMA_VARIANTS),
        sass=_MMA_SASS,
    ),
    "ffma_ceiling": ProbeKernel(
        key="ffma_ceiling",
        entries=("ffma_ceiling",),
        sass=("FFMA",),
    ),
    "wmma": ProbeKernel(
        key="wmma",
        entries=tuple(f"probe_wmma_{t}_{use}" for t in ("f16", "s8")
                      for use in ("a_row", "a_col", "b_row", "b_col")) + ("probe_wmma_f32_acc", "probe_wmma_s32_acc"),
        sass=("MOVM.16.MT88", "LDG.E.U8"),
    ),
    # The numerics chapter: one mma per crafted case (rounding_*), one accumulator over all of K
    # (accumulate_*), per type of tcgemm.numerics.rounding.MMA_TYPES; the fp8 ones hold an mma from sm_89 on.
    "rounding": ProbeKernel(
        key="rounding",
        entries=tuple(f"{use}_{t}" for t in ("f16_f32", "f16_f16", "bf16_f32", "tf32_f32", "e4m3_f32",
                                             "e5m2_f32", "s8_s32") for use in ("rounding", "accumulate")),
        sass=("HMMA.16816.F32", "HMMA.16816.F16", "HMMA.16816.F32.BF16", "HMMA.1688.F32.TF32",
              "IMMA.16832.S8.S8"),
    ),
    # Hopper's wgmma (tcgemm.hopper.gpu.wgmma): its entries hold a wgmma only when built for sm_90a, so the
    # targets here compile them empty, and tests/test_wgmma_sass.py checks their HGMMA for sm_90a
    # (_a_mn, _b_mn: that operand MN-major, read transposed).
    "wgmma": ProbeKernel(
        key="wgmma",
        entries=("probe_wgmma_m64n8k16", "probe_wgmma_m64n16k16", "probe_wgmma_m64n16k16_a_mn",
                 "probe_wgmma_m64n16k16_b_mn", "probe_wgmma_m64n128k16_b_mn"),
        sass=(),
    ),
    # The numerics chapter's rounding cases through wgmma (tcgemm.numerics.gpu.wgmma_rounding): sm_90a only, like the
    # wgmma probe; tests/test_wgmma_rounding.py checks its HGMMA and QGMMA.
    "wgmma_rounding": ProbeKernel(
        key="wgmma_rounding",
        entries=("wgmma_rounding_f16_f32", "wgmma_rounding_e4m3_f32"),
        sass=(),
    ),
    "ldmatrix": ProbeKernel(
        key="ldmatrix",
        entries=("probe_ldmatrix_x1", "probe_ldmatrix_x2", "probe_ldmatrix_x4",
                 "probe_ldmatrix_x1_trans", "probe_ldmatrix_x2_trans", "probe_ldmatrix_x4_trans"),
        sass=("LDSM.16.M88 ", "LDSM.16.M88.2", "LDSM.16.M88.4",
              "LDSM.16.MT88 ", "LDSM.16.MT88.2", "LDSM.16.MT88.4"),
    ),
}

def all_sources() -> list[str]:
    """Every .cu file the catalog knows, in teaching order."""
    names = [k.source for k in GEMM_KERNELS.values()] + [w.source for w in WMMA_KERNELS.values()] + \
        [p.source for p in PROBES.values()]
    return list(dict.fromkeys(names))


def source_archs(source: str) -> tuple[str, ...]:
    """The target architectures kernels/<source> compiles for (as defines_for configures it): a GEMM
    kernel's own `archs` (Kernel 5.0's TMA: sm_90), every target for the others."""
    return next((k.archs for k in GEMM_KERNELS.values() if k.source == source), TARGET_ARCHS)


def build_target(source: str, arch: str) -> str:
    """The target kernels/<source> is compiled for on `arch`: the architecture-specific one (sm_90 ->
    sm_90a) for the kernels that need it (wgmma, setmaxnreg: Kernels 5.1-5.5), else `arch` itself."""
    specific = any(k.arch_specific for k in GEMM_KERNELS.values() if k.source == source)
    return arch_specific_target(arch) if specific else arch


def sass_claims() -> dict[str, tuple[str, ...]]:
    """The instructions the book claims for each source compiled as defines_for compiles it: the WMMA
    kernels without defines, i.e. for the case "A B" (A and B row-major)."""
    claims = {k.source: k.sass for k in GEMM_KERNELS.values()}
    claims.update({p.source: p.sass for p in PROBES.values()})
    claims.update({w.source: w.claims(*WMMA_CASES["A B"]) for w in WMMA_KERNELS.values()})
    return claims


def configured(key: str, arch: str | None = None) -> GemmKernel:
    """Kernel `key` in the configuration its launcher picks on `arch` (one of TARGET_ARCHS), from the
    shared memory one block may use there; None: on the target that allows the most."""
    if key not in GEMM_KERNELS:
        raise KeyError(f"unknown kernel {key!r}; the kernels are: {', '.join(GEMM_KERNELS)}")
    spec = GEMM_KERNELS[key]
    archs = spec.archs if arch is None else (arch,)
    limit = max(arch_limits(a).max_smem_per_block for a in archs)    # an unknown arch is named first
    if arch is not None and (reason := spec.unsupported(arch)):
        raise ValueError(reason)
    return spec.for_smem(limit)


def defines_for(source: str, arch: str) -> tuple[tuple[str, int], ...]:
    """The -D macros the launcher compiles kernels/<source> with on `arch` (probes: none)."""
    for k in GEMM_KERNELS.values():
        if k.source == source:
            return configured(k.key, arch).defines
    return ()
