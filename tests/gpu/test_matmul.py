"""tcgemm.matmul on the GPU: every memory-order case of A and B (Kernel 4.7 for fp16, WMMA IMMA for
int8, exact) on odd shapes, on views with offsets (aligned and not), with alpha, beta and C, every
tile plan and split of Kernel 4.7, in place, and every bad input's error."""
import numpy as np
import pytest

from tcgemm.engine.catalog import WMMA_CASES
from tcgemm.errors import OperandError
from tcgemm.engine.plan import TILES

pytestmark = pytest.mark.gpu

CASES = list(WMMA_CASES)
# Odd M, N and K (edges inside a 16-byte chunk), one row or column, K shorter than one tile, a whole tile.
SHAPES = [(129, 257, 75), (1000, 1003, 1007), (1, 515, 33), (77, 1, 130), (5, 9, 3), (256, 256, 256)]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("offset", [0, 8, 3])
def test_every_case_and_offset_matches_the_reference(case, offset):
    from tcgemm.engine.gpu.matmul import check_matmul_order
    for mnk in SHAPES:
        for alpha, beta in ((1, 0), (2, -0.5)):
            result = check_matmul_order(case, *mnk, alpha, beta, offset=offset)
            assert result.passed, f"{case} {mnk} offset {offset} alpha={alpha} beta={beta}: {result}"


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("tile", [t.name for t in TILES])
def test_every_tile_and_split_in_every_case(case, tile):
    from tcgemm.engine.gpu.matmul import check_matmul_order
    for splits in (1, 3):
        result = check_matmul_order(case, 129, 257, 200, 1.5, 2, tile=f"{tile}/{splits}")
        assert result.passed, f"{case} {tile}/{splits}: {result}"


@pytest.mark.parametrize("case", CASES)
def test_int8_is_exact_at_odd_shapes(case):
    from tcgemm.engine.gpu.matmul import check_matmul_order
    for mnk in ((129, 257, 75), (48, 80, 32), (3, 5, 700)):
        result = check_matmul_order(case, *mnk, 3, -2, dtype="int8", offset=1)
        assert result.passed, f"int8 {case} {mnk}: {result}"


def test_aligned_operands_are_not_copied_and_unaligned_ones_are():
    import cupy
    from tcgemm.engine.gpu.gemm import for_this_gpu, kernel_spec, prepare
    from tcgemm.engine.gpu.matmul import case_operands
    spec = for_this_gpu(kernel_spec("k4.7"))
    for case, (a, b) in WMMA_CASES.items():
        A, B, _ = case_operands(case, 256, 384, 512)
        assert prepare(spec.with_orders(a, b), A, B).staged == ()
        A, B, _ = case_operands(case, 256, 384, 512, offset=3)
        assert prepare(spec.with_orders(a, b), A, B).staged == ("A", "B")
        A, B, _ = case_operands(case, 257, 385, 513)    # tight rows of an odd length
        staged = prepare(spec.with_orders(a, b), A, B).staged
        assert staged == ("A", "B"), (case, staged)
    A = cupy.ones((64, 64), dtype=np.float16)[1:]         # a row-major view one row in: aligned
    assert prepare(spec, A, cupy.ones((64, 40), dtype=np.float16, order="F")).staged == ()


def test_row_major_cupy_arrays_and_transposed_views():
    import cupy
    import tcgemm
    rng = cupy.random.default_rng(1)
    A = (rng.random((300, 200), dtype=np.float32) - 0.5).astype(np.float16)
    B = (rng.random((200, 170), dtype=np.float32) - 0.5).astype(np.float16)
    ref = A.astype(np.float32) @ B.astype(np.float32)
    for a, b in ((A, B), (cupy.ascontiguousarray(A.T).T, B), (A, cupy.ascontiguousarray(B.T).T)):
        D = tcgemm.matmul(a, b)
        assert D.dtype == np.float32 and D.flags.c_contiguous
        assert float(cupy.abs(D - ref).max()) < 1e-2
    Dt = tcgemm.matmul(B.T, A.T)                           # (A B)^T from the transposed views
    assert float(cupy.abs(Dt - ref.T).max()) < 1e-2


def test_out_may_be_c_in_place():
    import cupy
    import tcgemm
    from tcgemm.engine.gpu.matmul import case_operands
    A, B, C = case_operands("A B", 200, 136, 96)
    ref = 2 * (A.astype(np.float32) @ B.astype(np.float32)) + 3 * C
    out = tcgemm.matmul(A, B, out=C, alpha=2, beta=3, C=C)
    assert out is C and float(cupy.abs(C - ref).max()) < 1e-2


def test_bad_inputs_get_clear_errors():
    import cupy
    import tcgemm
    A = cupy.ones((64, 32), dtype=np.float16)
    B = cupy.ones((32, 48), dtype=np.float16)
    wide = cupy.ones((64, 64), dtype=np.float16)
    with pytest.raises(OperandError, match="non-contiguous"):
        tcgemm.matmul(wide[:, ::2], B)
    with pytest.raises(OperandError, match="float16 or two int8"):
        tcgemm.matmul(A.astype(np.float32), B)
    with pytest.raises(OperandError, match="inner dimensions"):
        tcgemm.matmul(A, B[:16])
    with pytest.raises(OperandError, match="beta=2 needs a C"):
        tcgemm.matmul(A, B, beta=2)
    with pytest.raises(OperandError, match="C has shape"):
        tcgemm.matmul(A, B, beta=1, C=cupy.ones((48, 64), dtype=np.float32))
    with pytest.raises(OperandError, match="out has dtype"):
        tcgemm.matmul(A, B, out=cupy.empty((64, 48), dtype=np.float16))
    buffer = cupy.zeros(64 * 48 * 2, dtype=np.float32)
    with pytest.raises(OperandError, match="C overlaps out"):
        tcgemm.matmul(A, B, out=buffer[:64 * 48].reshape(64, 48), beta=1, C=buffer[8:8 + 64 * 48].reshape(64, 48))
    with pytest.raises(OperandError, match="host memory"):
        tcgemm.matmul(cupy.asnumpy(A), B)
    with pytest.raises(OperandError, match="needs it column-major"):
        tcgemm.matmul(A, B, kernel="k4.6")
