import numpy as np
import pytest

from tcgemm.catalog import GEMM_KERNELS
from tcgemm.errors import OperandError
from tcgemm.validate import check_gemm_operands

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
