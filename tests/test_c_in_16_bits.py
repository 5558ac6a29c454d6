"""Kernel 5.9 (C in 16 bits) without a GPU: its types, its map of C, where its epilogue puts each pair
of C in a box buffer, and what every (input, output) type build compiles to (NVRTC, sm_90a)."""
import re

import numpy as np
import pytest

from tcgemm.engine import bfloat16
from tcgemm.engine.accuracy import compare_outputs, tolerance
from tcgemm.engine.catalog import GEMM_KERNELS, HOPPER_DTYPES, WMMA_CASES, build_target, configured
from tcgemm.engine.kernel_types import storage_dtype
from tcgemm.engine.tma import c_map
from tcgemm.engine.gpu.nvrtc_offline import compile_cubin, cuda_tool, cuobjdump_sass, find_toolkit
from required import skip_or_fail

K59 = GEMM_KERNELS["k5.9"]


def test_the_default_build_is_fp16_in_and_out_and_every_pair_compiles_in_by_macro():
    assert (K59.in_dtype, K59.out_dtype) == HOPPER_DTYPES[0] == ("float16", "float16")
    defines = {pair: dict(K59.with_dtypes(*pair).defines) for pair in HOPPER_DTYPES}
    assert [(d["BF16"], d["C_BITS"]) for d in defines.values()] == [(0, 16), (1, 16), (0, 32), (1, 32)]
    assert K59.with_dtypes("bfloat16", "bfloat16").variant.endswith("bf16 -> bf16")
    with pytest.raises(ValueError, match="takes no float16 inputs with a bfloat16 C"):
        K59.with_dtypes("float16", "bfloat16")
    with pytest.raises(ValueError, match="float16 -> float32 only"):
        GEMM_KERNELS["k5.7"].with_dtypes("float16", "float32")
    assert storage_dtype("bfloat16") == "uint16" and storage_dtype("float16") == "float16"


@pytest.mark.parametrize("out_dtype, box_cols", [("float16", 64), ("bfloat16", 64), ("float32", 32)])
def test_a_box_of_c_is_one_128_byte_swizzle_row_wide(out_dtype, box_cols):
    spec = K59.with_dtypes("bfloat16" if out_dtype == "bfloat16" else "float16", out_dtype)
    tile_map = c_map(spec, 1000, 1024)
    assert (tile_map.box_rows, tile_map.box_cols, tile_map.swizzle) == (64, box_cols, 128)
    assert tile_map.box_bytes == 8192      # the staging buffer the kernel reserves, whatever C's type
    assert c_map(spec, 1000, 1020 if out_dtype == "float32" else 1016) is not None
    assert c_map(spec, 1000, 1018) is None  # rows not 16-byte aligned: the kernel stores C itself


def _staged_pairs(lanes: int = 128):
    """Where Kernel 5.9's store_tile_tma (C_BITS 16) puts thread t's pair j (of 8 along the box's 64
    columns) of half h, as the kernel computes it: row r = 16 warp + lane / 4 + 8 h, byte
    128 r + 16 (j ^ r % 8) + 4 (lane % 4). Returns (rows, first columns, byte offsets), shaped (t, j, h)."""
    t, j, h = np.meshgrid(np.arange(lanes), np.arange(8), np.arange(2), indexing="ij")
    warp, lane = t // 32, t % 32
    r = 16 * warp + lane // 4 + 8 * h
    return r, 8 * j + 2 * (lane % 4), 128 * r + 16 * (j ^ r % 8) + 4 * (lane % 4)


