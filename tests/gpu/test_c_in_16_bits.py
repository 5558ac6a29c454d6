"""Kernels 5.9 (C in 16 bits), 5.10 (staged by stmatrix), 5.11 and 5.12 (each tile width), 5.13 (C
column-major), 5.14 (each cluster shape) and 5.15 (64-row tiles) on the GPU: every (input, output) type build in every memory-order case, at odd shapes (C stored by TMA where its rows are
16-byte aligned, by the threads elsewhere; several waves of tiles) and on views that are not 16-byte
aligned, against the fp32 product with the 16-bit C's last rounding; Kernel 5.12's result the same in every
run; the cuBLAS baselines of the same types under the same check; compute-sanitizer on the bf16 build."""
import pytest

from tcgemm.engine.catalog import HOPPER_DTYPES, WMMA_CASES

pytestmark = pytest.mark.gpu

# (129, 257, 75): N odd, threads store C; (129, 264, 75) and (640, 768, 64): TMA stores a 16-bit C; one row;
# (3000, 3000, 200): several waves of tiles at every width (a tile of one box of C stores while the next
# fills the other buffer), and Kernel 5.12's split of the last ones.
SHAPES = [(129, 257, 75), (129, 264, 75), (1000, 1003, 1007), (640, 768, 64), (1, 4096, 4096), (3000, 3000, 200)]


@pytest.fixture(scope="module")
def orders():
    from tcgemm.engine.catalog import GEMM_KERNELS
    from tcgemm.engine.gpu.compile import current_arch
    if reason := GEMM_KERNELS["k5.9"].unsupported(current_arch()):
        pytest.skip(reason)
    from tcgemm.hopper.gpu import operand_orders
    return operand_orders


# Kernels 5.11 and 5.12 at each width; "/256" is Kernel 5.9's tile. Kernel 5.14 in each cluster shape
# ("/64/1x2": 64 columns, clusters of 1 x 2 blocks), and 5.15 (64-row tiles) likewise; their 32-wide tiles
# read a column-major (K-major) B only.
KEYS = ["k5.9", "k5.10", *(f"{key}/{w}" for key in ("k5.11", "k5.12") for w in (64, 128, 192, 256)), "k5.13/64",
        "k5.13/128", "k5.14/256/2x2", "k5.14/64/2x2", "k5.14/192/2x1", "k5.14/64/1x2", "k5.14/128/1x2",
        "k5.14/32/1x2", "k5.15/32/1x2", "k5.15/64/1x2", "k5.15/64/2x1", "k5.15/128/2x1", "k5.15/256/2x1"]
# Shapes where Kernels 5.14 and 5.15 copy only some of a tile's pieces: M of 40 and 64 (the second 64 rows of A's
# tile past M), N of 100 (the second block of a 2 x 2 cluster past N as well).
SHORT_SHAPES = [(40, 300, 130), (64, 4096, 512), (200, 100, 64)]


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize("dtypes", HOPPER_DTYPES, ids=["->".join(d) for d in HOPPER_DTYPES])
@pytest.mark.parametrize("case", list(WMMA_CASES))
def test_every_type_and_order_matches_reference(orders, dtypes, case, key):
    key, width, cluster = orders.variant_key(key)
    if width == 32 and WMMA_CASES[case][1] == "C":
        pytest.skip("32-wide tiles take a column-major B only")
    for M, N, K in SHAPES + (SHORT_SHAPES if key in ("k5.14", "k5.15") else []):
        for offset in (0, 3) if (M, N, K) == SHAPES[0] else (0,):
            result = orders.check_kernel_order(case, M, N, K, offset, key=key, dtypes=dtypes, tile_n=width,
                                               cluster=cluster)
            assert result.passed, f"{key} {width} {cluster} {dtypes} {case} at {M}x{N}x{K}, offset {offset}: {result}"


