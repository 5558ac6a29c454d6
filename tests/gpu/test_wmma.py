"""The WMMA kernels on the GPU: every case (memory orders of A and B) on fresh random inputs, fp16 to the
fp32 tolerance and int8 bit for bit (with sums beyond int16, beta != 0 and C != 0), odd but valid shapes,
the one launch path they share with every other kernel (tcgemm.engine.gpu.gemm.prepare), every bad input's
error, and the fragment probe against tcgemm.fragments.wmma."""
import numpy as np
import pytest

from tcgemm.engine.catalog import WMMA_CASES, WMMA_KERNELS
from tcgemm.errors import OperandError

pytestmark = pytest.mark.gpu

# Multiples of 16 that leave blocks (64 x 32 of D) partly past the edge, K of one and of many steps.
SHAPES = [(16, 16, 16), (48, 80, 32), (208, 112, 400), (1024, 1024, 1024)]
SCALARS = [(1, 0), (2, -3), (-1, 1)]


@pytest.mark.parametrize("case", list(WMMA_CASES))
@pytest.mark.parametrize("key", list(WMMA_KERNELS))
def test_every_case_matches_the_reference(key, case):
    from tcgemm.fragments.gpu.wmma import check_wmma_case
    for mnk in SHAPES:
        for alpha, beta in SCALARS:
            result = check_wmma_case(key, case, *mnk, alpha=alpha, beta=beta)
            assert result.passed, f"{key} {case} {mnk} alpha={alpha} beta={beta}: {result}"


@pytest.mark.parametrize("case", list(WMMA_CASES))
def test_int8_sums_beyond_int16_are_exact(case):
    """All-127 (or -128) rows and columns make every sum 127 * 127 * K: far beyond int16, exact in int32."""
    import cupy
    from tcgemm.fragments.gpu.wmma import run_wmma, random_case, reference
    spec = WMMA_KERNELS["w1.1"]
    A, B, C = random_case(spec, case, 64, 64, 256)
    A[:] = 127
    B[:, ::2] = -128
    D = run_wmma("w1.1", A, B, C, alpha=3, beta=5)
    ref = reference(spec, A, B, C, 3, 5)
    assert int(cupy.abs(ref).max()) > 2**15 and cupy.array_equal(D, ref)


def test_int32_arithmetic_wraps():
    """alpha * AB overflows int32: the kernel's int32 arithmetic and the reference both wrap mod 2^32."""
    import cupy
    from tcgemm.fragments.gpu.wmma import run_wmma, random_case, reference
    spec = WMMA_KERNELS["w1.1"]
    A, B, C = random_case(spec, "A B", 32, 32, 64)
    A[:], B[:] = 127, 127
    D = run_wmma("w1.1", A, B, C, alpha=2**20, beta=1)
    ref = reference(spec, A, B, C, 2**20, 1)
    assert 127 * 127 * 64 * 2**20 > 2**31 and cupy.array_equal(D, ref)


def test_beta_zero_never_reads_c():
    import cupy
    from tcgemm.fragments.gpu.wmma import run_wmma, random_case
    A, B, _ = random_case(WMMA_KERNELS["w1.0"], "A B", 32, 32, 32)
    D = run_wmma("w1.0", A, B, cupy.full((32, 32), np.nan, dtype=np.float32), beta=0)
    assert bool(cupy.isfinite(D).all())


def test_transposed_views_are_read_in_place():
    """A^T B^T from .T views of row-major arrays: the column-major fragment layouts, no copy."""
    import cupy
    from tcgemm.fragments.gpu.wmma import run_wmma
    At = cupy.asarray(np.random.default_rng(0).integers(-128, 128, (48, 32)), dtype=np.int8)   # (K, M)
    Bt = cupy.asarray(np.random.default_rng(1).integers(-128, 128, (64, 48)), dtype=np.int8)   # (N, K)
    D = run_wmma("w1.1", At.T, Bt.T)
    assert cupy.array_equal(D, At.T.astype(np.int32) @ Bt.T.astype(np.int32))


def misaligned(A):
    """A copy of A that starts 16 bytes into its buffer."""
    import cupy
    shift = 16 // A.itemsize
    flat = cupy.empty(A.size + shift, dtype=A.dtype)
    moved = flat[shift:].reshape(A.shape)
    moved[...] = A
    return moved