def test_the_16_bit_staging_is_tma_s_128_byte_swizzle_of_the_box_and_free_of_bank_conflicts():
    rows, cols, offsets = _staged_pairs()
    # TMA's 128-byte swizzle of a row-major box of 128-byte rows: 16-byte chunk c of row r at chunk c ^ (r % 8).
    swizzled = 128 * rows + 16 * ((2 * cols // 16) ^ rows % 8) + 2 * cols % 16
    assert np.array_equal(offsets, swizzled)
    assert len(np.unique(offsets)) == offsets.size == 64 * 64 // 2      # every pair of the box once
    for warp in range(4):
        for j in range(8):
            for h in range(2):
                banks = offsets[32 * warp:32 * warp + 32, j, h] // 4 % 32
                assert len(set(banks)) == 32, (warp, j, h)


def test_bf16_bits_round_to_nearest_even_and_decode_exactly():
    x = np.array([1.0, 1 + 2**-8, 1 + 3 * 2**-8, -2.5, 2**-130], dtype=np.float32)
    bits = bfloat16.bits_of(x)
    assert [int(b) for b in bits] == [0x3F80, 0x3F80, 0x3F82, 0xC020, 0x0008]
    assert np.array_equal(bfloat16.values_of(bits), [1.0, 1.0, 1 + 2**-6, -2.5, 2**-130])
    assert np.isnan(bfloat16.values_of(np.array([bfloat16.NAN_BITS], np.uint16)))[0]


@pytest.mark.parametrize("out_type, bits", [("float16", 11), ("bfloat16", 8)])
def test_a_16_bit_c_is_allowed_its_last_rounding_and_no_more(out_type, bits):
    rng = np.random.default_rng(0)
    ref = rng.uniform(-1, 1, (64, 64)).astype(np.float32)
    rounded = ref.astype(np.float16) if out_type == "float16" else bfloat16.values_of(bfloat16.bits_of(ref))
    assert tolerance("float32", 4096, out_type)[0] == pytest.approx(tolerance("float32", 4096)[0] + 2.0**-bits)
    assert compare_outputs(rounded, ref, "float32", 4096, rounded_to=out_type).passed
    assert not compare_outputs(rounded, ref, "float32", 4096).passed     # the fp32 rule alone refuses it
    off = rounded.astype(np.float64) * (1 + 4 * 2.0**-bits)               # four rounding units off: wrong
    assert not compare_outputs(off, ref, "float32", 4096, rounded_to=out_type).passed
    with pytest.raises(ValueError, match="rounded_to"):
        tolerance("float32", 4096, "float8")


def _tools():
    kit = find_toolkit(13)
    if kit is None or cuda_tool("cuobjdump") is None:
        skip_or_fail("TCGEMM_REQUIRE_NVRTC", "no NVRTC 13 with its headers, or no cuobjdump")
    return kit


@pytest.mark.slow     # four type builds and two memory orders of Kernel 5.9
@pytest.mark.parametrize("in_dtype, out_dtype", HOPPER_DTYPES)
@pytest.mark.parametrize("case", ["A B^T", "A^T B"])
def test_each_type_build_compiles_to_its_wgmma_and_its_stores(in_dtype, out_dtype, case):
    """bf16 inputs run HGMMA...F32.BF16; a 16-bit C is packed by F2FP (F16 or BF16 ...PACK_AB) and staged
    by 32-bit STS, an fp32 one by STS.64 without F2FP; C leaves by UTMASTG.2D; nothing spills."""
    kit = _tools()
    spec = configured("k5.9", "sm_90").with_dtypes(in_dtype, out_dtype).with_orders(*WMMA_CASES[case])
    listing = cuobjdump_sass(compile_cubin(spec.source, build_target(spec.source, "sm_90"), spec.defines, kit))
    hgmma = re.findall(r"HGMMA\.64x256x16\.F32(\.BF16)?\b", listing)
    assert hgmma and all((suffix == ".BF16") == (in_dtype == "bfloat16") for suffix in hgmma), hgmma
    pack = "F2FP.BF16.F32.PACK_AB" if in_dtype == "bfloat16" else "F2FP.F16.F32.PACK_AB"
    assert (pack in listing) == (out_dtype != "float32")
    assert ("STS.64" in listing) == (out_dtype == "float32") and "UTMASTG.2D" in listing
    assert not re.search(r"\b(LDL|STL)\b", listing), f"{spec.typed_title} {case} spills to local memory"
