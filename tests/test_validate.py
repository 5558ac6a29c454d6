from types import SimpleNamespace

import numpy as np
import pytest

from tcgemm.engine.catalog import GEMM_KERNELS, WMMA_CASES, WMMA_KERNELS
from tcgemm.errors import OperandError
from tcgemm.engine.operands import INT32_MAX, check_addend, check_gemm_operands, check_gemm_shape

K10 = GEMM_KERNELS["k1.0"]   # tiles 32 x 32 x 16


def operands(M=64, N=96, K=48, dtype=np.float16):
    A = np.ones((M, K), dtype=dtype)
    B = np.asfortranarray(np.ones((K, N), dtype=dtype))
    return A, B


def test_good_operands_give_the_sizes():
    assert check_gemm_operands(K10, *operands()) == (64, 96, 48)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float64])
def test_wrong_dtype(dtype):
    A, B = operands()
    with pytest.raises(OperandError, match=f"A has dtype {np.dtype(dtype)}.*float16"):
        check_gemm_operands(K10, A.astype(dtype), B)


def test_row_major_b_is_refused_with_a_fix():
    A, B = operands()
    with pytest.raises(OperandError, match="B is row-major.*asfortranarray"):
        check_gemm_operands(K10, A, np.ascontiguousarray(B))


def test_column_major_a_is_refused():
    A, B = operands()
    with pytest.raises(OperandError, match="A is column-major.*ascontiguousarray"):
        check_gemm_operands(K10, np.asfortranarray(A), B)


def test_strided_view_is_refused():
    A, B = operands(M=128)
    with pytest.raises(OperandError, match="non-contiguous"):
        check_gemm_operands(K10, A[::2], B)


def test_inner_dimension_mismatch():
    A, _ = operands(K=48)
    _, B = operands(K=32)
    with pytest.raises(OperandError, match="inner dimensions"):
        check_gemm_operands(K10, A, B)


@pytest.mark.parametrize("M, N, K, name", [(48, 64, 32, "M=48"), (64, 40, 32, "N=40"), (64, 64, 24, "K=24")])
def test_tile_multiples(M, N, K, name):
    with pytest.raises(OperandError, match=f"multiple of .*{name}"):
        check_gemm_operands(K10, *operands(M, N, K))


def test_not_a_matrix():
    A, B = operands()
    with pytest.raises(OperandError, match="2-D"):
        check_gemm_operands(K10, A.reshape(-1), B)
    with pytest.raises(OperandError, match="list"):
        check_gemm_operands(K10, [[1.0]], B)


S2 = GEMM_KERNELS["s2"]   # SGEMM: fp32, A column-major, B row-major, tiles 128 x 128 x 8


def sgemm_operands(M=128, N=256, K=16):
    return np.asfortranarray(np.ones((M, K), np.float32)), np.ones((K, N), np.float32)


def test_sgemm_takes_fp32_with_k_slices_contiguous():
    assert check_gemm_operands(S2, *sgemm_operands()) == (128, 256, 16)


def test_sgemm_refuses_fp16_and_names_its_dtype():
    A, B = sgemm_operands()
    with pytest.raises(OperandError, match="A has dtype float16; Kernel S2.*takes float32"):
        check_gemm_operands(S2, A.astype(np.float16), B)


def test_sgemm_refuses_the_tensor_core_layout():
    A, B = sgemm_operands()
    with pytest.raises(OperandError, match="A is row-major.*needs it column-major.*asfortranarray"):
        check_gemm_operands(S2, np.ascontiguousarray(A), B)
    with pytest.raises(OperandError, match="B is column-major.*needs it row-major.*ascontiguousarray"):
        check_gemm_operands(S2, A, np.asfortranarray(B))


def test_sgemm_needs_whole_tiles():
    A, B = sgemm_operands(M=96)
    with pytest.raises(OperandError, match="needs M to be a multiple of 128"):
        check_gemm_operands(S2, A, B)


# --- arrays on the GPU, and the output C -----------------------------------------------------

class OnGpu:
    """A numpy array dressed as a cupy.ndarray on GPU `device`: what the checks read of one."""

    def __init__(self, array, device=0):
        self.array, self.device = array, SimpleNamespace(id=device)

    def __getattr__(self, name):
        return getattr(self.array, name)


def gpu_operands(M=64, N=96, K=48, device=0):
    A, B = operands(M, N, K)
    return OnGpu(A, device), OnGpu(B, device), OnGpu(np.empty((M, N), np.float32), device)


def test_gpu_operands_and_output_on_the_current_device_pass():
    assert check_gemm_operands(K10, *gpu_operands(device=1), device=1) == (64, 96, 48)


def test_host_arrays_are_refused_when_a_device_is_given():
    A, B, C = gpu_operands()
    with pytest.raises(OperandError, match=r"A is a numpy array in host memory.*cupy.asarray\(A\)"):
        check_gemm_operands(K10, A.array, B, C, device=0)
    with pytest.raises(OperandError, match="C is a numpy array in host memory"):
        check_gemm_operands(K10, A, B, C.array, device=0)
    with pytest.raises(OperandError, match="B is a list"):
        check_gemm_operands(K10, A, [[1.0]], device=0)


