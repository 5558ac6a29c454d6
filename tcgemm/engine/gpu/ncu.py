"""Read hardware counters of one kernel launch with Nsight Compute (ncu), where ncu is installed.

The target runs in a child process (`python -m tcgemm.engine.gpu.ncu_target`), which brackets the one
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
  make). ``tcgemm.smem.gpu.predictions.predicted_vs_measured`` therefore sets ``_op_ld`` beside ld + ldsm.
* ``l1tex__data_bank_conflicts_*`` is a hardware counter of extra data-bank cycles, not of bank
  conflicts in the sense of the bank model: it also counts wavefronts that are not caused by two
  lanes of one instruction hitting one bank (L1 traffic on the same banks, for instance), and can
  change from run to run. The instruction-attributed ``sm__sass_l1tex_data_bank_conflicts_*``
  counters are summed per SASS instruction (in published measurements they sit at the exact value
  while the hardware counter drifts above it); they are requested too where the GPU has them.

Metrics in OPTIONAL may be missing on a given GPU or ncu version; ``profile`` then runs again
without them and lists them under "dropped".

Readings are counters as the book shows them (a label, the metric, a unit conversion); the chapters'
profiles are the tuples below, and ``profile_table`` reads them for several kernels into one table.
"""
from __future__ import annotations

import csv
import io
import math
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import NamedTuple

from tcgemm import ROOT
from tcgemm.style import TEXT_COLUMN_CHARS
from tcgemm.table import Column, Table

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


class Reading(NamedTuple):
    label: str
    metric: str
    scale: float = 1.0     # ncu's number is divided by this (Hz -> GHz: 1e9)
    fmt: str = ".2f"


