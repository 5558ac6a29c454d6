"""Kernel D1 on the GPU, every input type this GPU has: right on odd shapes and on every tile plan (split K
included), int8 bit for bit, its cuBLAS baseline right on the same inputs, and clear errors; fp8 refused
in one line before sm_89."""
import numpy as np
import pytest

from tcgemm.engine.catalog import ELEMENTS

pytestmark = pytest.mark.gpu

TYPES = list(ELEMENTS)
# Odd M, N; K a multiple of 16 bytes of every type (200 fp16, not of int8: staged and zero-padded) or of none (203).
ODD = [(77, 129, 200), (77, 129, 203), (1, 8, 24), (300, 520, 1000)]
TILE_PLANS = [("128x256", 1), ("128x128", 3), ("64x128", 2), ("64x64", 1), ("32x128", 4), ("16x64", 2)]


def _types():
    from tcgemm.numerics.gpu import data_types
    return data_types


def _skip_if_lacking(name):
    if reason := _types().skipped(name):
        pytest.skip(reason)


@pytest.mark.parametrize("name", TYPES)
@pytest.mark.parametrize("M, N, K", ODD)
def test_every_type_is_right_on_odd_shapes(name, M, N, K):
    dt = _types()
    _skip_if_lacking(name)
    A, B, ref = dt.operands(name, M, N, K, seed=M + K)
    result = dt.check_type_output(name, dt.run_type(name, A, B), ref, K)
    assert result.passed, f"{name} {M}x{N}x{K}: {result}"


@pytest.mark.parametrize("name", TYPES)
@pytest.mark.parametrize("tile, splits", TILE_PLANS)
def test_every_tile_plan_of_every_type(name, tile, splits):
    from tcgemm.engine.plan import tile_named
    dt = _types()
    _skip_if_lacking(name)
    M, N, K = 129, 257, 520
    A, B, ref = dt.operands(name, M, N, K, seed=splits)
    kernel = dt.spec(name).with_tile(tile_named(tile), splits)
    result = dt.check_type_output(name, dt.run_type(name, A, B, kernel), ref, K)
    assert result.passed, f"{name} {tile}/{splits}: {result}"


def test_int8_is_exact_beyond_fp32_and_across_split_k():
    """Sums of 127 * 127 over K = 8192 reach 1.3e8, past fp32's 2^24: exact in int32 accumulators, and
    in the int32 additions of the split-K partials."""
    import cupy
    from tcgemm.engine.plan import tile_named
    dt = _types()
    M, N, K = 64, 72, 8192
    A = cupy.full((M, K), 127, dtype=np.int8)
    A[::3] = -128
    B = cupy.asfortranarray(cupy.full((K, N), 127, dtype=np.int8))
    ref = A.astype(np.float64) @ B.astype(np.float64)
    assert float(cupy.abs(ref).max()) > 2**24
    for splits in (1, 4):
        C = dt.run_type("int8", A, B, dt.spec("int8").with_tile(tile_named("64x64"), splits))
        assert C.dtype == np.int32 and dt.check_type_output("int8", C, ref, K).passed


@pytest.mark.parametrize("name", TYPES)
def test_the_cublas_baseline_is_right_on_the_same_inputs(name):
    from tcgemm.engine.gpu.gemm import poisoned
    dt = _types()
    _skip_if_lacking(name)
    M, N, K = 256, 384, 512
    A, B, ref = dt.operands(name, M, N, K, seed=7)
    C = poisoned((M, N), ELEMENTS[name].out_dtype)
    run = dt.cublas_baseline(name, A, B, C)
    if run is None:
        pytest.skip(f"cuBLAS has no {name} x {name} GEMM")
    run()
    result = dt.check_type_output(name, C, ref, K)
    if name == "e4m3":      # cuBLASLt's fp8 GEMM misses the fp32 tolerance on the H100 (2e-4 there, at any K):
        assert result.rel_fro < 1e-3, f"cuBLASLt e4m3: {result}"    # the right product, less precise
    else:
        assert result.passed, f"cuBLAS {name}: {result}"


def test_host_encoded_operands_give_the_product_of_their_values():
    """tcgemm.numerics.elements.encode on the host, then the kernel: bf16 bits in, the fp64 product of the rounded
    values out (within the fp32 accumulator's tolerance)."""
    import cupy
    from tcgemm.numerics.elements import decode, encode
    dt = _types()
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-2, 2, (40, 96)), rng.uniform(-2, 2, (96, 24))
    A, B = encode(a, "bf16"), np.asfortranarray(encode(b, "bf16"))
    C = dt.run_type("bf16", cupy.asarray(A), cupy.asfortranarray(cupy.asarray(B)))
    result = dt.check_type_output("bf16", C, cupy.asarray(decode(A, "bf16") @ decode(B, "bf16")), 96)
    assert result.passed, str(result)


def test_fp8_is_refused_in_one_line_or_runs():
    from tcgemm.errors import UnsupportedOnGPUError
    from tcgemm.engine.gpu.compile import current_arch
    dt = _types()
    if int(current_arch()[3:]) >= 89:
        assert dt.skipped("e4m3") is None and dt.skipped("e5m2") is None
        return
    for name in ("e4m3", "e5m2"):
        with pytest.raises(UnsupportedOnGPUError, match=rf"^this GPU \(sm_\d+\) has no .{name} mma.sync"):
            dt.spec(name)


def test_bad_operands_get_clear_errors():
    import cupy
    from tcgemm.errors import OperandError
    dt = _types()
    half = cupy.zeros((64, 64), np.float16)
    with pytest.raises(OperandError, match=r"\(bf16 inputs\) takes bf16 inputs as their bit patterns, uint16"):
        dt.run_type("bf16", half, cupy.asfortranarray(half))
    with pytest.raises(OperandError, match=r"B is row-major .*\(int8 inputs\) needs it column-major"):
        dt.run_type("int8", cupy.zeros((64, 32), np.int8), cupy.zeros((32, 48), np.int8))
    with pytest.raises(ValueError, match="unknown input type 'fp64'"):
        dt.run_type("fp64", half, half)
    with pytest.raises(ValueError, match="cuBLASLt has no fp8 GEMM with e5m2 x e5m2"):
        dt.cublas.prepare_lt_fp8(cupy.zeros((16, 16), np.uint8), cupy.zeros((16, 16), np.uint8, order="F"),
                                 cupy.zeros((16, 16), np.float32), "e5m2")


def test_the_comparison_table_has_a_row_per_type_and_the_ffma_row():
    dt = _types()
    rows, skips = dt.results(256, 256, 256, reps=3, ceiling=False)
    names = [n for n in TYPES if not dt.skipped(n)]
    assert [r.label.split(" ")[0] for r in rows[:-1]] == names and rows[-1].label.startswith("fp32, FFMA")
    assert all(r.kernel_check in ("PASS", "exact") for r in rows), [(r.label, r.kernel_check) for r in rows]
    table = dt.table(rows, skips, 256, 256, 256)
    assert len(table.rows) == len(rows) and len(table.notes) == 2 + len(skips)
