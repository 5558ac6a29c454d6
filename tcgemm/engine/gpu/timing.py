"""Time a kernel on this GPU as tcgemm.engine.timing plans it: warm up for a while, estimate one run, then
time each run between two CUDA events, with the L2 cache overwritten before each run.

The events are recorded on the stream, around the launch only: the flush is not in the time. The
flush also keeps the GPU busy while the host enqueues the next launch, so the start event is never
reached before the kernel is queued behind it (which would add the host's launch time to the
kernel's), as long as the host enqueues a run (events and launch) faster than the GPU flushes.
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np

from tcgemm.engine.report import Timing, summarize
from tcgemm.engine.timing import DEFAULT_PLAN, TimingPlan
from tcgemm.engine.gpu.device import device_info, require_gpu


FLUSH_L2_MULTIPLE = 4   # the flush writes this many times L2: on an H100 about 70 µs of GPU time, longer
                        # than the host takes to enqueue the next timed launch (tests/gpu/test_launch.py)


class L2Flush:
    """Calling it overwrites this GPU's L2 cache: one cudaMemsetAsync, on the current stream, of a
    buffer FLUSH_L2_MULTIPLE times the size of L2, with a new byte value each time. A few µs of host
    time; on the GPU the time to write that much to memory (tens of µs)."""

    def __init__(self):
        cupy = require_gpu()
        self.buffer = cupy.empty(FLUSH_L2_MULTIPLE * device_info().l2_bytes, dtype=np.uint8)
        self._memset = cupy.cuda.runtime.memsetAsync
        self._stream = cupy.cuda.get_current_stream
        self._value = 0

    def __call__(self) -> None:
        self._value = (self._value + 1) % 256
        self._memset(self.buffer.data.ptr, self._value, self.buffer.nbytes, self._stream().ptr)


def time_launches(fn: Callable[[], None], reps: int | None = None, warmup: int | None = None,
                  flush_l2: bool = True, plan: TimingPlan = DEFAULT_PLAN) -> Timing:
    """Median, quartiles and count of the GPU times of `fn()` (which must only enqueue work on the
    current stream, e.g. a tcgemm.engine.gpu.gemm.prepare'd launch). `plan` says how long to warm up and how
    many runs to time; `reps` fixes the number of timed runs, `warmup` the least number of warm-up
    runs. With `flush_l2`, every run (warm-up ones too) comes after an L2Flush."""
    cupy = require_gpu()
    plan = plan.with_counts(reps, warmup)
    flush = L2Flush() if flush_l2 else None
    _warm_up(cupy, fn, flush, plan)
    n = plan.min_reps if plan.fixed_reps else \
        plan.reps_for(summarize(_event_times(cupy, fn, flush, plan.estimate_runs)).median)
    return summarize(_event_times(cupy, fn, flush, n))


def median_rounds(fns, repeats: int) -> list[list[float]]:
    """The median seconds of each of `fns` (time_launches), the whole list timed `repeats` times in turn,
    so that a drift of the GPU's clock during a run shows as a spread between rounds."""
    return [[time_launches(fn).median for fn in fns] for _ in range(repeats)]


def _warm_up(cupy, fn, flush, plan: TimingPlan) -> None:
    """Run (flush and) fn back to back until plan.warmup_batch says the GPU has worked long enough."""
    stream = cupy.cuda.get_current_stream()
    start, done = time.perf_counter(), 0
    while batch := plan.warmup_batch(done, time.perf_counter() - start):
        for _ in range(batch):
            if flush:
                flush()
            fn()
        stream.synchronize()
        done += batch


def _event_times(cupy, fn, flush, n: int) -> list[float]:
    """Seconds between a CUDA event before and one after each of n runs of fn."""
    starts = [cupy.cuda.Event() for _ in range(n)]
    ends = [cupy.cuda.Event() for _ in range(n)]
    for start, end in zip(starts, ends):
        if flush:
            flush()
        start.record()
        fn()
        end.record()
    ends[-1].synchronize()
    return [cupy.cuda.get_elapsed_time(start, end) / 1e3 for start, end in zip(starts, ends)]
