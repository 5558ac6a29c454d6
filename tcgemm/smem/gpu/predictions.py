"""The shared-memory model's predictions (tcgemm.smem.kernel_smem) beside Nsight Compute's counters of
the same launch (tcgemm.engine.gpu.ncu), for the bank-conflict chapter."""
from __future__ import annotations

from tcgemm.engine.gpu import ncu
from tcgemm.engine.gpu.device import device_info
from tcgemm.smem.kernel_smem import predict


def predicted_vs_measured(key: str, M: int = 4096, N: int = 4096, K: int = 4096,
                          arch: str | None = None) -> list[ncu.Comparison]:
    """tcgemm.smem.kernel_smem's prediction beside Nsight Compute's count, for every PREDICTED_BY metric.

    `arch` (default: this GPU's, e.g. "sm_90") picks the compiled code the prediction describes."""
    if arch is None:
        arch = device_info().arch
    counts = predict(key, M, N, K, arch=arch)
    measured = ncu.profile(key, M, N, K, metrics={name: ncu.METRICS[name] for name in ncu.PREDICTED_BY})
    return [ncu.Comparison(name, ncu.METRICS[name], sum(getattr(counts[op], quantity) for op in ops), measured[name])
            for name, (ops, quantity) in ncu.PREDICTED_BY.items()]
