"""Read hardware counters of one kernel launch with Nsight Compute (ncu), where ncu is installed.

The target runs in a child process (`python -m tcgemm.gpu.ncu_target`), which brackets the one
launch to profile with cudaProfilerStart/Stop, so CuPy's own set-up kernels are not profiled.
Clocks are left alone (--clock-control none).

Shared-memory counters, and how they relate to tcgemm.smem.kernel_smem's predictions:

* requests: ``smsp__sass_inst_executed_op_shared_ld/_st`` count LDS / STS warp instructions;
  ldmatrix (LDSM) is counted apart, by ``smsp__inst_executed_op_ldsm`` (the name Nsight Compute's own
  SharedMemoryConflicts rule reads, adding it to the shared-load requests) or its SASS-patched twin
  ``smsp__sass_inst_executed_op_ldsm``.
* wavefronts and conflicts: ``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st,ldsm}`` and
  ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st,ldsm}``. Whether the ``_op_ld`` ones
  also count ldmatrix depends on the architecture and the Nsight Compute version; on the H100 of
  the book they do (the HGEMM, which has no LDS, shows as many ``_op_ld`` wavefronts as its LDSM
  make). ``predicted_vs_measured`` therefore sets ``_op_ld`` beside ld + ldsm.
* ``l1tex__data_bank_conflicts_*`` is a hardware counter of extra data-bank cycles, not of bank
  conflicts in the sense of the bank model: it also counts wavefronts that are not caused by two
  lanes of one instruction hitting one bank (L1 traffic on the same banks, for instance), and can
  change from run to run. The instruction-attributed ``sm__sass_l1tex_data_bank_conflicts_*``
  counters are summed per SASS instruction (in published measurements they sit at the exact value
  while the hardware counter drifts above it); they are requested too where the GPU has them.

Metrics in OPTIONAL may be missing on a given GPU or ncu version; ``profile`` then runs again
without them and lists them under "dropped".
"""
from __future__ import annotations

import csv
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from tcgemm import ROOT

METRICS = {
    "hmma": "smsp__inst_executed_pipe_tensor_op_hmma.sum",     # mma.sync on the Tensor Cores
    "gmma": "smsp__inst_executed_pipe_tensor_op_gmma.sum",     # wgmma (Hopper only)
    "cycles": "sm__cycles_elapsed.max",
    "smem_ld_inst": "smsp__sass_inst_executed_op_shared_ld.sum",
    "smem_st_inst": "smsp__sass_inst_executed_op_shared_st.sum",
    "smem_ldsm_inst": "smsp__inst_executed_op_ldsm.sum",
    "smem_ldsm_inst_sass": "smsp__sass_inst_executed_op_ldsm.sum",
    "smem_ld_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "smem_st_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smem_ldsm_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "smem_ld_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "smem_st_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smem_ldsm_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
    "smem_st_conflicts_sass": "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smem_ldsm_conflicts_sass": "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
}
OPTIONAL = frozenset({
    "gmma", "smem_ldsm_inst", "smem_ldsm_inst_sass", "smem_ldsm_wavefronts", "smem_ldsm_conflicts",
    "smem_st_conflicts_sass", "smem_ldsm_conflicts_sass",
})

