"""Take a tile timeline (tcgemm.hopper.timeline) of one launch of Kernel 5.6, 5.7 or 5.8 with its TRACE switch:
on fresh random operands, a timed series first (tcgemm.engine.gpu.timing, as the bench times: it also brings the
GPU to the clock it keeps under this load), then the stamps zeroed, L2 flushed, one launch, the stamps
read back."""
from __future__ import annotations

import numpy as np

from tcgemm.engine.gpu.bench import on_random_operands, runner
from tcgemm.engine.gpu.compile import arch_specific_global
from tcgemm.engine.gpu.device import device_info, require_gpu
from tcgemm.engine.gpu.gemm import for_this_gpu, kernel_spec
from tcgemm.engine.gpu.timing import L2Flush, time_launches
from tcgemm.hw import peak_for, tensor_flop_per_clock_per_sm
from tcgemm.hopper.timeline import MAX_TILES, TRACE_BLOCKS, TRACE_SLOTS, TileTimeline, storing_blocks, tiles_per_block


def trace(key: str = "k5.6", M: int = 4096, N: int = 4096, K: int = 4096, switches: tuple[str, ...] = (),
          label: str = "") -> TileTimeline:
    """The timeline of `key` (with the measurement `switches` too, e.g. "SKIP_STORE") at M x N x K; a
    shape whose blocks or tiles per block the trace's arrays cannot hold is refused by name."""
    cupy = require_gpu()
    spec = for_this_gpu(kernel_spec(key))
    if "TRACE" not in dict(spec.switches):
        raise ValueError(f"{spec.title} has no TRACE switch: the timeline is Kernels 5.6 to 5.8's")
    spec = spec.with_switches("TRACE", *switches)
    blocks = spec.grid(M, N, device_info().sm_count)[0]
    most = int(tiles_per_block(spec.cluster_tiles(M, N), blocks).max())
    if blocks > TRACE_BLOCKS or most > MAX_TILES:
        raise ValueError(f"{M}x{N}x{K} gives {blocks} blocks of up to {most} tiles; the trace holds "
                         f"{TRACE_BLOCKS} blocks of {MAX_TILES} tiles (kernels/trace.cuh)")
    run = on_random_operands(runner(key, spec), M, N, K)
    series = time_launches(run)
    stamps, clocks = (cupy.ndarray((TRACE_BLOCKS, TRACE_SLOTS), np.uint64, arch_specific_global(
        spec.source, name, TRACE_BLOCKS * TRACE_SLOTS * 8, spec.defines)) for name in ("tile_trace", "tile_clock"))
    stamps[...] = 0
    clocks[...] = 0
    L2Flush()()
    run()
    cupy.cuda.Device().synchronize()
    name = label or " + ".join((spec.short_title, *switches))
    # The SM's work in consumer 0's main loop: its block's tile, which both consumers share (in 5.8 each
    # consumer has a tile of its own, so one consumer's main loop is not the SM's).
    flop = None if spec.key == "k5.8" else 2 * spec.tile_m * spec.tile_n * -(-K // spec.tile_k) * spec.tile_k
    info = device_info()
    peak = peak_for(info.name)
    return TileTimeline(stamps[:blocks].get(), f"{name}, {M}x{N}x{K}", storing_blocks(blocks, switches), series_us=series.median * 1e6,
                        clocks=clocks[:blocks].get(), flop_per_tile=flop,
                        peak_flop_per_clock=peak and tensor_flop_per_clock_per_sm(peak, info.sm_count))
