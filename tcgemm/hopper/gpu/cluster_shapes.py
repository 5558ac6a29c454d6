"""Kernel 5.14's cluster shapes on the GPU: how many clusters of each size the driver runs at once
(cuOccupancyMaxActiveClusters), and each variant against cuBLAS with the same types in interleaved rounds."""
from __future__ import annotations

from dataclasses import replace

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


def label(text: str) -> str:
    """A variant as the rounds tables name it: 'Kernel 5.14: 128×64, clusters 1×2'."""
    spec = variant(text)
    return f"{spec.short_title}: {spec.tile_m}×{spec.tile_n}, clusters {spec.cluster_m}×{spec.cluster_n}"


def cluster_rounds(M: int, N: int, K: int, texts, rounds: int = 5) -> Table:
    """The variants `texts` and cuBLAS (fp16 in and out) at M x N x K, each checked on fresh random inputs,
    then timed in `rounds` interleaved rounds (tcgemm.engine.gpu.bench.runners_in_rounds), each named by
    `label`."""
    base = runner(BASELINE)
    runners = [base] + [replace(runner(variant_key(t)[0], variant(t)), name=label(t)) for t in texts]
    times = runners_in_rounds(runners, M, N, K, rounds)
    return rounds_table(summarize_rounds(times, base.name), base.name, size_label(M, N, K), rounds)
