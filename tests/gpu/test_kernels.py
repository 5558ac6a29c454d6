"""Every GEMM kernel on fresh random inputs over several shapes, and every bad-input error."""
import numpy as np
import pytest

from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.errors import KernelCompileError, OperandError
from tcgemm.engine.plan import TILES

pytestmark = pytest.mark.gpu


def shapes(spec):
    tm, tn, tk = spec.tile_m, spec.tile_n, spec.tile_k
    shapes = [(tm, tn, tk), (2 * tm, 3 * tn, 5 * tk), (384, 256, 1024), (256, 512, 3 * tk),
              (1024, 1024, 4096)]
    return [s for s in shapes if s[0] % tm == 0 and s[1] % tn == 0 and s[2] % tk == 0]


def configured(key):
    from tcgemm.engine.gpu.gemm import for_this_gpu
    return for_this_gpu(GEMM_KERNELS[key])


def skip_unless_it_runs_here(spec):
    """Skip a kernel this GPU cannot run (Kernel 5.0 before sm_90: tests/gpu/test_tma.py checks its error)."""
    from tcgemm.engine.gpu.compile import current_arch
    if reason := spec.unsupported(current_arch()):
        pytest.skip(reason)


@pytest.mark.parametrize("key", list(GEMM_KERNELS))
def test_kernel_matches_reference(key):
    from tcgemm.engine.gpu.bench import check_runner, runner
    spec = configured(key)
    skip_unless_it_runs_here(spec)
    for M, N, K in shapes(spec):
        for seed in (None, None):  # fresh inputs each time
            check = check_runner(runner(key), M, N, K, seed)
            assert check.passed, f"{key} ({spec.variant}) at {M}x{N}x{K}: {check}"


# Every configuration a launcher may pick on some target, and Kernel 3.0's stage sweep, all run here
# where they fit: the choice for sm_86/89 (BK=32) is checked on this GPU too. Kernels with static
# stages also run with 2; those with dynamic stages also with 2 at either BK.
CONFIGS = [("k3.0", 32, n) for n in (2, 3, 4, 5, 6)] + \
          [(k, s.tile_k, 2) for k, s in GEMM_KERNELS.items() if s.stages and not s.dynamic_smem and k != "k3.0"] + \
          [(k, tk, st) for k, s in GEMM_KERNELS.items() if s.dynamic_smem
           for tk, st in dict.fromkeys(s.configs + ((32, 2), (64, 2)))
           if tk == 64 or not s.arch_specific]     # Kernels 5.1-5.5: a tile row is one 128-byte swizzle row


@pytest.mark.parametrize("key, tile_k, stages", CONFIGS)
def test_every_configuration_matches_reference(key, tile_k, stages):
    from tcgemm.engine.gpu.bench import check_runner, runner
    from tcgemm.engine.gpu.device import device_info
    spec = GEMM_KERNELS[key].with_config(tile_k, stages)
    skip_unless_it_runs_here(spec)
    if spec.smem_bytes > device_info().shared_mem_per_block_optin:
        pytest.skip(f"{spec.variant} needs {spec.smem_bytes} bytes of shared memory")
    tm, tn, tk = spec.tile_m, spec.tile_n, spec.tile_k
    # K = 1 tile (fewer tiles than stages), a few tiles, and a K that is not a power of two.
    for M, N, K in [(tm, tn, tk), (2 * tm, tn, 3 * tk), (tm, 2 * tn, 17 * tk), (3 * tm, 2 * tn, 4096 - tk)]:
        check = check_runner(runner(key, spec), M, N, K)
        assert check.passed, f"{key} ({spec.variant}) at {M}x{N}x{K}: {check}"


@pytest.mark.parametrize("tile_k, stages", [(64, 4), (32, 4), (64, 2)])
def test_staged_c_epilogue_matches_reference(tile_k, stages):
    """Kernel 4.3 with STAGE_C: C goes through shared memory in two halves; every config it may run in."""
    from tcgemm.engine.gpu.bench import check_runner, runner
    spec = GEMM_KERNELS["k4.3"].with_config(tile_k, stages).with_switches("STAGE_C")
    for M, N, K in [(128, 256, tile_k), (256, 512, 5 * tile_k)]:
        check = check_runner(runner("k4.3", spec), M, N, K)
        assert check.passed, f"k4.3 ({spec.variant}) at {M}x{N}x{K}: {check}"


