"""Kernel 5.0 (TMA loads) without a GPU: its catalog entry, the tensor maps it asks the driver for (and
how they reach libcuda), the bank model of the tiles TMA writes, and the refusal on older GPUs."""
import ctypes
import shutil
import subprocess
from unittest import mock

import numpy as np
import pytest

from tcgemm.engine.catalog import GEMM_KERNELS, configured, source_archs
from tcgemm.engine.kernel_types import TMA_SMEM_ALIGN, Signature
from tcgemm.errors import OperandError, UnsupportedOnGPUError
from tcgemm.smem.kernel_smem import block_step, predict
from tcgemm.engine.tma import TileMap, gemm_maps
from tcgemm.hopper.tma_tiles import swizzled_as_permuted_chunk, tile_table

K50 = GEMM_KERNELS["k5.0"]


def test_catalog_entry_runs_on_hopper_only():
    spec = configured("k5.0")
    assert K50.signature is Signature.TENSOR_MAPS and K50.archs == ("sm_90",) and source_archs(K50.source) == ("sm_90",)
    assert (spec.tile_k, spec.stages) == (64, 4)                       # as Kernel 4.4 on the H100
    assert spec.smem_bytes == configured("k4.4", "sm_90").smem_bytes + TMA_SMEM_ALIGN
    with pytest.raises(ValueError, match="Kernel 5.0.*sm_90.*sm_80"):
        configured("k5.0", "sm_80")
    with pytest.raises(ValueError, match="unknown arch 'sm_75'"):
        configured("k5.0", "sm_75")


def test_launcher_refuses_an_older_gpu_before_compiling():
    from tcgemm.engine.gpu.gemm import _kernel_function
    with mock.patch("tcgemm.engine.gpu.gemm.get_function") as compile_it:
        with pytest.raises(UnsupportedOnGPUError, match="Kernel 5.0: TMA loads needs sm_90.*sm_86"):
            _kernel_function(configured("k5.0"), "sm_86", ())
        compile_it.assert_not_called()


@pytest.mark.parametrize("tile_k", [32, 64])
def test_tensor_maps_are_one_stage_of_each_operand(tile_k):
    spec = K50.with_config(tile_k, 4)
    a, b = gemm_maps(spec, 1024, 512, 768)
    assert (a.rows, a.cols, a.box_rows, a.box_cols) == (1024, 768, 128, tile_k)
    assert (b.rows, b.cols, b.box_rows, b.box_cols) == (512, 768, 256, tile_k)
    assert a.row_stride == b.row_stride == 768 * 2
    assert a.swizzle == b.swizzle == 2 * tile_k               # a tile row's own width: 64 or 128 bytes
    assert a.box_bytes + b.box_bytes == (128 + 256) * tile_k * 2
    # cuTensorMapEncodeTiled's arguments, innermost dimension first; the swizzle as CUtensorMapSwizzle.
    assert a.encode_args(0x10000) == (6, 2, 0x10000, (768, 1024), (1536,), (tile_k, 128), (1, 1), 0,
                                      {32: 2, 64: 3}[tile_k], 3, 0)


@pytest.mark.parametrize("change, message", [
    ({"dtype": "int8"}, "TMA copies float16"),
    ({"swizzle": 48}, "swizzle spans 0, 32, 64, 128 bytes, got 48"),
    ({"box_rows": 512}, "box_rows must be 1 to 256, got 512"),
    ({"box_cols": 4}, "multiple of 16 bytes, got 4 x 2 = 8"),
    ({"box_cols": 128}, "128-byte swizzle a box row may have 128 bytes at most, got 256"),
    ({"row_stride": 1000}, "multiple of 16 bytes apart.*got 1000 bytes"),
    ({"rows": 0}, "rows must be 1 to"),
])
def test_bad_tensor_maps_are_named(change, message):
    good = TileMap("float16", 256, 512, 1024, 128, 64, 128)
    good.check(0x1000)
    with pytest.raises(OperandError, match=message):
        TileMap(**{**good.__dict__, **change}).check(0x1000)
    with pytest.raises(OperandError, match="multiple of 16 bytes, got address 0x1008"):
        good.check(0x1008)


