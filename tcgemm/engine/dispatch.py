"""Which kernel tcgemm.matmul runs for a problem, and why. Pure module.

    inputs      GPU           alpha, beta   kernel                                     C written as
    fp16/bf16   sm_90         1, 0          M > 128: Kernel 5.9 (wgmma), 5.11 with      out_dtype itself
                                            other tile widths or 5.12 with the last
                                            wave split along K (tile_width,
                                            stream_k_width);
                                            M of 64-128 against a long N: Kernel
                                            5.13 on C^T = B^T A^T (turned_round);
                                            M and N <= 1024 at 64 wide: Kernel 5.14,
                                            clusters of 1 x 2 (row_cluster), or
                                            5.15's 64-row tiles 128 wide where they
                                            fill half of the SMs (row_tiles);
                                            M of 64-128, K <= N: Kernel 5.15
                                            (row_tiles);
                                            M <= 128: Kernel 5.9 where its tiles
                                            fill the GPU (hopper_pays), else 4.7
    fp16/bf16   sm_90         other         Kernel 5.9 with an fp32 C, then an          out_dtype
                                            epilogue pass: alpha AB + beta C
    fp16        sm_80 - sm_89 any           Kernel 4.7 (mma.sync, planned tile)         fp32 (then the
                                                                                        epilogue pass where
                                                                                        out_dtype is 16-bit)
    bf16        where 5.9 is  any           Kernel D1's bf16 build (mma.sync, planned   fp32, then the
                not chosen                  tile), A row- and B column-major only       epilogue pass
    int8        any           any           Kernel D1's int8 build (mma.sync m16n8k32   int32, exact (alpha,
                                            IMMA, planned tile)                         beta: an int32 pass)
    fp8 e4m3,   sm_89, sm_90  any           Kernel D1's e4m3 or e5m2 build (mma.sync;   fp32 (no fp8 C; fp16
    e5m2                                    sm_90: emulated by ptxas, small tiles)      or bf16 by the pass)
    fp32        any           any           Kernel D1's tf32 build, only with           fp32
                                            allow_tf32=True (each input rounded to tf32)
Kernel D1 reads A row-major and B column-major; for int8, fp8 and tf32 an operand in the other order is
first copied into D1's order (tcgemm.engine.gpu.matmul), for bf16 it is refused (sm_90: Kernel 5.9 reads
any order). Kernel W1.1 (WMMA IMMA) runs int8 only where asked for (kernel="w1.1").
The output type is the inputs' by default (as A @ B is in NumPy, CuPy and PyTorch; int8: int32, fp8 and
tf32: fp32), accumulated in fp32 (int32 for int8) either way; out_dtype="float32" keeps the fp32 sums.
Where the kernel's C is not the caller's (`kernel_out`), tcgemm.engine.gpu.matmul computes A @ B into a
buffer of the kernel's C and a second pass over C applies alpha and beta and rounds: Kernel 4.7's
epilogue stores fp32 only, Kernels 5.9 and D1 do not scale.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from math import ceil

from tcgemm.engine.catalog import ELEMENTS
from tcgemm.engine.kernel_types import DTYPE_NAMES
from tcgemm.engine.stream_k import FIXUP_STEPS, SPLIT_GAIN, split
from tcgemm.errors import OperandError, UnsupportedOnGPUError
from tcgemm.fragment_layouts import min_sm
from tcgemm.style import TEXT_COLUMN_CHARS

# The input types by their NumPy/PyTorch names (fp8: PyTorch's, also ml_dtypes'); float32 only with allow_tf32.
INPUT_DTYPES = ("float16", "bfloat16", "int8", "float8_e4m3fn", "float8_e5m2")
FP8_DTYPES = ("float8_e4m3fn", "float8_e5m2")
OUTPUT_DTYPES = {"float16": ("float16", "float32"), "bfloat16": ("bfloat16", "float32"), "int8": ("int32",),
                 **{fp8: ("float32", "float16", "bfloat16") for fp8 in FP8_DTYPES}, "float32": ("float32",)}
# Kernel D1's build (tcgemm.engine.catalog.ELEMENTS) for each input type; int8, fp8 and fp32 (as tf32) run
# on it alone.
D1_ELEMENTS = {"float16": "fp16", "bfloat16": "bf16", "int8": "int8", "float8_e4m3fn": "e4m3",
               "float8_e5m2": "e5m2", "float32": "tf32"}
D1_ONLY = ("int8", *FP8_DTYPES, "float32")
SHORT_NAMES = {**DTYPE_NAMES, "int8": "int8", "int32": "int32", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
# When Kernel 5.9 beats Kernel 4.7 on sm_90, fitted to a sweep of both on an H200 (tcgemm.engine.gpu.sweep,
# forced to each kernel, fp16 in and out, 29 shapes): with a block per SM or more, always; with fewer, only
# where at least HOPPER_MIN_SHARE of the SMs get a block, the tile's 128 rows are not mostly padding
# (M > HOPPER_MIN_M) and K is not long against M and N (Kernel 4.7 splits a long K over more blocks).
HOPPER_MIN_SHARE = 0.24
HOPPER_MIN_M = 64
HOPPER_MAX_K_RATIO = 2


# Kernel 5.11's tile widths for M > 128 (two tile rows fill a cluster): each width's rate as a share of the
# 256-wide tile's, measured on an H200 (fp16 in and out, tcgemm.engine.gpu.sweep's GPU time): 91% at 128 and
# 60% at 64 at 4096³; 98% at 192 at 8448 x 1536 x 4096, which both widths fill in whole waves (3 and 4). A
# width runs in ceil(clusters / (SMs / 2)) waves of tiles that each take width / WIDTH_RATE[width]; another
# width is picked only where that is under NARROWER_GAIN of the 256-wide tiles' time (at 3000³ the model's 8%
# gain for 128 measured a loss).
WIDTH_RATE = {256: 1.0, 192: 0.98, 128: 0.91, 64: 0.60}
NARROWER_GAIN = 0.85
WIDE_M = 128
# The widths Kernel 5.12 runs at in tcgemm.matmul (narrower ones split measured slower everywhere).
SPLIT_WIDTHS = (256, 192)


def tile_pairs(M: int, N: int, width: int) -> int:
    """The tile pairs (256 rows by `width` columns, one per cluster of two blocks) that cover M x N."""
    return ceil(M / 256) * ceil(N / width)


def waves(sms: int, M: int, N: int, width: int) -> int:
    """The waves those tile pairs take, one pair per cluster of two SMs at a time."""
    return ceil(tile_pairs(M, N, width) / (sms // 2))


def wave_cost(sms: int, M: int, N: int, width: int) -> float:
    """Kernel 5.11's time for M x N at `width` in the wave model, in units of a 256-wide tile's time per
    column: its waves of tile pairs, each width / WIDTH_RATE[width]."""
    return waves(sms, M, N, width) * width / WIDTH_RATE[width]


def tile_width(sms: int, M: int, N: int) -> int:
    """The tile width (columns of C) of Kernel 5.11 that the wave model above picks for M x N on an sm_90
    GPU of `sms` SMs: 256 unless another fills the SMs enough better."""
    best = min(WIDTH_RATE, key=lambda width: wave_cost(sms, M, N, width))
    return best if wave_cost(sms, M, N, best) < NARROWER_GAIN * wave_cost(sms, M, N, 256) else 256


def stream_k_width(sms: int, M: int, N: int, K: int) -> int:
    """The tile width at which Kernel 5.12 (the last wave's split along K: tcgemm.engine.stream_k) beats the
    width tile_width picks, in the same wave model: its longest run and fix-up, in waves of that width,
    under stream_k.SPLIT_GAIN of the other's time; the cheapest such of SPLIT_WIDTHS, or 0 where none is.
    (In the H200's measurements the split paid at 256 x 4096 x 14336 and 8192 x 520 x 8192, both at 192,
    and lost at 3000³ and 3072³ to 192-wide whole tiles.)"""
    k_tiles = ceil(K / 64)
    best, best_cost = 0, SPLIT_GAIN * wave_cost(sms, M, N, tile_width(sms, M, N))
    for width in SPLIT_WIDTHS:
        sk = split(tile_pairs(M, N, width), k_tiles, sms // 2)
        cost = (sk.longest_steps + FIXUP_STEPS) / k_tiles * width / WIDTH_RATE[width]
        if sk.runs and cost < best_cost:
            best, best_cost = width, cost
    return best


# Kernel 5.13 (C column-major) runs A @ B turned round, C^T = B^T A^T, for M of TURNED_MIN_M to WIDE_M where
# N's 256-row tile pairs give TURNED_MIN_SHARE of the clusters or more: measured on an H200 (fp16 in and out,
# % of cuBLAS, against the kernel the dispatch ran before), 128 x 14336 x 4096 94% (Kernel 5.9: 81%) and
# 64 x 14336 x 4096 97% (Kernel 4.7: 84%); it lost with N = 4096 (16 clusters: 65-88% against 79-96%) and
# at M = 16 (88% against 89%).
TURNED_MIN_M = 64
TURNED_MIN_SHARE = 0.75


def turned_round(sms: int, M: int, N: int) -> bool:
    """Whether tcgemm.matmul runs M x N as Kernel 5.13's C^T = B^T A^T on an sm_90 GPU of `sms` SMs."""
    return TURNED_MIN_M <= M <= WIDE_M and ceil(N / 256) >= TURNED_MIN_SHARE * (sms // 2)


# Kernel 5.14's clusters of 1 x 2 blocks (A multicast along N: a cluster's tiles are 128 x 128) where Kernel
# 5.11 would run 64-wide tiles and M and N are at most SMALL_SIDE: measured on an H200 (fp16 in and out, % of
# cuBLAS, best of 3 interleaved rounds against 5.11's 2 x 1) level or ahead on every small problem tried, 512³
# to 1024³ (1000³: 78% against 70%; 700 x 1000 x 1000: 83% against 73%), and behind at 256 x 4096 x 4096 (91%
# against 97%). Its 2 x 2 clusters lost everywhere: an H200 runs 30 clusters of four at once, 120 of its SMs.
SMALL_SIDE = 1024
ROW_CLUSTER = (1, 2)


def row_cluster(sms: int, M: int, N: int) -> bool:
    """Whether tcgemm.matmul runs M x N as Kernel 5.14 in clusters of 1 x 2 blocks (64-wide tiles), or
    Kernel 5.15 where its tiles give enough SMs a block (row_tiles)."""
    return WIDE_M < M <= SMALL_SIDE and N <= SMALL_SIDE and tile_width(sms, M, N) == 64


# Kernel 5.15's 64-row tiles (one consumer warpgroup), measured on an H200 (fp16 in and out, % of cuBLAS, best
# of 3 interleaved rounds, against the kernel the dispatch ran before): 64 x 4096 x 4096 in 1 x 2 clusters 32
# wide 86% (Kernel 4.7: 78%), 128 x 4096 x 4096 in 2 x 1 clusters 64 wide 87% (79%); 1024³ at 128 wide 87-88%
# (Kernel 5.14: 83%), 1000³ 81% (80%). They lost where K is longer than N (128 and 64 x 4096 x 14336: 80% and
# 89% against Kernel 4.7's 85% and 95%, which splits K) and at M = 16 (91% against 97%). ROW_TILE_MIN_SHARE:
# the share of the SMs that must get a block.
ROW_TILE_MIN_SHARE = 0.75


def row_tiles(sms: int, M: int, N: int, K: int, b_k_major: bool = True) -> tuple[tuple[int, int], int] | None:
    """Kernel 5.15's cluster shape and tile width for M x N x K on an sm_90 GPU of `sms` SMs, or None: M of
    TURNED_MIN_M to WIDE_M with K no longer than N and an N turned_round does not take (1 x 2 clusters 32
    wide to M = 64, which take a column-major B only (`b_k_major`), else 2 x 1 clusters 64 wide), and the
    small problems of row_cluster at 128 wide; each where ROW_TILE_MIN_SHARE of the SMs get a block."""
    if TURNED_MIN_M <= M <= WIDE_M and K <= N and not turned_round(sms, M, N):
        if M <= 64 and not b_k_major:
            return None
        rows = ((1, 2), 32) if M <= 64 else ((2, 1), 64)
    elif row_cluster(sms, M, N):
        rows = (2, 1), 128
    else:
        return None
    return rows if ceil(M / 64) * ceil(N / rows[1]) >= ROW_TILE_MIN_SHARE * sms else None


def hopper_pays(sms: int, M: int, N: int, K: int) -> bool:
    """Whether Kernel 5.9 (128 x 256 tiles, one block per tile) is the faster choice for M x N x K on an
    sm_90 GPU of `sms` SMs (see the constants above)."""
    blocks = ceil(M / 128) * ceil(N / 256)
    return blocks >= sms or (blocks >= HOPPER_MIN_SHARE * sms and M > HOPPER_MIN_M
                             and K <= HOPPER_MAX_K_RATIO * max(M, N))


@dataclass(frozen=True)
class Dispatch:
    key: str                  # the kernel (tcgemm.engine.catalog)
    in_dtype: str
    kernel_out: str           # the C the kernel writes
    out_dtype: str            # the C the caller gets: the kernel's, or rounded from it in an epilogue pass
    why: str
    element: str = ""         # Kernel D1's build (a key of tcgemm.engine.catalog.ELEMENTS); "" for another kernel
    tile_n: int = 0           # Kernel 5.11's to 5.15's tile width; 0 for another kernel
    cluster: tuple[int, int] = ()   # Kernel 5.14's or 5.15's cluster shape (blocks along M, along N); () for another

    @property
    def label(self) -> str:
        """The kernel as tables name it: its key, with the tile width for the kernels of several
        ('k5.11/64', 'k5.12/192', 'k5.13/128') and the cluster shape for Kernel 5.14 ('k5.14/64/1x2')."""
        shape = f"/{self.cluster[0]}x{self.cluster[1]}" if self.cluster else ""
        return f"{self.key}/{self.tile_n}{shape}" if self.key in ("k5.11", "k5.12", "k5.13", "k5.14", "k5.15") \
            else self.key

    def __str__(self) -> str:
        """`why`, wrapped to the book's text column."""
        return textwrap.fill(self.why, TEXT_COLUMN_CHARS, subsequent_indent="  ")


def output_dtype(in_dtype: str, out_dtype: str | None, allow_tf32: bool = False) -> str:
    """The C type of a call: `out_dtype`, or the inputs' type (int8: int32; fp8 and fp32: fp32);
    OperandError naming the choices for a type with none (float32 without allow_tf32 among them)."""
    taken = f"tcgemm.matmul takes {', '.join(INPUT_DTYPES)} inputs (float32 with allow_tf32=True), got {in_dtype}"
    if in_dtype == "float32" and not allow_tf32:
        raise OperandError(f"{taken}: pass allow_tf32=True to multiply fp32 arrays as tf32 (Kernel D1, an fp32 "
                           f"C), or convert with .astype('float16')")
    if in_dtype not in OUTPUT_DTYPES:
        hint = " (fp8 inputs come as torch.float8_e4m3fn or torch.float8_e5m2 tensors)" if in_dtype == "uint8" else ""
        raise OperandError(f"{taken} (convert with .astype('float16')){hint}")
    choices = OUTPUT_DTYPES[in_dtype]
    out = choices[0] if out_dtype is None else str(out_dtype)
    if out not in choices:
        raise OperandError(f"{in_dtype} inputs give a {' or '.join(choices)} C, not {out}")
    return out


def dispatch(arch: str, sms: int, M: int, N: int, K: int, in_dtype: str = "float16", out_dtype: str | None = None,
             scaled: bool = False, mma_orders: bool = True, allow_tf32: bool = False) -> Dispatch:
    """The kernel tcgemm.matmul runs for an M x N x K product of `in_dtype` inputs on a GPU of
    architecture `arch` with `sms` SMs (see the module's table), and why. `mma_orders`: A is row-major and
    B column-major, the only orders Kernel D1 reads. `allow_tf32`: float32 inputs run as tf32 (else
    OperandError). UnsupportedOnGPUError for fp8 inputs before sm_89."""
    out = output_dtype(in_dtype, out_dtype, allow_tf32)
    size = f"{M}×{N}×{K}"
    if in_dtype in D1_ONLY:
        return _d1_only(arch, size, in_dtype, out, scaled, mma_orders)
    names = f"{DTYPE_NAMES[in_dtype]} in, {DTYPE_NAMES[out]} C"
    if arch == "sm_90" and not scaled and turned_round(sms, M, N):
        width = 64 if M <= 64 else 128
        return Dispatch("k5.13", in_dtype, out, out,
                        f"{size} {names}: Kernel 5.13 (wgmma) on the product turned round, C^T = B^T A^T: "
                        f"{2 * ceil(N / 256)} tiles of 128 × {width} on {sms} SMs, C^T written column-major",
                        tile_n=width)
    if arch == "sm_90" and (rows := row_tiles(sms, M, N, K, mma_orders)):
        (cluster_m, cluster_n), width = rows
        tiles = (f"{ceil(M / 64) * ceil(N / width)} tiles of 64 × {width} on {sms} SMs in clusters of "
                 f"{cluster_m} × {cluster_n}")
        second = f" into fp32, then alpha A B + beta C in a second pass ({tiles})" if scaled else f", {tiles}"
        return Dispatch("k5.15", in_dtype, out if not scaled else "float32", out,
                        f"{size} {names}: Kernel 5.15 (wgmma){second}", tile_n=width, cluster=(cluster_m, cluster_n))
    if arch == "sm_90":
        split_k = stream_k_width(sms, M, N, K) if M > WIDE_M else 0
        width = split_k or (tile_width(sms, M, N) if M > WIDE_M else 256)
        blocks = ceil(M / 128) * ceil(N / width)
        tiles = f"{blocks} tiles of 128 × {width} on {sms} SMs" + (", the last wave's split along K" if split_k else "")
        if M > WIDE_M or hopper_pays(sms, M, N, K) or (in_dtype == "bfloat16" and not mma_orders):
            cluster = ROW_CLUSTER if not split_k and row_cluster(sms, M, N) else ()
            key, name = ("k5.12", "Kernel 5.12") if split_k else ("k5.9", "Kernel 5.9") if width == 256 else \
                ("k5.14", "Kernel 5.14") if cluster else ("k5.11", "Kernel 5.11")
            if cluster:
                tiles = f"{blocks} tiles of 128 × {width} on {sms} SMs in clusters of 1 × 2 sharing A"
            kernel_out = out if not scaled else "float32"
            second = f" into fp32, then alpha A B + beta C in a second pass ({tiles})" if scaled else f", {tiles}"
            return Dispatch(key, in_dtype, kernel_out, out, f"{size} {names}: {name} (wgmma){second}", tile_n=width,
                            cluster=cluster)
        reason = f"{tiles}: too few, or K too long, for Kernel 5.9"
    else:
        reason = "no wgmma"
    if in_dtype == "bfloat16":
        if not mma_orders:
            raise OperandError(f"on {arch} tcgemm.matmul takes bf16 A row-major and B column-major only (Kernel D1); "
                               "pass A.contiguous() and B.T.contiguous().T")
        return Dispatch("d1", "bfloat16", "float32", out,
                        f"{size} {names}: Kernel D1's bf16 build (mma.sync, tile planned per problem), rounded "
                        f"in a second pass ({reason})", element="bf16")
    return _mma_sync(size, names, out, reason)


def _d1_only(arch: str, size: str, in_dtype: str, out: str, scaled: bool, mma_orders: bool) -> Dispatch:
    """Kernel D1 for the input types only it runs: int8, fp8 (sm_89 on) and fp32 as tf32."""
    element = ELEMENTS[D1_ELEMENTS[in_dtype]]
    need = min_sm(element.variant)
    if int(arch.removeprefix("sm_")) < need:
        raise UnsupportedOnGPUError(f"{in_dtype} inputs need fp8 mma.sync, on sm_{need} (Ada) and later; this GPU "
                                    f"is {arch}: convert A and B to float16 first")
    if in_dtype == "int8":
        how = "mma.sync m16n8k32 IMMA, exact int32"
    elif in_dtype == "float32":
        how = "mma.sync m16n8k8, each fp32 input rounded to tf32"
    else:
        how = "mma.sync m16n8k32" + (f", emulated by ptxas on {arch} with fp16 HMMA, warp tiles of at most 32 × 32"
                                     if element.max_warp_tile(arch) else "")
    names = f"{'tf32' if in_dtype == 'float32' else SHORT_NAMES[in_dtype]} in, {SHORT_NAMES[out]} C"
    second = [what for what, needed in (("alpha A B + beta C", scaled),
                                        (f"rounded to {SHORT_NAMES[out]}", out != element.out_dtype)) if needed]
    orders = "A row-major and B column-major, as D1 reads them" if mma_orders else \
        "A or B first copied into the orders D1 reads (A row-major, B column-major)"
    return Dispatch("d1", in_dtype, element.out_dtype, out,
                    f"{size} {names}: Kernel D1's {element.name} build ({how}; tile planned per problem)"
                    + (f", then {' and '.join(second)} in a second pass" if second else "") + f"; {orders}",
                    element=element.name)


def _mma_sync(size: str, names: str, out: str, reason: str) -> Dispatch:
    rounding = f", rounded to {DTYPE_NAMES[out]} in a second pass" if out != "float32" else ""
    return Dispatch("k4.7", "float16", "float32", out,
                    f"{size} {names}: Kernel 4.7 (mma.sync, tile planned per problem){rounding}"
                    + (f" ({reason})" if reason else ""))
