"""Child process for tcgemm.gpu.ncu: one launch of a kernel between cudaProfilerStart and Stop."""
import sys

from .bench import random_operands, runner


def main(key: str, M: int, N: int, K: int) -> None:
    import cupy

    r = runner(key)
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
