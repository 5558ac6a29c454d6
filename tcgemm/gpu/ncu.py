"""Read hardware counters of one kernel launch with Nsight Compute (ncu), where ncu is installed.

The target runs in a child process (`python -m tcgemm.gpu.ncu_target`), which brackets the one
launch to profile with cudaProfilerStart/Stop, so CuPy's own set-up kernels are not profiled.
Clocks are left alone (--clock-control none).
"""
from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .. import ROOT

METRICS = {
    "hmma": "smsp__inst_executed_pipe_tensor_op_hmma.sum",     # mma.sync on the Tensor Cores
    "gmma": "smsp__inst_executed_pipe_tensor_op_gmma.sum",     # wgmma (Hopper only)
    "cycles": "sm__cycles_elapsed.max",
    "smem_ld_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "smem_st_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smem_ld_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
}


def find_ncu() -> str | None:
    found = shutil.which("ncu")
    if found:
        return found
    for guess in ("/usr/local/cuda/bin/ncu", *sorted(Path("/opt/nvidia").glob("nsight-compute/*/ncu"))):
        if Path(guess).is_file():
            return str(guess)
    return None


class NcuUnavailable(RuntimeError):
    pass


def _run(ncu: str, metrics: list[str], key: str, M: int, N: int, K: int) -> subprocess.CompletedProcess:
    cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--csv", "--page", "raw",
           "--metrics", ",".join(metrics), sys.executable, "-m", "tcgemm.gpu.ncu_target", key, str(M), str(N), str(K)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)


def profile(key: str, M: int = 4096, N: int = 4096, K: int = 4096, metrics=None) -> dict[str, float]:
    """Counter values (summed over the profiled kernels of the launch) for kernel `key` or 'cublas'."""
    ncu = find_ncu()
    if ncu is None:
        raise NcuUnavailable("Nsight Compute (ncu) is not installed on this machine")
    wanted = dict(METRICS if metrics is None else metrics)
    result = _run(ncu, list(wanted.values()), key, M, N, K)
    if result.returncode != 0 or "==ERROR==" in result.stdout + result.stderr:
        # A metric this GPU lacks (gmma before Hopper) fails the whole run: try without it once.
        if "gmma" in wanted:
            wanted.pop("gmma")
            result = _run(ncu, list(wanted.values()), key, M, N, K)
    text = result.stdout
    if result.returncode != 0 or '"ID"' not in text:
        tail = (result.stdout + result.stderr)[-1500:]
        raise NcuUnavailable(f"ncu did not profile the kernel (exit {result.returncode}):\n{tail}")
    rows = list(csv.DictReader(io.StringIO(text[text.index('"ID"'):])))[1:]  # first row holds units
    totals = {}
    for name, metric in wanted.items():
        values = [float(r[metric].replace(",", "")) for r in rows if r.get(metric) not in (None, "", "n/a")]
        totals[name] = sum(values) if values else float("nan")
    totals["kernels"] = [r["Kernel Name"] for r in rows]
    return totals