# METRICS key -> (op classes of tcgemm.smem.kernel_smem summed, quantity) that predict it.
PREDICTED_BY = {
    "smem_ld_inst": (("ld",), "requests"),
    "smem_st_inst": (("st",), "requests"),
    "smem_ldsm_inst": (("ldsm",), "requests"),
    "smem_ldsm_inst_sass": (("ldsm",), "requests"),
    "smem_ld_wavefronts": (("ld", "ldsm"), "wavefronts"),
    "smem_st_wavefronts": (("st",), "wavefronts"),
    "smem_ldsm_wavefronts": (("ldsm",), "wavefronts"),
    "smem_ld_conflicts": (("ld", "ldsm"), "conflicts"),
    "smem_st_conflicts": (("st",), "conflicts"),
    "smem_ldsm_conflicts": (("ldsm",), "conflicts"),
    "smem_st_conflicts_sass": (("st",), "conflicts"),
    "smem_ldsm_conflicts_sass": (("ldsm",), "conflicts"),
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


def _failed(result: subprocess.CompletedProcess) -> bool:
    return result.returncode != 0 or "==ERROR==" in result.stdout + result.stderr


def _named_in(text: str, metric: str) -> bool:
    base = metric.split(".")[0]   # ncu may name a metric without its rollup (.sum)
    return re.search(rf"(?<![\w]){re.escape(base)}(?![\w])", text) is not None


def profile(key: str, M: int = 4096, N: int = 4096, K: int = 4096, metrics=None) -> dict:
    """Counter values (summed over the profiled kernels of the launch) for kernel `key` or 'cublas'.

    `metrics` maps names to ncu metrics (default METRICS). If ncu rejects the run, the names in
    OPTIONAL are dropped (those ncu's message names, or else all of them) and it runs again; the
    dropped names read NaN and are listed under "dropped"."""
    ncu = find_ncu()
    if ncu is None:
        raise NcuUnavailable("Nsight Compute (ncu) is not installed on this machine")
    wanted = dict(METRICS if metrics is None else metrics)
    dropped: list[str] = []
    result = _run(ncu, list(wanted.values()), key, M, N, K)
    while _failed(result):
        optional = [name for name in wanted if name in OPTIONAL]
        output = result.stdout + result.stderr
        drop = [name for name in optional if _named_in(output, wanted[name])] or optional
        if not drop or len(drop) == len(wanted):
            break
        for name in drop:
            wanted.pop(name)
        dropped += drop
        result = _run(ncu, list(wanted.values()), key, M, N, K)
    text = result.stdout
    if _failed(result) or '"ID"' not in text:
        tail = (result.stdout + result.stderr)[-1500:]
        raise NcuUnavailable(f"ncu did not profile the kernel (exit {result.returncode}):\n{tail}")
    rows = list(csv.DictReader(io.StringIO(text[text.index('"ID"'):])))[1:]  # first row holds units
    totals = {}
    for name, metric in wanted.items():
        values = [float(r[metric].replace(",", "")) for r in rows if r.get(metric) not in (None, "", "n/a")]
        totals[name] = sum(values) if values else float("nan")
    totals.update({name: float("nan") for name in dropped})
    totals["kernels"] = [r["Kernel Name"] for r in rows]
    totals["dropped"] = dropped
    return totals


class Comparison(NamedTuple):
    counter: str        # METRICS key
    metric: str         # the ncu metric
    predicted: int
    measured: float     # NaN where the GPU lacks the metric


def predicted_vs_measured(key: str, M: int = 4096, N: int = 4096, K: int = 4096,
                          arch: str | None = None) -> list[Comparison]:
    """tcgemm.smem.kernel_smem's prediction beside Nsight Compute's count, for every PREDICTED_BY metric.

    `arch` (default: this GPU's, e.g. "sm_90") picks the compiled code the prediction describes."""
    from tcgemm.smem.kernel_smem import predict

    if arch is None:
        from tcgemm.gpu.device import device_info

        arch = f"sm_{device_info().compute_capability}"
    counts = predict(key, M, N, K, arch=arch)
    measured = profile(key, M, N, K, metrics={name: METRICS[name] for name in PREDICTED_BY})
    return [Comparison(name, METRICS[name], sum(getattr(counts[op], quantity) for op in ops), measured[name])
            for name, (ops, quantity) in PREDICTED_BY.items()]


def stall_samples_by_opcode(source_csv: str) -> dict[str, dict[str, int]]:
    """Warp-state samples summed per SASS opcode (the text before the first dot, predicates
    dropped) from ``ncu -i REPORT --page source --csv --print-source sass``: {opcode: {reason: n}},
    reasons as ncu names them without "stall_" (lg, math, wait, barrier, ...)."""
    text = source_csv[source_csv.index('"Address"'):]
    out: dict[str, dict[str, int]] = {}
    for row in csv.DictReader(io.StringIO(text)):
        words = (row.get("Source") or "").split()
        if not words:
            continue
        opcode = (words[1] if words[0].startswith("@") and len(words) > 1 else words[0]).split(".")[0]
        counts = out.setdefault(opcode, {})
        for column, value in row.items():
            if column and column.startswith("stall_") and "Not Issued" not in column and value:
                n = int(float(value.replace(",", "")))
                if n:
                    reason = column[len("stall_"):]
                    counts[reason] = counts.get(reason, 0) + n
    return out


def stall_samples(key: str, M: int = 4096, N: int = 4096, K: int = 4096) -> dict[str, dict[str, int]]:
    """Where the warps of one launch of `key` wait, by SASS opcode (ncu's SourceCounters sampling)."""
    import tempfile

    ncu = find_ncu()
    if ncu is None:
        raise NcuUnavailable("Nsight Compute (ncu) is not installed on this machine")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "samples"
        cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--section", "SourceCounters",
               "--import-source", "no", "-f", "-o", str(report),
               sys.executable, "-m", "tcgemm.gpu.ncu_target", key, str(M), str(N), str(K)]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        if _failed(done):
            raise NcuUnavailable(f"ncu did not profile {key} (exit {done.returncode}):\n{(done.stdout + done.stderr)[-1500:]}")
        page = subprocess.run([ncu, "-i", f"{report}.ncu-rep", "--page", "source", "--csv", "--print-source", "sass"],
                              capture_output=True, text=True, timeout=600)
    if '"Address"' not in page.stdout:
        raise NcuUnavailable(f"ncu printed no source page:\n{(page.stdout + page.stderr)[-1500:]}")
    return stall_samples_by_opcode(page.stdout)
