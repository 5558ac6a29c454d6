"""Kernel 5.14's cluster shapes on the GPU: how many clusters of each size the driver runs at once
(cuOccupancyMaxActiveClusters), and each variant against cuBLAS with the same types in interleaved rounds."""
from __future__ import annotations

from tcgemm.engine.gpu.bench import runner, runners_in_rounds
from tcgemm.engine.gpu.gemm import for_this_gpu, kernel_function, kernel_spec
from tcgemm.engine.gpu.launch import active_clusters
from tcgemm.engine.report import size_label
from tcgemm.engine.rounds import rounds_table, summarize_rounds
from tcgemm.hopper.gpu.operand_orders import variant_key
from tcgemm.table import Table

BASELINE = "cublas-fp16-c"
TYPES = ("float16", "float16")


def variant(text: str):
    """The configuration of "k5.14/64/1x2" (key, tile width, cluster shape), fp16 in and out, A row-major and
    B column-major (tcgemm.matmul's common case)."""
    key, width, cluster = variant_key(text)
    spec = for_this_gpu(kernel_spec(key)).with_dtypes(*TYPES)
    spec = spec.with_tile_n(width) if width else spec
    return spec.with_cluster(*cluster) if cluster else spec


def clusters_at_once(text: str) -> int | None:
    """The clusters of a variant the GPU runs at once, as the driver counts them."""
    spec = variant(text)
    return active_clusters(kernel_function(spec), spec.cluster, spec.threads, spec.smem_bytes)


def cluster_rounds(M: int, N: int, K: int, texts, rounds: int = 5) -> Table:
    """The variants `texts` and cuBLAS (fp16 in and out) at M x N x K, each checked on fresh random inputs,
    then timed in `rounds` interleaved rounds (tcgemm.engine.gpu.bench.runners_in_rounds)."""
    base = runner(BASELINE)
    runners = [base] + [runner(variant_key(t)[0], variant(t)) for t in texts]
    times = runners_in_rounds(runners, M, N, K, rounds)
    return rounds_table(summarize_rounds(times, base.name), base.name, size_label(M, N, K), rounds)
