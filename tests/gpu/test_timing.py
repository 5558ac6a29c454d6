"""tcgemm.engine.gpu.timing on this GPU: a warm-up of the plan's time, enough timed runs for its target,
an L2 flush that empties L2, and a size sweep that repeats within 5% when run twice in a row."""
import time

import pytest

from tcgemm.engine.catalog import GEMM_KERNELS

pytestmark = pytest.mark.gpu


def prepared(key, M, N, K):
    from tcgemm.engine.gpu.bench import random_operands
    from tcgemm.engine.gpu.gemm import for_this_gpu, prepare
    spec = for_this_gpu(GEMM_KERNELS[key])
    return prepare(spec, *random_operands(M, N, K, dtype=spec.in_dtype))


def test_a_short_kernel_is_warmed_up_by_time_and_timed_for_the_target_time():
    from tcgemm.engine.gpu.timing import time_launches
    from tcgemm.engine.timing import TimingPlan
    plan = TimingPlan(warmup_s=0.2, target_s=0.05, min_reps=20, max_reps=100_000)
    run = prepared("k4.5", 256, 256, 256)
    start = time.perf_counter()
    timing = time_launches(run, plan=plan)
    elapsed = time.perf_counter() - start
    kernel_s = timing.runs * timing.median
    print(f"{timing.runs} runs of {timing.median * 1e6:.1f} us (IQR {100 * timing.spread:.1f}%), "
          f"{elapsed:.2f} s in all")
    assert timing.runs > 100 and kernel_s >= 0.8 * plan.target_s
    assert elapsed >= plan.warmup_s + kernel_s


def test_a_fixed_count_of_runs():
    from tcgemm.engine.gpu.timing import time_launches
    assert time_launches(prepared("k1.1", 256, 256, 256), reps=7).runs == 7


SPIN = r"""extern "C" __global__ void spin(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {}
}"""


def test_the_flush_empties_l2():
    """A sum over 40% of L2, timed by events: read from L2 when a spin kernel (which touches no memory)
    precedes it, from memory when the L2Flush does. Both keep the GPU busy while the host enqueues the
    sum, so neither time includes the host's launch overhead."""
    import cupy
    import numpy as np
    from tcgemm.engine.gpu.device import device_info
    from tcgemm.engine.gpu.timing import L2Flush
    src = cupy.ones(4 * device_info().l2_bytes // 10 // 4, dtype=cupy.float32)
    out = cupy.empty((), dtype=cupy.float32)
    spin = cupy.RawKernel(SPIN, "spin")
    wait = lambda: spin((1,), (1,), (np.int64(200_000),))     # ~100 µs at 2 GHz
    flush = L2Flush()

    def median_us(before):
        times = []
        for _ in range(100):
            before()
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            cupy.sum(src, out=out)
            end.record()
            end.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
        return float(np.median(times))

    hot, cold = median_us(wait), median_us(flush)
    print(f"{src.nbytes >> 20} MB read: {hot:.1f} us from L2, {cold:.1f} us after the flush")
    assert cold > 1.15 * hot


def test_a_size_sweep_repeats_within_5_percent():
    """The shapes on which two recordings of the pipelines chapter's sweep once disagreed by up to 2.3x."""
    from tcgemm.engine.gpu.bench import size_sweep
    from tcgemm.engine.timing import sweep_agreement
    shapes = {"square": [(512, 512, 512), (2048, 2048, 2048)], "tall-skinny": [(16384, 256, 1024)],
              "small M": [(16, 4096, 4096)]}
    first, second = (size_sweep("k4.5", shapes) for _ in range(2))
    agreement = sweep_agreement(first, second, "Kernel 4.5")
    print(agreement.table)
    assert agreement.within(0.05), f"largest deviation {100 * agreement.max_deviation:.1f}%"
