"""The launch path pays no per-call compile work: the kernel function is looked up once per
configuration, and again only when its source changes (a benchmark bound, on the GPU machine only)."""
import os
import time

import numpy as np
import pytest

from tcgemm import KERNEL_DIR
from tcgemm.catalog import GEMM_KERNELS

pytestmark = pytest.mark.gpu

HOST_US_PER_LAUNCH = 30.0


def host_us_per_launch(spec, calls: int = 100, batches: int = 11) -> float:
    """Median over batches of the host time of one launch() call, in microseconds."""
    import cupy
    from tcgemm.gpu.bench import random_operands
    from tcgemm.gpu.gemm import launch

    M, N, K = spec.tile_m, spec.tile_n, spec.tile_k
    A, B = random_operands(M, N, K)
    C = cupy.empty((M, N), dtype=spec.out_dtype)
    launch(spec, A, B, C)            # compile, and allow the dynamic shared memory, once
    cupy.cuda.Device().synchronize()
    per_call = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            launch(spec, A, B, C)
        per_call.append((time.perf_counter() - start) / calls * 1e6)
        cupy.cuda.Device().synchronize()
    return float(np.median(per_call))


@pytest.mark.parametrize("key", ["k1.0", "k4.5"])
def test_launch_costs_little_host_time(key):
    from tcgemm.gpu.gemm import for_this_gpu
    us = host_us_per_launch(for_this_gpu(GEMM_KERNELS[key]))
    print(f"{key}: {us:.1f} us of host time per launch()")
    assert us < HOST_US_PER_LAUNCH, f"{key}: launch() takes {us:.1f} us of host time per call"


def test_an_edited_kernel_is_looked_up_again():
    from tcgemm.gpu import compile as kernels
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