def test_a_32_wide_tile_refuses_a_row_major_b_by_name(orders):
    from tcgemm.errors import OperandError
    with pytest.raises(OperandError, match="at 32 columns reads B column-major only"):
        orders.check_kernel_order("A B", 64, 4096, 512, key="k5.14", tile_n=32, cluster=(1, 2))


def test_a_wrong_rounding_would_fail_the_check(orders):
    """The check is tight enough to see a C two bf16 steps off (a rounding is at most half of one): the
    tolerance is the accumulator's plus a single rounding."""
    import cupy

    from tcgemm.engine.gpu.gemm import case_operands, check_output, prepare, reference
    spec = orders.spec_for("A B^T", "k5.9").with_dtypes("bfloat16", "bfloat16")
    A, B, _ = case_operands("A B^T", 256, 256, 512, dtype="bfloat16")
    run = prepare(spec, A, B)
    run()
    assert check_output(run.C, reference(A, B), accumulator="float32").passed
    nudged = run.C + cupy.uint16(2)      # every element's magnitude two units in the last place up
    assert not check_output(nudged, reference(A, B), accumulator="float32").passed


@pytest.mark.parametrize("key", ["cublas-fp16-c", "cublas-bf16", "cublas-bf16-c"])
def test_the_cublas_baselines_of_the_same_types_pass_the_same_check(key):
    from tcgemm.engine.gpu.bench import check_runner, runner
    result = check_runner(runner(key), 1024, 1024, 4096)
    assert result.passed, f"{key}: {result}"


@pytest.mark.parametrize("key", ["k5.9", "k5.10", "k5.11/64", "k5.11/128", "k5.11/192", "k5.13/64", "k5.14/64/2x2",
                                 "k5.14/64/1x2", "k5.15/64/1x2", "k5.15/64/2x1"])
@pytest.mark.parametrize("tool", ["memcheck", "racecheck", "synccheck"])
@pytest.mark.parametrize("shape", [("129", "257", "75"), ("129", "264", "75")])
def test_sanitizer_is_clean_on_the_bf16_build(orders, tool, shape, key):
    from tests.gpu.test_sanitizer import assert_clean
    assert_clean(tool, "tcgemm.hopper.gpu.operand_orders", "A^T B", *shape, "0", key, "bfloat16,bfloat16")


# Kernel 5.12's splits: all of a problem smaller than a wave (1000 x 1003 x 1007, 129 x 257 x 1000), the last
# wave and the one before (3000 x 3000 x 200, 4096 x 4096 x 256 at 256 wide), none (whole waves).
SPLITS = [(1000, 1003, 1007), (129, 257, 1000), (3000, 3000, 200), (4096, 4096, 256), (256, 16896, 128)]


@pytest.mark.parametrize("width", [64, 128, 192, 256])
def test_stream_k_gives_the_same_bits_in_every_run(orders, width):
    import cupy

    from tcgemm.engine.gpu.gemm import case_operands, check_output, prepare, reference
    spec = orders.spec_for("A B^T", "k5.12").with_dtypes("bfloat16", "bfloat16").with_tile_n(width)
    for M, N, K in SPLITS:
        A, B, _ = case_operands("A B^T", M, N, K, dtype="bfloat16")
        run = prepare(spec, A, B)
        run()
        first = run.C.copy()
        for _ in range(3):        # each run finds its tiles' counters back at zero
            run.C.fill(0)
            run()
            assert bool(cupy.all(run.C.view(cupy.uint16) == first.view(cupy.uint16))), (width, M, N, K)
        assert check_output(run.C, reference(A, B), accumulator="float32").passed, (width, M, N, K)


@pytest.mark.parametrize("key", ["k5.12/64", "k5.12/192", "k5.12/256"])
@pytest.mark.parametrize("tool", ["memcheck", "racecheck", "synccheck"])
def test_sanitizer_is_clean_on_stream_k_pieces(orders, tool, key):
    from tests.gpu.test_sanitizer import assert_clean
    assert_clean(tool, "tcgemm.hopper.gpu.operand_orders", "A^T B", "129", "257", "1000", "0", key, "bfloat16,bfloat16")
