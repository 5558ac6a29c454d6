"""Which kernel tcgemm.matmul runs for a problem, and why. Pure module.

    inputs      GPU           alpha, beta   kernel                                     C written as
    int8        any           any           W1.1 (WMMA IMMA, exact int32)               int32
    fp16/bf16   sm_90         1, 0          Kernel 5.9 (wgmma) where its tiles fill     out_dtype itself
                                            the GPU (hopper_pays), else 4.7 (fp16)
    fp16/bf16   sm_90         other         Kernel 5.9 with an fp32 C, then an          out_dtype
                                            epilogue pass: alpha AB + beta C
    fp16        sm_80 - sm_89 any           Kernel 4.7 (mma.sync, planned tile)         fp32 (then the
                                                                                        epilogue pass where
                                                                                        out_dtype is 16-bit)
    bf16        where 5.9 is  any           Kernel D1's bf16 build (mma.sync, planned   fp32, then the
                not chosen                  tile), A row- and B column-major only       epilogue pass
The output type is the inputs' by default (as A @ B is in NumPy, CuPy and PyTorch), accumulated in
fp32 either way; out_dtype="float32" keeps the fp32 sums. Where the kernel's C is not the caller's
(`kernel_out`), tcgemm.engine.gpu.matmul computes A @ B into an fp32 buffer and a second pass over C
applies alpha and beta and rounds: Kernel 4.7's epilogue stores fp32 only, Kernel 5.9's does not scale.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from math import ceil

from tcgemm.engine.kernel_types import DTYPE_NAMES
from tcgemm.errors import OperandError
from tcgemm.style import TEXT_COLUMN_CHARS

INPUT_DTYPES = ("float16", "bfloat16", "int8")
OUTPUT_DTYPES = {"float16": ("float16", "float32"), "bfloat16": ("bfloat16", "float32"), "int8": ("int32",)}
# When Kernel 5.9 beats Kernel 4.7 on sm_90, fitted to a sweep of both on an H200 (tcgemm.engine.gpu.sweep,
# forced to each kernel, fp16 in and out, 29 shapes): with a block per SM or more, always; with fewer, only
# where at least HOPPER_MIN_SHARE of the SMs get a block, the tile's 128 rows are not mostly padding
# (M > HOPPER_MIN_M) and K is not long against M and N (Kernel 4.7 splits a long K over more blocks).
HOPPER_MIN_SHARE = 0.24
HOPPER_MIN_M = 64
HOPPER_MAX_K_RATIO = 2


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

    def __str__(self) -> str:
        """`why`, wrapped to the book's text column."""
        return textwrap.fill(self.why, TEXT_COLUMN_CHARS, subsequent_indent="  ")


def output_dtype(in_dtype: str, out_dtype: str | None) -> str:
    """The C type of a call: `out_dtype`, or the inputs' type (int8: int32); OperandError naming the
    choices for a type with none."""
    if in_dtype not in INPUT_DTYPES:
        raise OperandError(f"tcgemm.matmul takes {', '.join(INPUT_DTYPES)} inputs, got {in_dtype} "
                           f"(convert with .astype('float16'))")
    choices = OUTPUT_DTYPES[in_dtype]
    out = choices[0] if out_dtype is None else str(out_dtype)
    if out not in choices:
        raise OperandError(f"{in_dtype} inputs give a {' or '.join(choices)} C, not {out}")
    return out


def dispatch(arch: str, sms: int, M: int, N: int, K: int, in_dtype: str = "float16", out_dtype: str | None = None,
             scaled: bool = False, mma_orders: bool = True) -> Dispatch:
    """The kernel tcgemm.matmul runs for an M x N x K product of `in_dtype` inputs on a GPU of
    architecture `arch` with `sms` SMs (see the module's table), and why. `mma_orders`: A is row-major and
    B column-major, the only orders Kernel D1 reads."""
    out = output_dtype(in_dtype, out_dtype)
    size = f"{M}×{N}×{K}"
    if in_dtype == "int8":
        return Dispatch("w1.1", "int8", "int32", "int32", f"{size} int8: Kernel W1.1 (WMMA IMMA), exact int32")
    names = f"{DTYPE_NAMES[in_dtype]} in, {DTYPE_NAMES[out]} C"
    if arch == "sm_90":
        blocks = ceil(M / 128) * ceil(N / 256)
        tiles = f"{blocks} tiles of 128 × 256 on {sms} SMs"
        if hopper_pays(sms, M, N, K) or (in_dtype == "bfloat16" and not mma_orders):
            if not scaled:
                return Dispatch("k5.9", in_dtype, out, out, f"{size} {names}: Kernel 5.9 (wgmma), {tiles}")
            return Dispatch("k5.9", in_dtype, "float32", out,
                            f"{size} {names}: Kernel 5.9 (wgmma) into fp32, then alpha A B + beta C in a "
                            f"second pass ({tiles})")
        reason = f"{tiles}: too few, or K too long, for Kernel 5.9"
    else:
        reason = "no wgmma"
    if in_dtype == "bfloat16":
        if not mma_orders:
            raise OperandError(f"on {arch} tcgemm.matmul takes bf16 A row-major and B column-major only (Kernel D1); "
                               "pass A.contiguous() and B.T.contiguous().T")
        return Dispatch("d1", "bfloat16", "float32", out,
                        f"{size} {names}: Kernel D1's bf16 build (mma.sync, tile planned per problem), rounded "
                        f"in a second pass ({reason})")
    return _mma_sync(size, names, out, reason)


def _mma_sync(size: str, names: str, out: str, reason: str) -> Dispatch:
    rounding = f", rounded to {DTYPE_NAMES[out]} in a second pass" if out != "float32" else ""
    return Dispatch("k4.7", "float16", "float32", out,
                    f"{size} {names}: Kernel 4.7 (mma.sync, tile planned per problem){rounding}"
                    + (f" ({reason})" if reason else ""))
