"""Child process for tcgemm.engine.gpu.ncu: one launch of a kernel between cudaProfilerStart and Stop."""
import sys

from tcgemm.engine.gpu.bench import on_random_operands, runner
from tcgemm.engine.gpu.gemm import for_this_gpu, kernel_spec
from tcgemm.engine.gpu.ncu import CEILING
from tcgemm.engine.plan import tile_named

CEILING_ROUNDS = 8192       # a few milliseconds on an H100: longer than a 4096^3 GEMM


def main(key: str, M: int, N: int, K: int) -> None:
    """`key` may name switches to turn on, e.g. "k4.3+STAGE_C", or a tile plan of Kernel 4.6 as
    tile/splits, e.g. "k4.6@64x128/3" (tcgemm.engine.plan.TILES), or be CEILING."""
    import cupy

    if key == CEILING:
        from tcgemm.engine.gpu.ceiling import prepare
        run = prepare(32, CEILING_ROUNDS)[0]
        return _profile(run, cupy)
    key, _, tile_plan = key.partition("@")
    key, *switches = key.split("+")
    spec = for_this_gpu(kernel_spec(key)).with_switches(*switches) if switches else None
    if tile_plan:
        name, splits = tile_plan.split("/")
        spec = kernel_spec(key).with_tile(tile_named(name), int(splits))
    _profile(on_random_operands(runner(key, spec), M, N, K), cupy)


def _profile(run, cupy) -> None:
    run()                               # compile and warm up outside the profiled range
    cupy.cuda.runtime.deviceSynchronize()
    cupy.cuda.runtime.profilerStart()
    run()
    cupy.cuda.runtime.deviceSynchronize()
    cupy.cuda.runtime.profilerStop()


if __name__ == "__main__":
    main(sys.argv[1], *(int(x) for x in sys.argv[2:5]))