def test_arrays_on_another_gpu_are_refused():
    A, B, C = gpu_operands()
    with pytest.raises(OperandError, match="B lives on GPU 1, but the current device is GPU 0"):
        check_gemm_operands(K10, A, OnGpu(B.array, 1), C, device=0)


@pytest.mark.parametrize("shape", [(64, 95), (96, 64), (64 * 96,), (1, 64, 96)])
def test_output_of_the_wrong_shape_is_refused(shape):
    A, B = operands()
    with pytest.raises(OperandError, match=r"C has shape .*must have shape \(64, 96\)"):
        check_gemm_operands(K10, A, B, np.empty(shape, np.float32))


def test_output_of_the_wrong_dtype_is_refused():
    A, B = operands()
    with pytest.raises(OperandError, match="C has dtype float16; Kernel 1.0.* writes float32"):
        check_gemm_operands(K10, A, B, np.empty((64, 96), np.float16))
    hgemm = GEMM_KERNELS["h1"]                       # the fp16-output kernel
    with pytest.raises(OperandError, match="C has dtype float32; HGEMM.* writes float16"):
        check_gemm_operands(hgemm, A, B, np.empty((64, 96), np.float32))


def test_output_must_be_row_major_and_contiguous():
    A, B = operands()
    with pytest.raises(OperandError, match="C is column-major.*writes it row-major"):
        check_gemm_operands(K10, A, B, np.empty((64, 96), np.float32, order="F"))
    with pytest.raises(OperandError, match="C is non-contiguous"):
        check_gemm_operands(K10, A, B, np.empty((64, 192), np.float32)[:, ::2])


def test_kernel_5_13_writes_c_column_major_and_refuses_a_row_major_one():
    k513 = GEMM_KERNELS["k5.13"]
    A = np.ones((64, 48), np.float16)
    B = np.ones((48, 96), np.float16)           # row-major: one of the orders it compiles for
    spec = k513.with_orders("C", "C")
    assert k513.c_order == "F" and all(GEMM_KERNELS[k].c_order == "C" for k in GEMM_KERNELS if k != "k5.13")
    assert check_gemm_operands(spec, A, B, np.empty((96, 64), np.float16).T) == (64, 96, 48)
    with pytest.raises(OperandError, match=r"C is row-major.*writes it column-major.*cupy.empty\(\(96, 64\), dtype='float16'\).T"):
        check_gemm_operands(spec, A, B, np.empty((64, 96), np.float16))


def test_output_overlapping_an_input_is_refused():
    memory = np.zeros(16384, np.uint8)
    A = memory[:6144].view(np.float16).reshape(64, 48)                  # bytes [0, 6144)
    B = memory[12288:15360].view(np.float16).reshape(32, 48).T           # (48, 32) column-major
    fresh_a, fresh_b = operands(64, 32, 48)
    with pytest.raises(OperandError, match="C overlaps A in memory"):
        check_gemm_operands(K10, A, fresh_b, memory[4096:12288].view(np.float32).reshape(64, 32))
    with pytest.raises(OperandError, match="C overlaps B in memory"):
        check_gemm_operands(K10, fresh_a, B, memory[8192:16384].view(np.float32).reshape(64, 32))
    right_after_a = memory[6144:14336].view(np.float32).reshape(64, 32)  # touches A, shares no byte
    assert check_gemm_operands(K10, A, fresh_b, right_after_a) == (64, 32, 48)


# --- 32-bit indices and the grid -------------------------------------------------------------

def test_products_must_stay_below_2_to_the_31():
    check_gemm_shape(K10, 2**16, 32, 2**15 - 16)                  # M*K just under 2**31
    with pytest.raises(OperandError, match=r"M\*K=2147483648 overflows the kernels' 32-bit int indices.*below 2\*\*31"):
        check_gemm_shape(K10, 2**16, 32, 2**15)
    with pytest.raises(OperandError, match=r"K\*N=2147483648 overflows"):
        check_gemm_shape(K10, 32, 2**16, 2**15)
    with pytest.raises(OperandError, match=r"M\*N=2147483648 overflows"):
        check_gemm_shape(K10, 2**16, 2**15, 32)
    assert INT32_MAX == 2**31 - 1


