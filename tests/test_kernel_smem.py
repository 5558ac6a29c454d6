"""tcgemm.smem.kernel_smem against the kernels' own constants, hand counts, and the H100 counters the
book recorded; tcgemm.gpu.ncu's metric table and retry logic with a fake ncu. No GPU needed."""
import math
from pathlib import Path
import re
import subprocess
from collections import Counter

import numpy as np
import pytest

from tcgemm import KERNEL_DIR
from tcgemm.smem.banks import analyze
from tcgemm.catalog import GEMM_KERNELS, TARGET_ARCHS, keys_for
from tcgemm.errors import OperandError
from tcgemm.gpu import ncu
from tcgemm.smem.kernel_smem import OPS, block_step, configured, predict

KEYS = keys_for("float16")   # the Tensor Core kernels; the SGEMM ones are modelled in sgemm_layout
ARCHS = [None, *TARGET_ARCHS]


def constants(key):
    """The integer literals `constexpr int NAME = 123;` of a kernel's source."""
    text = (KERNEL_DIR / GEMM_KERNELS[key].source).read_text()
    return {name: int(value) for name, value in re.findall(r"constexpr int (\w+) = (\d+);", text)}


def ldsm(instrs, array):
    return [i for i in instrs if i.op == "ldsm" and i.array == array]


def words(instrs):
    """Multiset of (warp, array, lane, 4-byte word) that the loads touch."""
    out = Counter()
    for ins in instrs:
        for lane in np.flatnonzero(ins.access.active):
            for word in ins.access.words(int(lane)):
                out[ins.warp, ins.array, int(lane), int(word)] += 1
    return out


def test_mirrored_geometry_is_the_kernels():
    for key in ("k1.0", "k1.1", "k2.0", "k2.1"):
        c, k = constants(key), GEMM_KERNELS[key]
        assert (c["BM"], c["BN"], c["BK"], c["THREADS"]) == (k.tile_m, k.tile_n, k.tile_k, k.threads)
    c, k = constants("hgemm"), GEMM_KERNELS["hgemm"]
    assert (c["TM"], c["TN"], c["TK"], 32) == (k.tile_m, k.tile_n, k.tile_k, k.threads)


def test_every_kernel_with_shared_memory_has_a_model():
    from tcgemm.sgemm import sgemm_layout
    for key, kernel in GEMM_KERNELS.items():
        if "__shared__" not in (KERNEL_DIR / kernel.source).read_text():
            continue
        if kernel.in_dtype == "float32":   # the SGEMM kernels' shared memory is modelled in sgemm_layout
            assert sgemm_layout.staging_bank_conflicts(kernel.tile_m).conflicts == 0
        else:
            assert block_step(key)
    with pytest.raises(KeyError, match="k1.0.*k2.1"):
        block_step("k9")


def touched(ins):
    """The bytes an instruction reads or writes, over its active lanes."""
    return [b for lane in np.flatnonzero(ins.access.active)
            for b in range(int(ins.access.addresses[lane]), int(ins.access.addresses[lane]) + ins.access.width)]


