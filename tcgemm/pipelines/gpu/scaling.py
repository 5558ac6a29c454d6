"""Kernel time against K on the GPU, and the line through it (tcgemm.pipelines.scaling): what a kernel
spends outside its main loop and the rate of the loop, as written and with switches on."""
from __future__ import annotations

from tcgemm.engine.gpu.bench import faster_of_passes
from tcgemm.pipelines.scaling import fit_k_scaling


def k_scaling(spec, M: int = 4096, N: int = 4096, Ks=(2048, 4096, 8192, 16384), reps: int | None = None):
    """Times of `spec` at several K (fixed M, N) and the line through them (tcgemm.pipelines.scaling)."""
    times = faster_of_passes([(spec, M, N, K) for K in Ks], reps)   # one slow pass would bend the line
    return times, fit_k_scaling(M, N, Ks, times)


def switch_scaling(spec, switch_sets, M: int = 4096, N: int = 4096, Ks=(2048, 4096, 8192, 16384),
                   reps: int | None = None) -> dict:
    """k_scaling of `spec` with each set of its switches on, keyed by the switches joined with " + "
    ("as written" for none): {label: (seconds at each K, fit)}."""
    return {" + ".join(switches) or "as written": k_scaling(spec.with_switches(*switches), M, N, Ks, reps)
            for switches in switch_sets}
