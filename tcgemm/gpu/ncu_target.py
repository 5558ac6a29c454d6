"""Child process for tcgemm.gpu.ncu: one launch of a kernel between cudaProfilerStart and Stop."""
import sys

from tcgemm.gpu.bench import random_operands, runner
from tcgemm.gpu.gemm import for_this_gpu, kernel_spec


def main(key: str, M: int, N: int, K: int) -> None:
    """`key` may name switches to turn on, e.g. "k4.3+STAGE_C"."""
    import cupy

    key, *switches = key.split("+")
    spec = for_this_gpu(kernel_spec(key)).with_switches(*switches) if switches else None
    r = runner(key, spec)
    A, B = random_operands(M, N, K, dtype=r.in_dtype)
    C = r.new_output(M, N)
    r.run(A, B, C)                      # compile and warm up outside the profiled range
    cupy.cuda.runtime.deviceSynchronize()
    cupy.cuda.runtime.profilerStart()
    r.run(A, B, C)
    cupy.cuda.runtime.deviceSynchronize()
    cupy.cuda.runtime.profilerStop()


if __name__ == "__main__":
    main(sys.argv[1], *(int(x) for x in sys.argv[2:5]))