@pytest.mark.parametrize("bad, message", [
    (lambda A, B, C: (A[:, :24].copy(), B[:24].copy(), C), "multiple of 16.*K=24; pad to 32"),
    (lambda A, B, C: (A[:40], B, C[:40]), "multiple of 16.*M=40"),
    (lambda A, B, C: (A.astype(np.float32), B, C), "A has dtype float32.*float16"),
    (lambda A, B, C: (A[:, ::2], B[::2], C), "A is non-contiguous"),
    (lambda A, B, C: (A, B[:32], C), "inner dimensions differ"),
    (lambda A, B, C: (A.get(), B, C), "A is a numpy array in host memory"),
    (lambda A, B, C: (A, B, None), "beta=2 needs a C"),
    (lambda A, B, C: (A, B, C.T), "C is column-major.*reads it row-major"),
    (lambda A, B, C: (misaligned(A), B, C), "A starts at an address that is not a multiple of 32 bytes"),
    (lambda A, B, C: (A, B, misaligned(C)), "C starts at an address that is not a multiple of 32 bytes"),
])
def test_bad_inputs_get_clear_errors(bad, message):
    from tcgemm.fragments.gpu.wmma import run_wmma, random_case
    A, B, C = random_case(WMMA_KERNELS["w1.0"], "A B", 64, 64, 64)
    with pytest.raises(OperandError, match=message):
        run_wmma("w1.0", *bad(A, B, C), beta=2)


def test_int8_takes_integer_scalars_and_unknown_keys_are_named():
    from tcgemm.fragments.gpu.wmma import run_wmma, random_case
    A, B, _ = random_case(WMMA_KERNELS["w1.1"], "A B", 16, 16, 16)
    with pytest.raises(OperandError, match="alpha=0.5: .* integer alpha and beta"):
        run_wmma("w1.1", A, B, alpha=0.5)
    with pytest.raises(OperandError, match="beta=2147483648: .* in int32's range"):
        run_wmma("w1.1", A, B, beta=2**31)
    with pytest.raises(KeyError, match="unknown WMMA kernel 'w9'.*w1.0, w1.1"):
        run_wmma("w9", A, B)


@pytest.mark.parametrize("key", list(WMMA_KERNELS))
def test_wmma_launches_through_the_prepared_gemm_of_every_kernel(key):
    """prepare() takes a WMMA kernel compiled for the orders of A and B, as it takes Kernel 4.7: a new C
    poisoned until the launch, an output of the caller's (out, C in place), prepared() reusing its checks
    on the same arrays, and a launch on another stream that waits for its set-up."""
    import cupy
    from tcgemm.engine.gpu.gemm import PreparedGemm, check_output, prepare, prepared, random_operands, reference
    spec = WMMA_KERNELS[key]
    for case, orders in WMMA_CASES.items():
        A, B, C = random_operands(208, 112, 400, dtype=spec.in_dtype, orders=orders, addend=True)
        run = prepare(spec.with_orders(*orders), A, B)
        assert isinstance(run, PreparedGemm) and run.staged == () and (run.M, run.N, run.K) == (208, 112, 400)
        poison = cupy.isnan(run.C) if spec.out_dtype == "float32" else run.C == np.iinfo(np.int32).min
        assert bool(poison.all())
        with cupy.cuda.Stream(non_blocking=True):
            run()
        cupy.cuda.Device().synchronize()
        result = check_output(run.C, reference(A, B))
        assert result.passed, f"{key} {case}: {result}"
        ref = reference(A, B, C, 3, -2)
        again = prepared(spec.with_orders(*orders), A, B, C, alpha=3, beta=-2, addend=C)
        assert prepared(spec.with_orders(*orders), A, B, C, alpha=3, beta=-2, addend=C) is again
        again()                                          # in place: C = 3 A B - 2 C
        result = check_output(C, ref)
        assert result.passed, f"{key} {case} in place: {result}"


def test_probe_sees_the_expected_fragments():
    from tcgemm.fragments.gpu.wmma import observe_all
    for v in observe_all():
        assert v.matches_expected, f"{v.kind}: {v.against_mma}, {v.copies} copies"


def test_timings_table_checks_every_row():
    from tcgemm.fragments.gpu.wmma import timings
    table = timings(512, 512, 512)
    assert len(table.rows) == 2 + 1 + len(WMMA_KERNELS) * len(WMMA_CASES)
    assert all(row[-1].startswith("PASS") for row in table.rows), table
