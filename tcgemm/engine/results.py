"""Bench results from several GPUs: the JSON document `python -m tcgemm bench --json` writes, its
check, and the comparison of several documents as a table and a figure. Pure module.

Schema ``tcgemm-bench/2``: one JSON object per bench run on one GPU (results/README.md shows one)::

    schema          "tcgemm-bench/2"
    tcgemm_version  the package version that ran the bench, e.g. "0.1.0"
    date            when the document was made: ISO 8601 in UTC, "2026-11-22T10:31:07+00:00"
    device          the GPU and software (tcgemm.engine.gpu.device.DeviceInfo): name, compute_capability
                    ("90"), arch ("sm_90"), sm_count, sm_clock_mhz (boost), memory_clock_mhz,
                    shared_mem_per_block, shared_mem_per_block_optin, l2_bytes, memory_bytes (bytes),
                    cuda_runtime, cuda_driver, cupy_version ("13.2", "13.0", "14.2.0")
    shape           {"M", "N", "K"}: C = A @ B, A M x K, B K x N
    method          plan: how many runs were timed, as tcgemm.engine.timing.TimingPlan's fields (warmup_s,
                    min_warmup, estimate_runs, target_s, wanted_reps, window_s, min_reps, max_reps);
                    statistic ("median"), timer ("CUDA events"), l2_flush (true: L2 overwritten
                    before each timed run)
    groups          one per input dtype, each against its own cuBLAS and its own measured ceiling:
      inputs        the group: "float16" (Tensor Cores), "float32" (CUDA cores, SGEMM), or with a C that is not
                    fp32 the input and output dtypes, e.g. "float16 -> float16" (Kernel 5.9)
      heading       what the group is, e.g. "Tensor Cores: fp16 in, fp32 accumulate"
      baseline      the key of the row that pct_baseline divides by ("cublas", "cublas-sgemm")
      ceiling       {"name", "tflops"}: the ceiling measured in the same run ("mma.sync", "FFMA")
      peak_tflops   the datasheet peak of this GPU (tcgemm.hw), null where tcgemm knows none
      rows          one per kernel, in the order run:
        key         the catalog key ("k4.0", "s1") or "cublas" / "cublas-sgemm"
        title       the book's name for it ("Kernel 4.0: 64 x 64 warp tiles, 128 x 256 blocks")
        variant     the configuration it ran in on this GPU ("BK=64, 4 stages"), "" if none
        time_us     median time of one run, microseconds
        iqr_pct     interquartile range of the times, % of the median (the text table shows ±half)
        runs        how many runs were timed
        tflops      2 M N K / time_us, in TFLOP/s
        pct_baseline, pct_peak, pct_ceiling   tflops as % of the baseline row, of peak_tflops
                    (null when that is null) and of the ceiling
        check       "PASS" or "FAIL": the result on fresh random inputs against a reference

A later change of these fields gets a new schema name; readers refuse names they do not know.
``tcgemm-bench/1`` (until November 2026) had method {reps, warmup} (a fixed count of timed runs and
the least count of warm-up runs) and no runs per row; it is read as the plan with those fixed counts.
Files are named after the GPU (`slug`): results/nvidia-h100-80gb-hbm3.json.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, fields
from datetime import datetime, timedelta, timezone
from numbers import Real
from pathlib import Path

from matplotlib.patches import Patch

from tcgemm import __version__
from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.errors import TcgemmError
from tcgemm.engine.report import table_rows
from tcgemm.style import DISPLAY_COLUMN_PX, GROUP_HUES, RECORD_DPI, new_figure
from tcgemm.table import Column, Table
from tcgemm.engine.timing import TimingPlan

SCHEMA = "tcgemm-bench/2"
SCHEMA_V1 = "tcgemm-bench/1"


class ResultsError(TcgemmError, ValueError):
    """A results document (or folder of them) that does not follow the schema; the message names
    the file and each bad field."""


# --- the schema, as data: a field's check is (predicate, what it expects) ---------------------

def _is_number(v) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool) and math.isfinite(v)


def _is_utc_date(v) -> bool:
    try:
        date = datetime.fromisoformat(v)
    except (TypeError, ValueError):
        return False
    return date.utcoffset() == timedelta(0)


TEXT = (lambda v: isinstance(v, str) and v != "", "a non-empty string")
ANY_TEXT = (lambda v: isinstance(v, str), "a string")
COUNT = (lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0, "a positive integer")
POSITIVE = (lambda v: _is_number(v) and v > 0, "a positive number")
PERCENT = (lambda v: _is_number(v) and v >= 0, "a number >= 0")
OPTIONAL_PERCENT = (lambda v: v is None or PERCENT[0](v), "a number >= 0 or null")
OPTIONAL_POSITIVE = (lambda v: v is None or POSITIVE[0](v), "a positive number or null")
FLAG = (lambda v: isinstance(v, bool), "true or false")
UTC_DATE = (_is_utc_date, 'an ISO 8601 date in UTC, e.g. "2026-11-22T10:31:07+00:00"')
CHECK = (lambda v: v in ("PASS", "FAIL"), '"PASS" or "FAIL"')

DEVICE = {
    "name": TEXT, "compute_capability": TEXT, "arch": TEXT, "sm_count": COUNT,
    "sm_clock_mhz": POSITIVE, "memory_clock_mhz": POSITIVE, "shared_mem_per_block": COUNT,
    "shared_mem_per_block_optin": COUNT, "l2_bytes": COUNT, "memory_bytes": COUNT,
    "cuda_runtime": TEXT, "cuda_driver": TEXT, "cupy_version": TEXT,
}
ROW = {
    "key": TEXT, "title": TEXT, "variant": ANY_TEXT, "time_us": POSITIVE, "iqr_pct": PERCENT,
    "tflops": POSITIVE, "pct_baseline": PERCENT, "pct_peak": OPTIONAL_PERCENT,
    "pct_ceiling": PERCENT, "check": CHECK, "runs": COUNT,
}
GROUP = {
    "inputs": TEXT, "heading": TEXT, "baseline": TEXT,
    "ceiling": {"name": TEXT, "tflops": POSITIVE}, "peak_tflops": OPTIONAL_POSITIVE, "rows": [ROW],
}
SECONDS = (lambda v: _is_number(v) and v >= 0, "a number of seconds >= 0")
PLAN = {f.name: SECONDS if f.name.endswith("_s") else COUNT for f in fields(TimingPlan)}
DOCUMENT = {
    "schema": TEXT, "tcgemm_version": TEXT, "date": UTC_DATE, "device": DEVICE,
    "shape": {"M": COUNT, "N": COUNT, "K": COUNT},
    "method": {"plan": PLAN, "statistic": TEXT, "timer": TEXT, "l2_flush": FLAG},
    "groups": [GROUP],
}
DOCUMENT_V1 = {**DOCUMENT, "method": {"reps": COUNT, "warmup": COUNT, "statistic": TEXT, "timer": TEXT,
                                      "l2_flush": FLAG},
               "groups": [{**GROUP, "rows": [{k: v for k, v in ROW.items() if k != "runs"}]}]}


def _problems(value, spec, path: str) -> list[str]:
    """What in `value` does not follow `spec` (a dict of fields, a one-item list: a non-empty list
    of such items, or a (predicate, expectation) check), each as 'path: problem'."""
    where = path or "the document"
    if isinstance(spec, dict):
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {type(value).__name__}"]
        problems = []
        for name, sub in spec.items():
            field = f"{path}.{name}" if path else name
            problems += _problems(value[name], sub, field) if name in value else [f"{field}: missing"]
        return problems
    if isinstance(spec, list):
        if not isinstance(value, list) or not value:
            return [f"{where}: expected a non-empty list, got {value!r:.60}"]
        return [p for i, item in enumerate(value) for p in _problems(item, spec[0], f"{path}[{i}]")]
    accepts, expected = spec
    return [] if accepts(value) else [f"{where}: expected {expected}, got {value!r:.60}"]


def _group_problems(group: dict, path: str) -> list[str]:
    keys = [row["key"] for row in group["rows"]]
    found = [f"{path}.rows: key {k!r} appears {keys.count(k)} times" for k in dict.fromkeys(keys)
             if keys.count(k) > 1]
    if group["baseline"] not in keys:
        found.append(f"{path}.baseline: {group['baseline']!r} is not the key of any of its rows")
    return found


def check_document(doc, source: str = "document") -> dict:
    """`doc` itself if it follows the schema (a tcgemm-bench/1 document: as /2, see _from_v1), else
    ResultsError listing every bad field by its path (e.g. "groups[0].rows[3].tflops: expected a
    positive number, got 'fast'")."""
    if not isinstance(doc, dict):
        problems = [f"expected a JSON object, got {type(doc).__name__}"]
    elif doc.get("schema") not in (SCHEMA, SCHEMA_V1):
        problems = [f"schema: expected {SCHEMA!r} (or {SCHEMA_V1!r}), got {doc.get('schema')!r}"
                    + (" (written by a different tcgemm version)" if "schema" in doc else "")]
    else:
        problems = _problems(doc, DOCUMENT if doc["schema"] == SCHEMA else DOCUMENT_V1, "")
        if not problems:
            inputs = [g["inputs"] for g in doc["groups"]]
            problems = [f"groups: inputs {i!r} appear {inputs.count(i)} times"
                        for i in dict.fromkeys(inputs) if inputs.count(i) > 1]
            problems += [p for i, g in enumerate(doc["groups"]) for p in _group_problems(g, f"groups[{i}]")]
    if problems:
        raise ResultsError(f"{source} is not a valid {SCHEMA} document:\n  " + "\n  ".join(problems))
    return doc if doc["schema"] == SCHEMA else _from_v1(doc)


def _from_v1(doc: dict) -> dict:
    """A valid tcgemm-bench/1 document as /2: its fixed counts as a plan, each row with its runs."""
    reps, warmup = doc["method"]["reps"], doc["method"]["warmup"]
    plan = asdict(TimingPlan().with_counts(reps, warmup))
    method = {"plan": plan, **{k: v for k, v in doc["method"].items() if k not in ("reps", "warmup")}}
    groups = [{**g, "rows": [{**row, "runs": reps} for row in g["rows"]]} for g in doc["groups"]]
    return {**doc, "schema": SCHEMA, "method": method, "groups": groups}


# --- building a document from the bench ----------------------------------------------------

def _title_and_variant(key: str, name: str) -> tuple[str, str]:
    """The bench names a kernel '<title> (<variant>)' when its configuration matters; cuBLAS is
    named by its name alone."""
    kernel = GEMM_KERNELS.get(key)
    if kernel is None or not name.startswith(kernel.title):
        return name, ""
    return kernel.title, name[len(kernel.title):].strip().removeprefix("(").removesuffix(")")


def bench_group(inputs: str, heading: str, baseline: str, results, peak_tflops: float | None,
                ceiling_name: str, ceiling_tflops: float) -> dict:
    """One entry of "groups" from the bench's results (tcgemm.engine.report.BenchResult, each with its
    `key`); `baseline` is the key of the result the others are set against."""
    base = next((r for r in results if r.key == baseline), None)
    if base is None:
        raise ResultsError(f"the {inputs} results hold no {baseline!r} result to set the others against "
                           f"(keys: {[r.key for r in results]})")
    rows = []
    for r, row in zip(results, table_rows(results, base.name, peak_tflops, ceiling_tflops)):
        title, variant = _title_and_variant(r.key, r.name)
        rows.append({"key": r.key, "title": title, "variant": variant, "time_us": row["time_us"],
                     "iqr_pct": row["spread_pct"], "tflops": row["tflops"], "pct_baseline": row["pct_baseline"],
                     "pct_peak": row["pct_peak"], "pct_ceiling": row["pct_ceiling"], "check": row["check"],
                     "runs": r.timing.runs})
    return {"inputs": inputs, "heading": heading, "baseline": baseline,
            "ceiling": {"name": ceiling_name, "tflops": ceiling_tflops}, "peak_tflops": peak_tflops,
            "rows": rows}


def document(device: dict, M: int, N: int, K: int, plan: TimingPlan, groups: list[dict],
             date: datetime | None = None) -> dict:
    """The whole document, checked: `device` is DeviceInfo.as_dict(), `groups` from bench_group,
    `plan` the timing plan the bench ran under. The method fields say how tcgemm.engine.gpu.bench.bench
    times (CUDA events, L2 overwritten, median)."""
    date = (date or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return check_document({
        "schema": SCHEMA, "tcgemm_version": __version__, "date": date.isoformat(timespec="seconds"),
        "device": dict(device), "shape": {"M": M, "N": N, "K": K},
        "method": {"plan": asdict(plan), "statistic": "median", "timer": "CUDA events", "l2_flush": True},
        "groups": groups,
    })


# --- files ---------------------------------------------------------------------------------

def slug(device_name: str) -> str:
    """The file name stem of a GPU: 'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    out = re.sub(r"[^a-z0-9]+", "-", device_name.lower()).strip("-")
    if not out:
        raise ResultsError(f"cannot make a file name from the device name {device_name!r}")
    return out


def json_path(target: str | Path, device_name: str) -> Path:
    """Where `--json target` writes: a folder (existing, or named with a trailing /) gets
    <folder>/<slug of the GPU>.json; anything else is the file itself."""
    if str(target).endswith(("/", "\\")) or Path(target).is_dir():
        return Path(target) / f"{slug(device_name)}.json"
    return Path(target)


def write(doc: dict, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(check_document(doc), indent=1) + "\n", encoding="utf-8")
    return path


def load(path: str | Path) -> dict:
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path} is not JSON: {exc}") from exc
    return check_document(doc, str(path))


def load_all(folder: str | Path) -> list[dict]:
    """Every results/*.json document, checked, in file-name order."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ResultsError(f"no results folder {folder} (results/ of the checkout holds one file per GPU)")
    return [load(path) for path in sorted(folder.glob("*.json"))]


# --- comparing GPUs ------------------------------------------------------------------------

def gpu_labels(docs: list[dict]) -> list[str]:
    """The device names, with the date where two documents name the same GPU."""
    names = [d["device"]["name"] for d in docs]
    return [f"{n} ({d['date'][:10]})" if names.count(n) > 1 else n for n, d in zip(names, docs)]


def _size(doc: dict) -> str:
    return "×".join(str(doc["shape"][n]) for n in "MNK")


def describe(docs: list[dict], folder: str = "results/") -> str:
    """Which GPUs there are results from, one short line each, or what to do when there are none."""
    if not docs:
        return (f"No results yet: {folder} holds no JSON file. On a machine with an NVIDIA GPU,\n"
                f"`python -m tcgemm bench --json {folder}` adds that GPU's.")
    shapes = {_size(d) for d in docs}
    lines = [f"Results from {len(docs)} GPU{'s' if len(docs) > 1 else ''}"
             + (f", M×N×K = {shapes.pop()}:" if len(shapes) == 1 else ":")]
    for label, d in zip(gpu_labels(docs), docs):
        dev = d["device"]
        lines.append(f"  {label}: {dev['arch']}, {dev['sm_count']} SMs, CUDA {dev['cuda_runtime']}, {d['date'][:10]}"
                     + (f"; M×N×K = {_size(d)}" if len(shapes) > 1 else ""))
    return "\n".join(lines)


def _kernels(docs: list[dict]) -> list[tuple[str, str, str, str]]:
    """(inputs, key, title, heading) of every row of every document, in first-seen order."""
    seen = {}
    for d in docs:
        for g in d["groups"]:
            for row in g["rows"]:
                seen.setdefault((g["inputs"], row["key"]), (row["title"], g["heading"]))
    return [(inputs, key, title, heading) for (inputs, key), (title, heading) in seen.items()]


def _rows_by_kernel(doc: dict) -> dict[tuple[str, str], dict]:
    return {(g["inputs"], row["key"]): row for g in doc["groups"] for row in g["rows"]}


def _short(title: str) -> str:
    """'Kernel 4.0: 64 x 64 ...' -> 'Kernel 4.0'; 'cuBLAS SGEMM (cublasSgemm, TF32 off)' -> 'cuBLAS SGEMM'."""
    return title.split(":")[0].split(" (")[0]


def comparison_table(docs: list[dict]) -> Table | None:
    """One row per kernel, one column per GPU: TFLOP/s and, in brackets, % of the same GPU's cuBLAS
    for the same inputs. None when there are no documents."""
    if not docs:
        return None
    by_doc = [_rows_by_kernel(d) for d in docs]
    shapes = {_size(d) for d in docs}
    labels = gpu_labels(docs) if len(shapes) == 1 else [
        f"{label}, {_size(d)}" for label, d in zip(gpu_labels(docs), docs)]

    def cell(row):
        if row is None:
            return None
        return f"{row['tflops']:.1f} ({row['pct_baseline']:.0f}%)" + ("" if row["check"] == "PASS" else " FAIL")

    body, notes = [], []
    for inputs, key, title, _ in _kernels(docs):
        rows = [rows.get((inputs, key)) for rows in by_doc]
        body.append([title, *(cell(r) for r in rows)])
        variants = {label: r["variant"] for label, r in zip(labels, rows) if r is not None}
        if len(set(variants.values())) > 1:
            notes.append(f"{_short(title)} ran as " + "; ".join(f"{v or 'default'} on {label}"
                                                                 for label, v in variants.items()) + ".")
    shape = f" at M×N×K = {shapes.pop()}" if len(shapes) == 1 else ""
    caption = (f"TFLOP/s{shape} (in brackets: % of the same GPU's cuBLAS for the same inputs, "
               "cublasGemmEx for fp16, cublasSgemm for fp32); n/a: not run on that GPU")
    return Table([Column("Kernel"), *(Column(label, align="right") for label in labels)], body, caption, notes)


def comparison_figure(docs: list[dict]):
    """Per input dtype, TFLOP/s and % of the same GPU's cuBLAS of every kernel, one bar per GPU;
    a FAIL bar is hatched. A matplotlib Figure outside pyplot's state, or None without documents."""
    if not docs:
        return None
    by_doc = [_rows_by_kernel(d) for d in docs]
    groups: dict[str, list[tuple[str, str, str]]] = {}
    for inputs, key, title, heading in _kernels(docs):
        groups.setdefault(inputs, []).append((key, title, heading))
    colors = [GROUP_HUES[i % len(GROUP_HUES)] for i in range(len(docs))]
    row_in = 0.12 + 0.11 * len(docs)
    heights = [len(kernels) * row_in + 0.9 for kernels in groups.values()]
    fig = new_figure((DISPLAY_COLUMN_PX - 16) / RECORD_DPI, sum(heights) + 0.4, layout="constrained")
    subfigs = fig.subfigures(len(groups), 1, height_ratios=heights, squeeze=False)[:, 0]
    bar = 0.8 / len(docs)
    for subfig, (inputs, kernels) in zip(subfigs, groups.items()):
        subfig.suptitle(kernels[0][2], fontsize=10)
        tf_ax, pct_ax = subfig.subplots(1, 2, sharey=True)
        for j, (rows, color) in enumerate(zip(by_doc, colors)):
            for i, (key, _, _) in enumerate(kernels):
                row = rows.get((inputs, key))
                if row is None:
                    continue
                y = i - 0.4 + bar * (j + 0.5)
                hatch = None if row["check"] == "PASS" else "///"
                tf_ax.barh(y, row["tflops"], height=bar, color=color, hatch=hatch, edgecolor="white")
                pct_ax.barh(y, row["pct_baseline"], height=bar, color=color, hatch=hatch, edgecolor="white")
        tf_ax.set_yticks(range(len(kernels)), [_short(title) for _, title, _ in kernels], fontsize=9)
        tf_ax.invert_yaxis()
        tf_ax.set_xlabel("TFLOP/s", fontsize=9)
        pct_ax.set_xlabel("% of this GPU's cuBLAS", fontsize=9)
        pct_ax.axvline(100, color="#444444", linewidth=1, linestyle="--")
        for ax in (tf_ax, pct_ax):
            ax.tick_params(labelsize=9)
            ax.set_xlim(left=0)
            ax.grid(axis="x", alpha=0.3)
    fig.legend([Patch(color=c) for c in colors], gpu_labels(docs), loc="outside upper center", ncols=min(len(docs), 2), fontsize=9,
               frameon=False)
    return fig


# --- what the results page says of each run (its readings) ---------------------------------

NEAR = 0.10
"""The results page names the kernels that run on every target within this fraction of the fastest."""


def _runs_everywhere(key: str) -> bool:
    """Kernel `key` runs on every architecture the book targets (sm_80 on: mma.sync), not only on a
    later one (Hopper's TMA and wgmma)."""
    from tcgemm.arch import TARGET_ARCHS

    kernel = GEMM_KERNELS.get(key)
    return kernel is not None and tuple(kernel.archs) == tuple(TARGET_ARCHS)


def _entry(row: dict) -> dict:
    """A row as the page's readings quote it: short name, what it is, TFLOP/s, % of its cuBLAS and
    its spread (half the interquartile range, a fraction of the median, as the tables' ±)."""
    what = row["title"].split(": ", 1)[1] if ": " in row["title"] else ""
    kernel = GEMM_KERNELS.get(row["key"])
    only_on = "" if kernel is None or _runs_everywhere(row["key"]) else " or ".join(kernel.archs)
    return {"name": _short(row["title"]), "what": what, "tflops": row["tflops"], "pct": row["pct_baseline"],
            "spread": row["iqr_pct"] / 200, "only_on": only_on}


def summary(doc: dict, label: str | None = None) -> dict:
    """What the results page says of one run, as plain values: per input type ("float16", "float32",
    where the run has them), its cuBLAS, its fastest kernel that passed its check, and for fp16 also
    the fastest kernel that runs on every target (`portable`), the other such kernels within NEAR of it
    (`near`), and Kernels 4.5 and 4.6 (`plans`, where run)."""
    out = {"gpu": label or doc["device"]["name"]}
    for group in doc["groups"]:
        rows = group["rows"]
        base = next(r for r in rows if r["key"] == group["baseline"])
        kernels = [r for r in rows if r is not base and r["check"] == "PASS"]
        if not kernels:
            continue
        best = max(kernels, key=lambda r: r["tflops"])
        said = {"cublas": _entry(base), "best": _entry(best), "kernels": [_entry(r) for r in kernels],
                "failed": [_short(r["title"]) for r in rows if r["check"] != "PASS"]}
        everywhere = [r for r in kernels if _runs_everywhere(r["key"])]
        if group["inputs"] == "float16" and everywhere:
            portable = max(everywhere, key=lambda r: r["tflops"])
            said["portable"] = _entry(portable)
            said["near"] = [_entry(r) for r in everywhere
                            if r is not portable and r["tflops"] >= (1 - NEAR) * portable["tflops"]]
            said["near_limit"] = NEAR
            said["plans"] = [_entry(r) for key in ("k4.5", "k4.6") for r in kernels if r["key"] == key]
        out[group["inputs"]] = said
    return out


def against_first(docs: list[dict]) -> list[dict]:
    """Each run after the first set against the first, kernel by kernel (the rows both ran and passed):
    for the page's reading of several GPUs. Each: the two GPUs' labels and device facts (SMs, boost
    clock, L2), and per input type the rows as [short name, rate here / rate there, whether the two
    differ by more than their spreads (the tables' ±) together]."""
    labels = gpu_labels(docs)
    if len(docs) < 2:
        return []
    first = _rows_by_kernel(docs[0])

    def device(doc):
        d = doc["device"]
        return {"sms": d["sm_count"], "clock": d["sm_clock_mhz"], "l2_mib": d["l2_bytes"] / 2**20,
                "memory_gib": d["memory_bytes"] / 2**30}

    out = []
    for label, doc in zip(labels[1:], docs[1:]):
        compared = {}
        for (inputs, key), row in _rows_by_kernel(doc).items():
            there = first.get((inputs, key))
            if there is None or row["check"] != "PASS" or there["check"] != "PASS":
                continue
            ratio = row["tflops"] / there["tflops"]
            beyond = abs(ratio - 1) > (row["iqr_pct"] + there["iqr_pct"]) / 200
            compared.setdefault(inputs, []).append([_short(row["title"]), ratio, beyond])
        out.append({"gpu": label, "against": labels[0], "here": device(doc), "there": device(docs[0]),
                    **compared})
    return out