@pytest.mark.parametrize("key", [k for k, s in GEMM_KERNELS.items() if "SKIP_COPIES" in dict(s.switches)])
def test_skip_copies_really_skips_them(key):
    """The SKIP_COPIES measurement switch must change the result (else it measures nothing)."""
    from tcgemm.engine.gpu.bench import check_runner, runner
    spec = configured(key).with_switches("SKIP_COPIES")
    assert not check_runner(runner(key, spec), 256, 512, 16 * spec.tile_k).passed
    assert check_runner(runner(key), 256, 512, 16 * spec.tile_k).passed


ODD_SHAPES = [(1, 1, 8), (1, 300, 64), (300, 1, 64), (129, 257, 72), (1000, 999, 1000), (8, 8192, 520),
              (8192, 24, 256), (4097, 4095, 4104), (77, 333, 13), (5, 7, 3), (130, 260, 4095)]


@pytest.mark.parametrize("M, N, K", ODD_SHAPES)
def test_any_shape_kernel_matches_reference_on_odd_shapes(M, N, K):
    """Tiles only partly inside C, K tails shorter than a tile, and K % 8 != 0 (the padding path)."""
    from tcgemm.engine.gpu.bench import check_runner, runner
    from tcgemm.engine.gpu.compile import current_arch
    for key in [k for k, s in GEMM_KERNELS.items() if s.any_shape and s.unsupported(current_arch()) is None]:
        check = check_runner(runner(key), M, N, K)
        assert check.passed, f"{key} at {M}x{N}x{K}: {check}"


PLAN_SHAPES = [(129, 257, 72), (77, 333, 320), (1, 300, 1000), (300, 1, 2048), (256, 128, 13)]


@pytest.mark.parametrize("splits", [1, 2, 3])
@pytest.mark.parametrize("tile", [t.name for t in TILES])
def test_every_tile_plan_matches_reference(tile, splits):
    """Kernel 4.6 in every tile of tcgemm.engine.plan, K whole or split (some splits empty when K is short),
    on edges, K tails and the padding path."""
    from tcgemm.engine.gpu.bench import check_runner, runner
    from tcgemm.engine.gpu.device import device_info
    from tcgemm.engine.plan import tile_named
    spec = GEMM_KERNELS["k4.6"].with_tile(tile_named(tile), splits)
    if spec.smem_bytes > device_info().shared_mem_per_block_optin:
        pytest.skip(f"{spec.variant} needs {spec.smem_bytes} bytes of shared memory")
    for M, N, K in PLAN_SHAPES:
        check = check_runner(runner("k4.6", spec), M, N, K)
        assert check.passed, f"k4.6 ({spec.variant}) at {M}x{N}x{K}: {check}"


def test_split_k_is_deterministic():
    """The partials of a split are added in a fixed order: two runs give the same bits."""
    import cupy
    from tcgemm.engine.gpu.bench import random_operands
    from tcgemm.engine.gpu.gemm import prepare
    from tcgemm.engine.plan import tile_named
    spec = GEMM_KERNELS["k4.6"].with_tile(tile_named("64x64"), 4)
    A, B = random_operands(200, 300, 4096)
    run = prepare(spec, A, B)
    run()
    first = run.C.copy()
    run()
    assert bool(cupy.array_equal(first, run.C))


def test_any_shape_kernel_writes_exactly_c():
    """Nothing is written past C: the output sits inside a NaN-filled buffer whose margins must stay NaN."""
    import cupy
    from tcgemm.engine.gpu.bench import random_operands, reference
    from tcgemm.engine.gpu.gemm import launch
    M, N, K = 131, 263, 72
    A, B = random_operands(M, N, K)
    pool = cupy.full(M * N + 4096, np.nan, dtype=np.float32)
    C = pool[:M * N].reshape(M, N)
    from tcgemm.engine.plan import tile_named
    for spec in (configured("k4.5"), GEMM_KERNELS["k4.6"].with_tile(tile_named("64x128"), 3)):
        C[...] = np.nan
        launch(spec, A, B, C)
        assert bool(cupy.isnan(pool[M * N:]).all()), spec.variant
        assert float(cupy.abs(C - reference(A, B)).max()) < 1e-2, spec.variant


