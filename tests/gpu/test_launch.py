"""One checked launch path: prepare() checks the operands and fetches the kernel function once, and
its launch does nothing else (host time bounds: benchmark assertions, on the GPU machine only);
launch() and gemm() go through it; a launch on another stream comes after its set-up; bad operands are
refused before anything is launched; the kernel function is looked up again only when its source changes."""
import functools
import os
import time

import numpy as np
import pytest

from tcgemm import KERNEL_DIR
from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.errors import OperandError

pytestmark = pytest.mark.gpu

PREPARED_US = 20.0      # a prepared launch: CuPy's kernel call and nothing else
CHECKED_US = 30.0       # launch() again on the same arrays: the signature compared, then the launch
GEMM_US = 150.0         # gemm(): the checks, the configuration for this GPU and a new NaN-filled C (a CuPy
                        # fill kernel): 72-122 µs on the H100 from one machine start to the next; re-reading
                        # the sources on every call, as before issue 14, added 150-190 µs


def host_us_per_call(call, calls: int = 100, batches: int = 11) -> float:
    """Median over batches of the host time of one call(), in microseconds."""
    import cupy
    call()                           # compile, and allow the dynamic shared memory, once
    cupy.cuda.Device().synchronize()
    per_call = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        per_call.append((time.perf_counter() - start) / calls * 1e6)
        cupy.cuda.Device().synchronize()
    return float(np.median(per_call))


def one_tile(key):
    """The kernel `key` as this GPU runs it, and operands of one tile of it."""
    import cupy
    from tcgemm.engine.gpu.bench import random_operands
    from tcgemm.engine.gpu.gemm import for_this_gpu
    spec = for_this_gpu(GEMM_KERNELS[key])
    M, N, K = spec.tile_m, spec.tile_n, spec.tile_k
    A, B = random_operands(M, N, K)
    return spec, A, B, cupy.empty((M, N), dtype=spec.out_dtype)


@pytest.mark.parametrize("key", ["k1.0", "k4.5"])
def test_launches_cost_little_host_time(key):
    from tcgemm.engine.gpu.gemm import run_kernel, launch, prepare
    spec, A, B, C = one_tile(key)
    prepared = host_us_per_call(prepare(spec, A, B, C))
    checked = host_us_per_call(lambda: launch(spec, A, B, C))
    new_c = host_us_per_call(lambda: run_kernel(key, A, B))
    print(f"{key}: host time per call: prepared {prepared:.1f} us, launch() {checked:.1f} us, "
          f"gemm() {new_c:.1f} us")
    assert prepared < PREPARED_US, f"{key}: a prepared launch takes {prepared:.1f} us of host time"
    assert checked < CHECKED_US, f"{key}: launch() takes {checked:.1f} us of host time"
    assert new_c < GEMM_US, f"{key}: gemm() takes {new_c:.1f} us of host time"


@pytest.mark.parametrize("key", ["k4.5", "cublas"])
def test_the_l2_flush_outlasts_the_host_time_of_a_timed_launch(key):
    """tcgemm.engine.gpu.timing records the start event right after the flush: the host must have enqueued
    the events and the launch before the GPU is through the flush, else the start event is recorded
    on an idle GPU and the host's launch time is counted in the kernel's."""
    import cupy
    from tcgemm.engine.gpu.bench import runner
    from tcgemm.engine.gpu.timing import L2Flush, time_launches
    _, A, B, C = one_tile("k4.5")
    run, start, end = runner(key).prepare_launch(A, B, C), cupy.cuda.Event(), cupy.cuda.Event()

    def timed_launch():
        start.record()
        run()
        end.record()
    host = host_us_per_call(timed_launch)
    flush = time_launches(L2Flush(), reps=50, flush_l2=False).median * 1e6
    print(f"{key}: host time of events + launch {host:.1f} us; GPU time of the L2 flush {flush:.1f} us")
    assert host < flush