def warp_tiles(key, warp):
    """(first row, rows) of As and of Bs that the warp's mma tiles need, from the kernel's constants."""
    c = constants(key)
    if key == "hgemm":
        return (0, c["TM"]), (0, c["TN"])
    wm = c["WM"] if "WM" in c else c["TILES_M"] * c["MMA_M"]
    wn = c["WN"] if "WN" in c else c["TILES_N"] * c["MMA_N"]
    return ((warp // c["WARPS_N"]) * wm, wm), ((warp % c["WARPS_N"]) * wn, wn)


@pytest.mark.parametrize("arch", [None, "sm_90"])
@pytest.mark.parametrize("key", KEYS)
def test_each_step_stores_the_tiles_once_and_each_warp_reads_its_rows(key, arch):
    """The mirrored index arithmetic, checked by what it touches: every byte of each tile is stored
    once per step, and each warp reads exactly the tile rows of its mma tiles, every byte equally often."""
    instrs = block_step(key, arch=arch)
    stored = {array: Counter(b for i in instrs if i.op == "st" and i.array == array for b in touched(i))
              for array in ("As", "Bs")}
    base = {array: min(counter) for array, counter in stored.items()}
    for counter in stored.values():
        assert set(counter.values()) == {1} and max(counter) - min(counter) + 1 == len(counter)
    row_bytes = 2 * configured(key, arch).tile_k
    for warp in range(GEMM_KERNELS[key].threads // 32):
        for array, (first, rows) in zip(("As", "Bs"), warp_tiles(key, warp)):
            read = Counter(b for i in instrs if i.warp == warp and i.op != "st" and i.array == array
                           for b in touched(i))
            start = base[array] + first * row_bytes
            assert set(read) == set(range(start, start + rows * row_bytes)), (array, warp)
            assert len(set(read.values())) == 1, (array, warp)


PERMUTED = ["k2.0", "k2.1", "k3.0", "k3.1", "k4.0", "k4.1", "k4.2", "k4.3", "k4.4", "k4.5"]


@pytest.mark.parametrize("arch", ARCHS)
def test_slice_xor_addresses_equal_permuted_chunk(arch):
    """Kernel 4.4 computes slice ks's ldmatrix address as slice 0's XOR ks << 5 (plus 16-row tiles);
    every lane of every warp must then read exactly what permuted_chunk gives (Kernel 4.3)."""
    by_formula, by_xor = block_step("k4.3", arch=arch), block_step("k4.4", arch=arch)
    assert len(by_formula) == len(by_xor)
    for old, new in zip(by_formula, by_xor):
        assert (old.warp, old.array, old.op) == (new.warp, new.array, new.op)
        assert np.array_equal(old.access.addresses, new.access.addresses)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("key", PERMUTED)
def test_permuted_kernels_are_conflict_free(key, arch):
    k = configured(key, arch)
    counts = predict(key, 2 * k.tile_m, 2 * k.tile_n, 2 * k.tile_k, arch=arch)
    assert counts.ldsm.requests > 0 and counts.st.requests > 0
    assert counts.ldsm.conflicts == 0 and counts.st.conflicts == 0
    assert counts.ld.requests == 0


@pytest.mark.parametrize("key", ["k2.0", "k2.1"])
def test_without_the_permutation_ldmatrix_is_4_way(key):
    instrs = block_step(key, permuted=False)
    for ins in ldsm(instrs, "As") + ldsm(instrs, "Bs"):
        report = analyze(ins.access)
        assert report.ways == 4 and report.wavefronts == 4 * report.ideal
    for ins in instrs:
        if ins.op == "st":
            assert analyze(ins.access).conflicts == 0   # one 128-byte line per phase either way
    first = analyze(ldsm(instrs, "As")[0].access).phases[0]   # warp 0, rows 0-7, chunk 0
    banks = dict(zip(first.lanes.tolist(), first.banks_per_lane))
    assert all(banks[lane] == (0, 1, 2, 3) for lane in (0, 2, 4, 6))
    assert all(banks[lane] == (16, 17, 18, 19) for lane in (1, 3, 5, 7))


def test_ldmatrix_request_counts_by_hand():
    M, N, K = 128, 192, 96
    for key in ("k2.0", "k2.1"):
        c = constants(key)
        k_steps = c["BK"] // c["MMA_K"]
        per_warp_step = {  # ldmatrix.x4 for A plus .x2 for B
            "k2.0": c["TILES_M"] * c["TILES_N"] * k_steps * 2,
            "k2.1": (c["TILES_M"] + c["TILES_N"]) * k_steps,
        }[key]
        warp_steps = (c["THREADS"] // 32) * (K // c["BK"]) * (M // c["BM"]) * (N // c["BN"])
        counts = predict(key, M, N, K)
        assert counts.ldsm.requests == per_warp_step * warp_steps
        assert counts.st.requests == 2 * warp_steps   # one uint4 of A and one of B per thread
    c = constants("hgemm")
    assert predict("hgemm", M, N, K).ldsm.requests == 2 * (K // c["TK"]) * (M // c["TM"]) * (N // c["TN"])


@pytest.mark.parametrize("arch", ARCHS)
def test_kernel_2_1_loads_fewer_a_fragments_except_on_sm_90(arch):
    a20, a21 = (len(ldsm(block_step(k, arch=arch), "As")) for k in ("k2.0", "k2.1"))
    b20, b21 = (len(ldsm(block_step(k, arch=arch), "Bs")) for k in ("k2.0", "k2.1"))
    if arch == "sm_90":   # ptxas drops 2.0's repeated ldmatrix (tests/test_sass.py)
        assert (a20, b20) == (a21, b21)
    else:
        assert (a20, b20) == (2 * a21, 2 * b21)


@pytest.mark.parametrize("arch", TARGET_ARCHS)
@pytest.mark.parametrize("key", ["k1.0", "k1.1"])
def test_compiled_fragment_loads_pair_the_halves(key, arch):
    source, compiled = block_step(key), block_step(key, arch=arch)
    src_ld = [i for i in source if i.op == "ld"]
    sass_ld = [i for i in compiled if i.op == "ld"]
    assert {i.access.width for i in src_ld} == {2} and {i.access.width for i in sass_ld} == {4}
    assert 2 * len(sass_ld) == len(src_ld)
    assert set(words(src_ld)) == set(words(sass_ld))
    assert all(analyze(i.access).ways == 2 for i in sass_ld)   # rows g and g + 4 share banks


# Recorded by book/mma_fragments.ipynb on an H100 (sm_90), M = N = K = 4096: the shared _op_ld
# counters (which on that GPU include ldmatrix), as (wavefronts, conflicts).
H100_OP_LD = {"k1.0": (402_776_848, 201_450_256), "k1.1": (201_401_698, 100_738_402),
              "hgemm": (402_791_981, 201_465_389)}


@pytest.mark.parametrize("key", H100_OP_LD)
def test_prediction_matches_recorded_h100_counters(key):
    counts = predict(key, 4096, 4096, 4096, arch="sm_90")
    wavefronts = counts.ld.wavefronts + counts.ldsm.wavefronts
    conflicts = counts.ld.conflicts + counts.ldsm.conflicts
    measured_wavefronts, measured_conflicts = H100_OP_LD[key]
    extra = measured_wavefronts - wavefronts
    assert 0 <= extra < 5e-4 * wavefronts
    assert measured_conflicts - conflicts == extra   # the counter calls every extra wavefront a conflict


@pytest.mark.parametrize("arch", [None, "sm_90"])
@pytest.mark.parametrize("key", KEYS)
def test_counts_scale_with_k_and_with_the_grid(key, arch):
    k = configured(key, arch)
    M, N, K = 2 * k.tile_m, 3 * k.tile_n, 2 * k.tile_k
    base = predict(key, M, N, K, arch=arch)
    assert base.total.requests > 0 and base.total.wavefronts >= base.total.requests
    for (m, n, kk), factor in (((M, N, 3 * K), 3), ((2 * M, N, K), 2), ((M, 5 * N, K), 5)):
        assert predict(key, m, n, kk, arch=arch) == base * factor
    rows = base.table_rows()
    assert [r[0] for r in rows] == [*OPS, "total"]
    assert rows[-1][1:] == tuple(map(sum, zip(*(r[1:] for r in rows[:-1]))))


@pytest.mark.parametrize("args, message", [
    ((48, 64, 32), "M to be a multiple of 32"),
    ((64, 64, 24), "K to be a multiple of 16"),
    ((0, 64, 32), "M must be positive"),
    ((64.0, 64, 32), "M must be an integer"),
    ((2**16, 2**16, 32), "M\\*N=.* overflows"),
])
def test_bad_shapes_raise(args, message):
    with pytest.raises(OperandError, match=message):
        predict("k1.0", *args)
    assert issubclass(OperandError, ValueError)


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="sm_90"):
        predict("k2.0", 64, 64, 32, arch="sm_75")
    with pytest.raises(ValueError, match="k2.0, k2.1 only"):
        predict("k1.0", 64, 64, 32, permuted=False)
    with pytest.raises(KeyError, match="hgemm"):
        predict("cublas", 64, 64, 32)


# --- tcgemm.gpu.ncu without a GPU --------------------------------------------------------------

def test_metric_table_is_consistent():
    assert set(ncu.PREDICTED_BY) <= set(ncu.METRICS) and ncu.OPTIONAL <= set(ncu.METRICS)
    assert len(set(ncu.METRICS.values())) == len(ncu.METRICS)
    for name, (ops, quantity) in ncu.PREDICTED_BY.items():
        assert set(ops) <= set(OPS) and quantity in ("requests", "wavefronts", "conflicts"), name
    for metric in ncu.METRICS.values():
        assert re.fullmatch(r"[a-z0-9]+__[a-z0-9_]+\.(sum|max)", metric), metric


def fake_ncu(monkeypatch, missing=(), name_it=True, values=None):
    """A fake _run: rejects any run that asks for a metric in `missing` (naming it in its message
    when `name_it`), else prints ncu's raw CSV with `values` (default 1.0 each)."""
    calls = []

    def run(_ncu, metrics, key, M, N, K):
        calls.append(list(metrics))
        bad = [m for m in metrics if m in missing]
        if bad:
            said = f"==ERROR== Failed to find metric regex:^{bad[0].split('.')[0]}$" if name_it else "==ERROR== failed"
            return subprocess.CompletedProcess([], 1, stdout="", stderr=said)
        header = ",".join(f'"{c}"' for c in ["ID", "Kernel Name", *metrics])
        units = ",".join('""' for _ in range(2 + len(metrics)))
        row = ",".join(['"0"', '"k"', *(f'"{(values or {}).get(m, 1.0):,}"' for m in metrics)])
        return subprocess.CompletedProcess([], 0, stdout=f"==PROF== x\n{header}\n{units}\n{row}\n", stderr="")

    monkeypatch.setattr(ncu, "find_ncu", lambda: "ncu")
    monkeypatch.setattr(ncu, "_run", run)
    return calls


def test_profile_drops_the_missing_optional_metrics_it_is_told_of(monkeypatch):
    gone = ncu.METRICS["smem_ldsm_wavefronts"]
    calls = fake_ncu(monkeypatch, missing={gone})
    counters = ncu.profile("k2.0", 64, 64, 32)
    assert counters["dropped"] == ["smem_ldsm_wavefronts"] and len(calls) == 2
    assert math.isnan(counters["smem_ldsm_wavefronts"])
    assert counters["smem_ldsm_conflicts"] == 1.0   # ..._op_ldsm is not ..._op_ld: kept
    assert counters["smem_ld_wavefronts"] == 1.0 and counters["kernels"] == ["k"]


def test_profile_drops_every_optional_metric_when_not_told_which(monkeypatch):
    calls = fake_ncu(monkeypatch, missing={ncu.METRICS["gmma"]}, name_it=False)
    counters = ncu.profile("k1.0", 64, 64, 32)
    assert sorted(counters["dropped"]) == sorted(ncu.OPTIONAL) and len(calls) == 2
    assert not set(calls[1]) & {ncu.METRICS[n] for n in ncu.OPTIONAL}
    assert counters["hmma"] == 1.0


def test_profile_gives_up_when_a_required_metric_is_missing(monkeypatch):
    calls = fake_ncu(monkeypatch, missing={ncu.METRICS["hmma"]})
    with pytest.raises(ncu.NcuUnavailable, match="did not profile"):
        ncu.profile("k1.0", 64, 64, 32)
    assert len(calls) == 2   # once with everything, once without the optional metrics


def test_predicted_vs_measured_sets_each_counter_beside_its_prediction(monkeypatch):
    counts = predict("hgemm", 64, 64, 32, arch="sm_90")
    values = {ncu.METRICS["smem_ld_wavefronts"]: 7.0}
    fake_ncu(monkeypatch, missing={ncu.METRICS["smem_ldsm_inst_sass"]}, values=values)
    rows = {r.counter: r for r in ncu.predicted_vs_measured("hgemm", 64, 64, 32, arch="sm_90")}
    assert set(rows) == set(ncu.PREDICTED_BY)
    assert rows["smem_ld_wavefronts"].predicted == counts.ld.wavefronts + counts.ldsm.wavefronts
    assert rows["smem_ld_wavefronts"].measured == 7.0
    assert rows["smem_ldsm_inst"].predicted == counts.ldsm.requests
    assert rows["smem_st_conflicts"].metric == ncu.METRICS["smem_st_conflicts"]
    assert math.isnan(rows["smem_ldsm_inst_sass"].measured)


def test_bigger_warp_tiles_read_fewer_shared_bytes_per_mma():
    """The prediction behind Kernel 4.0: ldmatrix bytes per mma fall from 192 (64 x 32 warp tile)
    to 128 (64 x 64), and the permuted layout keeps every one conflict-free for BK = 32 and 64."""
    def bytes_per_mma(key, arch):
        k = configured(key, arch)
        counts = predict(key, k.tile_m, k.tile_n, k.tile_k, arch=arch)
        mmas = (k.tile_m // 16) * (k.tile_n // 8) * (k.tile_k // 16)
        return counts.ldsm.wavefronts * 128 / mmas
    assert bytes_per_mma("k3.1", "sm_90") == 192
    assert bytes_per_mma("k4.0", "sm_90") == 128 == bytes_per_mma("k4.0", "sm_89")
    assert configured("k4.0", "sm_90").tile_k == 64 and configured("k4.0", "sm_89").tile_k == 32


def test_stall_samples_by_opcode_reads_ncus_source_page():
    """Six rows of a real `ncu --page source --csv` export (Kernel 4.2 on the H100), summed by opcode."""
    text = (Path(__file__).parent / "data" / "ncu_source_page.csv").read_text()
    by_op = ncu.stall_samples_by_opcode(text)
    assert set(by_op) == {"LDSM", "HMMA", "LDGSTS", "STG"}
    assert by_op["STG"] == {"lg": 128 + 37, "not_selected": 2}
    assert by_op["LDGSTS"] == {"dispatch": 133, "selected": 23, "wait": 17}   # "@P0" predicate skipped
    assert by_op["HMMA"]["math"] == 184 + 366 and by_op["HMMA"]["short_sb"] == 128
    assert by_op["LDSM"] == {"barrier": 37, "not_selected": 1}
