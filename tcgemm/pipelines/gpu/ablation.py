"""Check, then time, each variant of the ablation kernel (Kernel 4.4 with each earlier step a switch)
on this GPU, for tcgemm.pipelines.ablation to rank."""
from __future__ import annotations

from tcgemm.pipelines.ablation import ABLATED, KEY, Measurement
from tcgemm.engine.operands import check_gemm_shape
from tcgemm.engine.gpu.bench import bench
from tcgemm.engine.gpu.gemm import for_this_gpu, kernel_function, kernel_spec


def measure(M: int = 4096, N: int = 4096, K: int = 4096, switches=ABLATED, reps: int | None = None,
            warmup: int | None = None) -> list[Measurement]:
    """Kernel 4.4 as it is (switch None), then with each of `switches` set alone, in the configuration
    the launcher picks on this GPU: each checked on fresh random inputs into a NaN-filled C, then
    timed (tcgemm.engine.gpu.bench.bench); with the registers and local memory of the loaded kernel."""
    base = for_this_gpu(kernel_spec(KEY))
    check_gemm_shape(base, M, N, K)
    out = []
    for switch in (None, *switches):
        spec = base.with_switches(switch) if switch else base
        (result,) = bench([KEY], M, N, K, reps=reps, warmup=warmup, with_cublas=False, specs={KEY: spec})
        fn = kernel_function(spec)
        out.append(Measurement(switch, M, N, K, result.passed, result.check, result.timing, fn.num_regs,
                               fn.local_size_bytes))
    return out