# One thread that spins on the SM clock: 2**28 cycles, 0.1-0.3 s at the clocks of the book's GPUs.
SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}"""


@functools.lru_cache(maxsize=None)
def _spin():
    import cupy
    return cupy.RawKernel(SPIN, "spin")


def keep_busy(stream, cycles: int = 2**28) -> None:
    """Queue a kernel on `stream` that keeps it busy for a while (it occupies one thread of one SM)."""
    with stream:
        _spin()((1,), (1,), (np.int64(cycles),))


@pytest.mark.parametrize("set_up_on", ["legacy", "non-blocking"])
@pytest.mark.parametrize("key, M, N, K, splits", [
    ("k4.5", 256, 512, 1024, None),
    ("k4.5", 131, 263, 70, None),           # A and B staged into zeroed, padded buffers
    ("k4.6", 200, 300, 4096, 4),            # split K: a workspace, then reduce_splits into C
])
def test_a_launch_on_another_stream_waits_for_its_set_up(set_up_on, key, M, N, K, splits):
    """prepare() fills the new C with NaN (and zeroes staging buffers) on the stream current there; a
    launch on a non-blocking stream, which nothing orders after that one, must still come after it.
    The set-up stream is kept busy, so its fill runs long after an unordered launch would have."""
    import cupy
    from tcgemm.engine.gpu.bench import random_operands, reference
    from tcgemm.engine.gpu.gemm import for_this_gpu, prepare
    from tcgemm.engine.plan import tile_named
    spec = for_this_gpu(GEMM_KERNELS[key])
    if splits:
        spec = GEMM_KERNELS[key].with_tile(tile_named("64x64"), splits)
    A, B = random_operands(M, N, K)
    prepare(spec, A, B)()                  # compiled and loaded before the race
    keep_busy(cupy.cuda.Stream.null, 1)
    cupy.cuda.Device().synchronize()
    set_up = cupy.cuda.Stream.null if set_up_on == "legacy" else cupy.cuda.Stream(non_blocking=True)
    launch_on = cupy.cuda.Stream(non_blocking=True)
    keep_busy(set_up)
    with set_up:
        run = prepare(spec, A, B)
    assert run.staged == (("A", "B") if K % 8 else ())
    with launch_on:
        run()
    cupy.cuda.Device().synchronize()
    assert not bool(cupy.isnan(run.C).any()), f"{key}: C still holds the NaN of its set-up"
    assert float(cupy.abs(run.C - reference(A, B)).max()) < 1e-2


@pytest.mark.parametrize("K", [72, 70])          # 70: the any-shape kernel's K-padding path
def test_a_prepared_launch_reads_its_operands_at_each_call(K):
    import cupy
    from tcgemm.engine.gpu.bench import random_operands, reference
    from tcgemm.engine.gpu.gemm import for_this_gpu, prepare
    M, N = 131, 263
    A, B = random_operands(M, N, K)
    run = prepare(for_this_gpu(GEMM_KERNELS["k4.5"]), A, B)
    assert bool(cupy.isnan(run.C).all()) and (run.M, run.N, run.K) == (M, N, K)
    run()
    assert float(cupy.abs(run.C - reference(A, B)).max()) < 1e-2
    A *= -2                                                      # in place: the launch sees it
    B[:, 0] = 1
    run()
    assert float(cupy.abs(run.C - reference(A, B)).max()) < 2e-2


@pytest.mark.parametrize("shape, dtype, match", [
    ((128, 257), "float32", r"C has shape \(128, 257\); .*must have shape \(128, 256\)"),
    ((256, 128), "float32", "C has shape"),
    ((128, 256), "float16", "C has dtype float16; .* writes float32"),
])
def test_an_output_of_the_wrong_shape_or_dtype_is_refused_untouched(shape, dtype, match):
    import cupy
    from tcgemm.engine.gpu.bench import random_operands
    from tcgemm.engine.gpu.gemm import for_this_gpu, launch, prepare
    A, B = random_operands(128, 256, 64)
    C = cupy.full(shape, np.nan, dtype=dtype)
    spec = for_this_gpu(GEMM_KERNELS["k4.5"])
    for attempt in (lambda: launch(spec, A, B, C), lambda: prepare(spec, A, B, C)):
        with pytest.raises(OperandError, match=match):
            attempt()
    cupy.cuda.Device().synchronize()
    assert bool(cupy.isnan(C).all())


def test_host_arrays_and_an_output_over_an_input_are_refused():
    import cupy
    from tcgemm.engine.gpu.bench import random_operands
    from tcgemm.engine.gpu.gemm import for_this_gpu, run_kernel, launch
    A, B = random_operands(64, 64, 64)
    with pytest.raises(OperandError, match=r"A is a numpy array in host memory.*cupy.asarray\(A\)"):
        run_kernel("k1.1", cupy.asnumpy(A), B)
    over_a = cupy.ndarray((64, 64), cupy.float32, memptr=A.data)    # starts at A's first byte
    with pytest.raises(OperandError, match="C overlaps A in memory"):
        launch(for_this_gpu(GEMM_KERNELS["k1.1"]), A, B, over_a)


def test_32_bit_limits_are_checked_before_anything_is_allocated():
    """Operands of 2**31 elements, without their memory: the check refuses them from their shapes."""
    import cupy
    from tcgemm.engine.gpu.gemm import for_this_gpu, prepare
    spec = for_this_gpu(GEMM_KERNELS["k4.5"])
    memory = cupy.cuda.alloc(256)                                # the arrays below claim far more
    A = cupy.ndarray((2**16, 2**15), cupy.float16, memptr=memory)
    B = cupy.ndarray((2**15, 256), cupy.float16, memptr=memory, order="F")
    with pytest.raises(OperandError, match=r"M\*K=2147483648 overflows the kernels' 32-bit int indices"):
        prepare(spec, A, B)


def test_an_edited_kernel_is_looked_up_again():
    from tcgemm.engine.gpu import compile as kernels
    spec = GEMM_KERNELS["k1.0"]
    path = KERNEL_DIR / spec.source
    first = kernels.get_function(spec.source, spec.entry)
    modules = kernels._module.cache_info().currsize
    assert kernels.get_function(spec.source, spec.entry) is first
    assert kernels._module.cache_info().currsize == modules
    stat = path.stat()
    try:
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
        assert kernels.get_function(spec.source, spec.entry) is not first
        assert kernels._module.cache_info().currsize == modules + 1
    finally:
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