FAKE_LIBCUDA = r"""
#include <stdint.h>
/* Records its arguments in the map, as words 0-13, to check what ctypes hands the driver. */
int cuTensorMapEncodeTiled(uint64_t *map, int type, uint32_t rank, void *address, const uint64_t *dims,
                           const uint64_t *strides, const uint32_t *box, const uint32_t *steps,
                           int interleave, int swizzle, int l2, int fill) {
    uint64_t words[14] = {type, rank, (uint64_t)address, dims[0], dims[1], strides[0], box[0], box[1],
                          steps[0], steps[1], interleave, swizzle, l2, fill};
    if ((uintptr_t)map % 64) return 1;
    for (int i = 0; i < 14; ++i) map[i] = words[i];
    return swizzle > 3;
}
int cuGetErrorString(int result, const char **text) { *text = "CUDA_ERROR_INVALID_VALUE"; return 0; }
"""


@pytest.fixture
def fake_libcuda(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build a stand-in libcuda")
    (tmp_path / "fake.c").write_text(FAKE_LIBCUDA)
    library = tmp_path / "libfake.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(library), str(tmp_path / "fake.c")], check=True)
    from tcgemm.engine.gpu import tma
    tma._libcuda.cache_clear()
    tma._encoded.cache_clear()      # no map encoded by another library
    with mock.patch("ctypes.CDLL", return_value=ctypes.CDLL(str(library))):
        yield tma
    tma._libcuda.cache_clear()
    tma._encoded.cache_clear()


def test_ctypes_path_hands_the_driver_every_argument(fake_libcuda):
    tile_map = gemm_maps(configured("k5.0"), 4096, 2048, 1024)[1]
    encoded = fake_libcuda.encode(tile_map, 0x7F0000001000, via="ctypes")
    assert encoded.dtype == np.uint8 and encoded.shape == (128,)
    assert encoded.view(np.uint64)[:14].tolist() == [6, 2, 0x7F0000001000, 1024, 2048, 2048, 64, 256, 1, 1,
                                                     0, 3, 3, 0]


def test_ctypes_path_names_a_refusal(fake_libcuda):
    with pytest.raises(OperandError, match="refused the map.*CUDA_ERROR_INVALID_VALUE"):
        fake_libcuda._encode_ctypes((6, 2, 0x1000, (64, 64), (128,), (64, 64), (1, 1), 0, 4, 0, 0))


def test_tma_swizzle_is_kernel_4_4s_permutation():
    """TMA's 128-byte swizzle over 128-byte tile rows (BK = 64) and its 64-byte swizzle over 64-byte rows
    (BK = 32) put every element where Kernel 4.4's permuted_chunk does; no swizzle does not."""
    for rows in (128, 256):
        for tile_k in (32, 64):
            assert swizzled_as_permuted_chunk(rows, tile_k)
            assert not swizzled_as_permuted_chunk(rows, tile_k, width=0)


def test_kernel_5_0_reads_as_kernel_4_4_conflict_free():
    """The ldmatrix of Kernel 5.0 are 4.4's, lane by lane (BK = 64 on sm_90), and none conflicts; the
    tiles are written by the copy engine, not by warp stores."""
    k44 = [i for i in block_step("k4.4", arch="sm_90") if i.op == "ldsm"]
    k50 = block_step("k5.0", arch="sm_90")
    assert len(k44) == len(k50) and all(i.op == "ldsm" for i in k50)
    for old, new in zip(k44, k50):
        assert (old.warp, old.array) == (new.warp, new.array)
        assert np.array_equal(old.access.addresses, new.access.addresses)
    counts = predict("k5.0", 4096, 4096, 4096, arch="sm_90")
    assert counts.ldsm.requests > 0 and counts.ldsm.conflicts == 0 and counts.st.requests == 0


def test_tile_table_says_what_tma_writes():
    table = tile_table()
    assert table.column("Operand") == ["A", "B"]
    assert table.column("TMA swizzle") == ["128B Sw<3,4,3>"] * 2
    assert table.column("= 4.4's XOR") == ["yes", "yes"] and table.column("Conflicts") == [0, 0]
    assert table.column("Wavefronts") == [4 * n for n in table.column("ldmatrix")]   # x4: 4 phases each


def test_encode_names_an_unknown_path():
    from tcgemm.engine.gpu import tma
    with pytest.raises(ValueError, match="via must be None .* or 'ctypes', got 'cffi'"):
        tma.encode(gemm_maps(configured("k5.0"), 128, 256, 64)[0], 0x1000, via="cffi")