def test_occupancy_model_agrees_with_the_driver():
    from tcgemm.pipelines.gpu.occupancy import compiled_occupancy
    from tcgemm.engine.gpu.compile import current_arch
    for key in [k for k, spec in GEMM_KERNELS.items() if spec.unsupported(current_arch()) is None]:
        occ = compiled_occupancy(configured(key))
        assert occ.local_bytes == 0, f"{key} spills to local memory"
        assert occ.agrees, f"{key}: model {occ.model} but the driver says {occ.driver_blocks_per_sm}"


def test_cublas_baseline_matches_reference():
    from tcgemm.engine.gpu.bench import check_runner, runner
    for M, N, K in [(128, 256, 64), (1024, 512, 2048)]:
        check = check_runner(runner("cublas"), M, N, K)
        assert check.passed, str(check)


def test_every_output_element_is_written():
    import cupy
    from tcgemm.engine.gpu.bench import random_operands
    from tcgemm.engine.gpu.gemm import run_kernel
    A, B = random_operands(64, 64, 32)
    C = run_kernel("k1.1", A, B)
    assert C.dtype == np.float32 and bool(cupy.isfinite(C).all())


@pytest.fixture
def good():
    from tcgemm.engine.gpu.bench import random_operands
    return random_operands(64, 64, 32)


def _other_order(x, order):
    import cupy
    return cupy.ascontiguousarray(x) if order == "F" else cupy.asfortranarray(x)


@pytest.mark.parametrize("key", list(GEMM_KERNELS))
def test_bad_inputs_are_named(key):
    import cupy
    from tcgemm.engine.gpu.bench import random_operands
    from tcgemm.engine.gpu.gemm import run_kernel
    spec = configured(key)
    A, B = random_operands(64 if spec.tile_m <= 64 else spec.tile_m, 64 if spec.tile_n <= 64 else spec.tile_n,
                           32, dtype=spec.in_dtype)
    other_dtype = "float32" if spec.in_dtype == "float16" else "float16"
    layout_name = {"C": "row-major", "F": "column-major"}
    cases = [
        ((cupy.asnumpy(A), B), "host"),
        ((A.astype(other_dtype), B), f"dtype {other_dtype}"),
        ((A, _other_order(B, spec.b_order)), f"B is {layout_name['F' if spec.b_order == 'C' else 'C']}"),
        ((_other_order(A, spec.a_order), B), f"A is {layout_name['F' if spec.a_order == 'C' else 'C']}"),
        ((A[:, :16], B), "non-contiguous|inner dimensions"),
        ((A, B[:16]), "non-contiguous|inner dimensions"),
    ]
    M = spec.tile_m * 2 + (8 if spec.tile_m > 8 else 1)
    if not spec.any_shape:
        cases.append((random_operands(M, spec.tile_n, spec.tile_k, dtype=spec.in_dtype), f"multiple of {spec.tile_m}"))
    for (a, b), pattern in cases:
        with pytest.raises(OperandError, match=pattern):
            run_kernel(key, a, b)


def test_unknown_kernel(good):
    from tcgemm.engine.gpu.gemm import run_kernel
    with pytest.raises(KeyError, match="k1.0"):
        run_kernel("nope", *good)


def test_compile_error_shows_the_nvrtc_log():
    import cupy
    from tcgemm.engine.gpu.compile import _compile
    arch = f"sm_{cupy.cuda.Device().compute_capability}"
    with pytest.raises(KernelCompileError, match="broken.cu(.|\n)*undefined_name"):
        _compile("broken.cu", 'extern "C" __global__ void k() { undefined_name = 1; }', "test", arch)


def test_bench_times_and_checks():
    from tcgemm.engine.gpu.bench import CUBLAS, bench
    results = bench(["k1.1", "h1"], 512, 512, 512, reps=5, warmup=2, log=None)
    assert [r.name for r in results] == [CUBLAS, GEMM_KERNELS["k1.1"].title, GEMM_KERNELS["h1"].title]
    assert all(r.passed and r.timing.median > 0 for r in results)