def test_any_shape_kernels_count_the_padded_tiles():
    k = GEMM_KERNELS["k4.5"]
    M = 2**31 // k.tile_n - 1                                     # M*N under 2**31, M rounded up to tiles not
    assert M * k.tile_n < 2**31 <= -(-M // k.tile_m) * k.tile_m * k.tile_n
    with pytest.raises(OperandError, match=r"M\*N=\d+ \(\d+ with M, N, K rounded up to whole tiles\) overflows"):
        check_gemm_shape(k, M, k.tile_n, k.tile_k)


class Shaped:
    """A contiguous array of any size, without its memory: only what the checks read."""

    def __init__(self, shape, order, dtype="float16"):
        self.shape, self.dtype = shape, np.dtype(dtype)
        self.flags = SimpleNamespace(c_contiguous=order == "C", f_contiguous=order == "F")
        self.strides = np.empty((1, 1), self.dtype).strides      # not read: the arrays are contiguous
        self.nbytes = shape[0] * shape[1] * self.dtype.itemsize


def test_operands_too_large_for_32_bit_indices_are_refused_before_any_allocation():
    k = GEMM_KERNELS["k4.5"]
    with pytest.raises(OperandError, match=r"M\*K=2147483648 overflows"):
        check_gemm_operands(k, Shaped((2**16, 2**15), "C"), Shaped((2**15, 256), "F"))


def test_the_grid_must_fit_cuda_limits():
    rows = 65536 * K10.tile_m                                      # one block row too many along grid y
    assert rows * K10.tile_k < 2**31
    with pytest.raises(OperandError, match="65536 blocks along grid y.*at most 65535"):
        check_gemm_shape(K10, rows, K10.tile_n, K10.tile_k)
    check_gemm_shape(K10, rows - K10.tile_m, K10.tile_n, K10.tile_k)


# --- the WMMA kernels, through the same checks ------------------------------------------------

W10, W11 = WMMA_KERNELS["w1.0"], WMMA_KERNELS["w1.1"]


def aligned(shape, dtype, order="C", skip: int = 0):
    """Zeros of `shape` starting `skip` bytes past a 64-byte boundary."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.zeros(nbytes + 128, dtype=np.uint8)
    start = -raw.__array_interface__["data"][0] % 64 + skip
    return raw[start:start + nbytes].view(dtype).reshape(shape, order=order)


@pytest.mark.parametrize("case", list(WMMA_CASES))
def test_a_wmma_kernel_takes_the_orders_it_is_compiled_for(case):
    a, b = WMMA_CASES[case]
    A, B = aligned((48, 32), np.float16, a), aligned((32, 80), np.float16, b)
    assert check_gemm_operands(W10.with_orders(a, b), A, B, aligned((48, 80), np.float32)) == (48, 80, 32)
    other = {"C": "F", "F": "C"}
    with pytest.raises(OperandError, match="A is .*; Kernel W1.0.* needs it"):
        check_gemm_operands(W10.with_orders(other[a], b), A, B)
    with pytest.raises(ValueError, match="A's memory order must be 'C' .* got 'K'"):
        W10.with_orders("K", b)


def test_wmma_matrices_start_32_byte_aligned_and_the_others_16():
    spec = W10.with_orders("C", "F")
    A, B, C = aligned((48, 32), np.float16), aligned((32, 80), np.float16, "F"), aligned((48, 80), np.float32)
    with pytest.raises(OperandError, match="A starts at an address that is not a multiple of 32 bytes; "
                                           "Kernel W1.0.* 32-byte aligned addresses only"):
        check_gemm_operands(spec, aligned((48, 32), np.float16, skip=16), B)
    with pytest.raises(OperandError, match="out starts at an address that is not a multiple of 32 bytes"):
        check_gemm_operands(spec, A, B, aligned((48, 80), np.float32, skip=16))
    with pytest.raises(OperandError, match="C starts at an address that is not a multiple of 32 bytes"):
        check_addend(spec, aligned((48, 80), np.float32, skip=16), C, 48, 80, 1, 2, A, B)
    check_addend(spec, C, C, 48, 80, 2, -1, A, B)                       # in place: out=C
    with pytest.raises(OperandError, match="A starts at an address that is not a multiple of 16 bytes; "
                                           "Kernel 1.0.* copies it in 16-byte chunks"):
        check_gemm_operands(K10, aligned((64, 48), np.float16, skip=8), aligned((48, 96), np.float16, "F"))
    out = aligned((64, 96), np.float32, skip=4)                         # the mma.sync kernels' C: anywhere
    assert check_gemm_operands(K10, *operands(), out) == (64, 96, 48)


def test_wmma_int8_scales_by_int32_integers_and_fp16_by_reals():
    spec = W11.with_orders("C", "C")
    A, B = aligned((16, 16), np.int8), aligned((16, 16), np.int8)
    C, out = aligned((16, 16), np.int32), aligned((16, 16), np.int32)
    for alpha, beta in ((3, -2), (np.int32(INT32_MAX), np.int64(-INT32_MAX - 1))):
        check_addend(spec, C, out, 16, 16, alpha, beta, A, B)
    for bad in (0.5, INT32_MAX + 1, True):
        with pytest.raises(OperandError, match=f"beta={bad!r}: Kernel W1.1.* integer alpha and beta in int32's range"):
            check_addend(spec, C, out, 16, 16, 1, bad, A, B)
    A16, B16, out32 = aligned((16, 16), np.float16), aligned((16, 16), np.float16, "F"), aligned((16, 16), np.float32)
    check_addend(W10, None, out32, 16, 16, 0.5, 0, A16, B16)
    with pytest.raises(OperandError, match="beta=2 needs a C to scale"):
        check_addend(W10, None, out32, 16, 16, 1, 2, A16, B16)
    with pytest.raises(OperandError, match="Kernel 1.0.* computes A @ B only"):
        check_addend(K10, None, out32, 16, 16, 2, 0, A16, B16)