def stall_readings(reasons: tuple[str, ...]) -> tuple[Reading, ...]:
    """Cycles a warp waits per issued instruction, for each of ncu's stall `reasons`."""
    return tuple(Reading(f"stall {r} (cycles per issue)",
                         f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio") for r in reasons)


CEILING = "mma.sync ceiling"
"""A key that profiles the mma.sync ceiling probe (tcgemm.engine.gpu.ceiling, 32 warps per SM) instead of a GEMM."""

SM_CLOCK = Reading("SM clock, GHz", "sm__cycles_elapsed.avg.per_second", 1e9)
KERNEL_TIME = Reading("kernel time, µs", "gpu__time_duration.sum", 1e3, ".1f")   # caches flushed first
STALL_REASONS = ("wait", "math_pipe_throttle", "lg_throttle", "not_selected", "barrier",
                 "long_scoreboard", "short_scoreboard", "dispatch_stall")
# Where the Tensor Core kernels spend their time (the pipelines chapter).
TENSOR_PIPE = (
    Reading("tensor pipe busy, % of elapsed",
            "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed"),
    SM_CLOCK,
    Reading("shared-memory wavefronts, % of peak",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed"),
    Reading("eligible warps per scheduler", "smsp__warps_eligible.avg.per_cycle_active"),
    Reading("active warps per scheduler", "smsp__warps_active.avg.per_cycle_active"),
    *stall_readings(STALL_REASONS),
)
# Tensor Core instructions and shared loads of the first kernels (the mma chapter).
MMA_AND_LOADS = tuple(Reading(label, METRICS[name], fmt=",.0f") for label, name in (
    ("tensor-pipe instructions", "hmma"), ("of which wgmma", "gmma"),
    ("shared-load bank conflicts", "smem_ld_conflicts"), ("shared-load wavefronts", "smem_ld_wavefronts")))
# How busy the issue slots of the CUDA-core SGEMM are (the SGEMM chapter).
ISSUE = (
    Reading("issue slots used, %", "smsp__issue_active.avg.pct_of_peak_sustained_active"),
    SM_CLOCK,
    Reading("warp instructions (millions)", "smsp__inst_executed.sum", 1e6),
    Reading("FFMA thread instructions (millions)", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 1e6),
    *stall_readings(STALL_REASONS),
)
# Where the operands come from, beside the tensor pipe (the Hopper chapter's TMA kernel): L2 and DRAM.
DATA_PATH = (
    TENSOR_PIPE[0],
    SM_CLOCK,
    Reading("L2 throughput, % of peak", "lts__throughput.avg.pct_of_peak_sustained_elapsed"),
    Reading("L2 bytes, TB/s", "lts__t_bytes.sum.per_second", 1e12),
    Reading("DRAM throughput, % of peak", "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
    TENSOR_PIPE[2],
    *stall_readings(("wait", "math_pipe_throttle", "long_scoreboard", "barrier")),
)
# The bytes a launch moves through L2 (the Hopper chapter's section on the power limit), sectors as MB.
SECTOR_MB = 1e6 / 32
L2_BYTES = (
    KERNEL_TIME,
    SM_CLOCK,
    Reading("MB the SMs read from L2", "lts__t_sectors_srcunit_tex_op_read.sum", SECTOR_MB, ",.0f"),
    Reading("MB the SMs write to L2", "lts__t_sectors_srcunit_tex_op_write.sum", SECTOR_MB, ",.0f"),
    Reading("MB through the fabric between L2's halves", "lts__t_sectors_srcunit_ltcfabric.sum", SECTOR_MB, ",.0f"),
    Reading("MB read from DRAM", "dram__bytes_read.sum", 1e6, ",.0f"),
)
# The wgmma kernels beside cuBLAS (the Hopper chapter): the tensor pipe, the warpgroup MMA instructions
# (HGMMA) issued, and where the data come from.
WGMMA_PATH = (
    TENSOR_PIPE[0],
    Reading("wgmma instructions (thousands)", "sm__inst_executed_pipe_tensor_op_gmma.sum", 1e3, ",.0f"),
    *DATA_PATH[1:5],
    Reading("warp instructions (millions)", "smsp__inst_executed.sum", 1e6),
    *stall_readings(("wait", "long_scoreboard", "barrier")),
)


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


def _require_ncu() -> str:
    ncu = find_ncu()
    if ncu is None:
        raise NcuUnavailable("Nsight Compute (ncu) is not installed on this machine")
    return ncu


def _launch(ncu: str, options: list[str], key: str, M: int, N: int, K: int) -> subprocess.CompletedProcess:
    """ncu `options` on the one profiled launch of `key` in tcgemm.engine.gpu.ncu_target, clocks left alone."""
    cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", *options,
           sys.executable, "-m", "tcgemm.engine.gpu.ncu_target", key, str(M), str(N), str(K)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)


def _run(ncu: str, metrics: list[str], key: str, M: int, N: int, K: int) -> subprocess.CompletedProcess:
    return _launch(ncu, ["--csv", "--page", "raw", "--metrics", ",".join(metrics)], key, M, N, K)


def _failed(result: subprocess.CompletedProcess) -> bool:
    return result.returncode != 0 or "==ERROR==" in result.stdout + result.stderr


def _named_in(text: str, metric: str) -> bool:
    base = metric.split(".")[0]   # ncu may name a metric without its rollup (.sum)
    return re.search(rf"(?<![\w]){re.escape(base)}(?![\w])", text) is not None


def profile(key: str, M: int = 4096, N: int = 4096, K: int = 4096, metrics=None, optional=OPTIONAL) -> dict:
    """Counter values (summed over the profiled kernels of the launch) for kernel `key` or 'cublas'.

    `metrics` maps names to ncu metrics (default METRICS). If ncu rejects the run, the names in
    `optional` are dropped (those ncu's message names, or else all of them) and it runs again; the
    dropped names read NaN and are listed under "dropped"."""
    ncu = _require_ncu()
    wanted = dict(METRICS if metrics is None else metrics)
    dropped: list[str] = []
    result = _run(ncu, list(wanted.values()), key, M, N, K)
    while _failed(result):
        optional_left = [name for name in wanted if name in optional]
        output = result.stdout + result.stderr
        drop = [name for name in optional_left if _named_in(output, wanted[name])] or optional_left
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
    units, *rows = list(csv.DictReader(io.StringIO(text[text.index('"ID"'):])))   # the first row: units
    totals = {}
    for name, metric in wanted.items():
        values = [float(r[metric].replace(",", "")) for r in rows if r.get(metric) not in (None, "", "n/a")]
        totals[name] = sum(values) if values else float("nan")
    totals.update({name: float("nan") for name in dropped})
    totals["kernels"] = [r["Kernel Name"] for r in rows]
    totals["units"] = {name: units.get(metric, "") for name, metric in wanted.items()}
    totals["dropped"] = dropped
    return totals


class Comparison(NamedTuple):
    counter: str        # METRICS key
    metric: str         # the ncu metric
    predicted: int
    measured: float     # NaN where the GPU lacks the metric


def read(key: str, readings, M: int = 4096, N: int = 4096, K: int = 4096) -> dict[str, float]:
    """{label: value} of `readings` for one launch of `key`, scaled; NaN where this GPU or ncu lacks
    the metric (as long as it has one of them)."""
    metrics = {r.label: r.metric for r in readings}
    counters = profile(key, M, N, K, metrics=metrics, optional=frozenset(metrics))
    return {r.label: counters[r.label] / r.scale for r in readings}


def readings_table(values: dict[str, dict[str, float]], readings, caption: str = "") -> Table:
    """One row per reading, one column per kernel: `values` maps a column name to read()'s dict."""
    rows = [[r.label, *(None if math.isnan(v[r.label]) else format(v[r.label], r.fmt) for v in values.values())]
            for r in readings]
    return Table([Column("counter"), *(Column(name, align="right") for name in values)], rows, caption)


# What Nsight Compute says of a launch itself (launch_table), and its units of shared memory.
LAUNCH = {"grid (blocks)": "launch__grid_size", "cluster (blocks)": "launch__cluster_dim_x",
          "threads per block": "launch__block_size", "registers per thread": "launch__registers_per_thread",
          "dynamic shared memory per block": "launch__shared_mem_per_block_dynamic"}
BYTE_UNITS = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Kibyte": 2**10, "Mibyte": 2**20}


def launch_table(keys, M: int = 4096, N: int = 4096, K: int = 4096, caption: str = "") -> Table:
    """Each launch's kernel, grid, cluster, block, registers and dynamic shared memory (KB, 1000 bytes)
    as Nsight Compute reports them: for 'cublas', what its heuristics picked for this shape."""
    columns = {}
    for key in keys:
        launch = profile(key, M, N, K, metrics=LAUNCH, optional=frozenset())
        smem = "dynamic shared memory per block"
        scale = BYTE_UNITS.get(launch["units"][smem].split("/")[0], float("nan"))
        columns[key] = [" + ".join(launch["kernels"]), *(f"{launch[name]:,.0f}" for name in list(LAUNCH)[:-1]),
                        f"{launch[smem] * scale / 1e3:.1f} KB"]
    rows = [[label, *(column[i] for column in columns.values())]
            for i, label in enumerate(["kernel", *LAUNCH])]
    return Table([Column("launch"), *(Column(key) for key in columns)], rows, caption)


def profile_table(keys, readings, M: int = 4096, N: int = 4096, K: int = 4096, caption: str = "") -> Table:
    """`readings` of each kernel in `keys` (one ncu run each) side by side."""
    return readings_table({key: read(key, readings, M, N, K) for key in keys}, readings, caption)


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

    ncu = _require_ncu()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "samples"
        done = _launch(ncu, ["--section", "SourceCounters", "--import-source", "no", "-f", "-o", str(report)],
                       key, M, N, K)
        if _failed(done):
            raise NcuUnavailable(f"ncu did not profile {key} (exit {done.returncode}):\n{(done.stdout + done.stderr)[-1500:]}")
        page = subprocess.run([ncu, "-i", f"{report}.ncu-rep", "--page", "source", "--csv", "--print-source", "sass"],
                              capture_output=True, text=True, timeout=600)
    if '"Address"' not in page.stdout:
        raise NcuUnavailable(f"ncu printed no source page:\n{(page.stdout + page.stderr)[-1500:]}")
    return stall_samples_by_opcode(page.stdout)


def against_ceiling_text(values: dict[str, dict[str, float]], key: str) -> str:
    """Kernel `key`'s rate as a fraction of the mma.sync ceiling's, split into its two factors read by
    ncu (`values` as for readings_table, with CEILING and `key`): the SM clock, and the share of the
    time the tensor pipe is busy."""
    ceiling, kernel = values[CEILING], values[key]
    clock = kernel[SM_CLOCK.label] / ceiling[SM_CLOCK.label]
    busy = kernel[TENSOR_PIPE[0].label] / ceiling[TENSOR_PIPE[0].label]
    return textwrap.fill(f"{key} against the ceiling: clock {clock:.3f} x tensor pipe busy {busy:.3f} = "
                         f"{clock * busy:.3f}; at {key}'s clock a pipe as busy as the ceiling's would reach "
                         f"{clock:.3f} of the ceiling", TEXT_COLUMN_CHARS)
