"""tcgemm.smem.kernel_smem against the kernels' own constants, hand counts, and the H100 counters the
book recorded. No GPU needed."""
import re
from collections import Counter

import numpy as np
import pytest

from tcgemm import KERNEL_DIR
from tcgemm.smem.banks import analyze
from tcgemm.engine.catalog import GEMM_KERNELS, TARGET_ARCHS, configured, keys_for
from tcgemm.errors import OperandError
from tcgemm.smem.kernel_smem import OPS, block_step, count, predict

# The mma.sync kernels; the SGEMM ones are modelled in sgemm_layout, and no thread of Kernels 5.1-5.5
# touches their tiles (TMA writes them, wgmma reads them: tcgemm.canonical and test_wgmma_layouts).
KEYS = [k for k in keys_for("float16") if not GEMM_KERNELS[k].arch_specific]
ARCHS = [None, *TARGET_ARCHS]


def constants(key):
    """The integer constants of a kernel's source: `constexpr int NAME = 123;`, the default of
    `#define NAME 123`, and quotients of those, `constexpr int WM = BM / WARPS_M;`."""
    text = (KERNEL_DIR / GEMM_KERNELS[key].source).read_text()
    found = {name: int(value) for name, value in re.findall(r"#define (\w+) (\d+)\n", text)}
    found.update({name: int(value) for name, value in re.findall(r"constexpr int (\w+) = (\d+);", text)})
    for name, a, b in re.findall(r"constexpr int (\w+) = (\w+) / (\w+);", text):
        if a in found and b in found:
            found[name] = found[a] // found[b]
    return found


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


def words_per_warp(instrs):
    """Multiset of (warp, array, 4-byte word) that the loads touch, whichever lane reads it."""
    out = Counter()
    for (warp, array, _lane, word), n in words(instrs).items():
        out[warp, array, word] += n
    return out


def test_mirrored_geometry_is_the_kernels():
    for key in ("k1.0", "k1.1", "k2.0", "k2.1"):
        c, k = constants(key), GEMM_KERNELS[key]
        assert (c["BM"], c["BN"], c["BK"], c["THREADS"]) == (k.tile_m, k.tile_n, k.tile_k, k.threads)
    c, k = constants("h1"), GEMM_KERNELS["h1"]
    assert (c["TM"], c["TN"], c["TK"], 32) == (k.tile_m, k.tile_n, k.tile_k, k.threads)


def test_every_kernel_with_shared_memory_has_a_model():
    from tcgemm.sgemm import sgemm_layout
    for key, kernel in GEMM_KERNELS.items():
        if "__shared__" not in (KERNEL_DIR / kernel.source).read_text():
            continue
        if kernel.arch_specific:    # Kernels 5.1-5.5 (see KEYS)
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
    if key == "h1":
        return (0, c["TM"]), (0, c["TN"])
    wm = c["WM"] if "WM" in c else c["TILES_M"] * c["MMA_M"]
    wn = c["WN"] if "WN" in c else c["TILES_N"] * c["MMA_N"]
    return ((warp // c["WARPS_N"]) * wm, wm), ((warp % c["WARPS_N"]) * wn, wn)


@pytest.mark.parametrize("arch", [None, "sm_90"])
@pytest.mark.parametrize("key", KEYS)
def test_each_step_stores_the_tiles_once_and_each_warp_reads_its_rows(key, arch):
    """The mirrored index arithmetic, checked by what it touches: every byte of each tile is stored
    once per step (by the warps; with TMA, Kernel 5.0, by the copy engine, so no warp stores), and each
    warp reads exactly the tile rows of its mma tiles, every byte equally often."""
    instrs = block_step(key, arch=arch)
    stored = {array: Counter(b for i in instrs if i.op == "st" and i.array == array for b in touched(i))
              for array in ("As", "Bs")}
    if GEMM_KERNELS[key].signature.tensor_maps:
        assert not any(stored.values())
        stored = {array: Counter(b for i in instrs if i.array == array for b in touched(i)) for array in stored}
    base = {array: min(counter) for array, counter in stored.items()}
    for counter in stored.values() if not GEMM_KERNELS[key].signature.tensor_maps else ():
        assert set(counter.values()) == {1} and max(counter) - min(counter) + 1 == len(counter)
    row_bytes = 2 * configured(key, arch).tile_k
    for warp in range(GEMM_KERNELS[key].threads // 32):
        for array, (first, rows) in zip(("As", "Bs"), warp_tiles(key, warp)):
            read = Counter(b for i in instrs if i.warp == warp and i.op != "st" and i.array == array
                           for b in touched(i))
            start = base[array] + first * row_bytes
            assert set(read) == set(range(start, start + rows * row_bytes)), (array, warp)
            assert len(set(read.values())) == 1, (array, warp)


PERMUTED = ["k2.0", "k2.1", *(k for k in KEYS if GEMM_KERNELS[k].stages)]   # 2.x and every pipelined kernel


def same_instructions(a, b):
    """Two block-steps issue the same instructions: warp, array, op and every lane's address."""
    assert len(a) == len(b)
    for old, new in zip(a, b):
        assert (old.warp, old.array, old.op) == (new.warp, new.array, new.op)
        assert np.array_equal(old.access.addresses, new.access.addresses)


@pytest.mark.parametrize("arch", ARCHS)
def test_slice_xor_addresses_equal_permuted_chunk(arch):
    """Kernel 4.4 computes slice ks's ldmatrix address as slice 0's XOR ks << 5 (plus 16-row tiles);
    every lane of every warp must then read exactly what permuted_chunk gives (Kernel 4.3)."""
    same_instructions(block_step("k4.3", arch=arch), block_step("k4.4", arch=arch))


@pytest.mark.parametrize("arch", ARCHS)
def test_copy_offsets_equal_permuted_chunk(arch):
    """Kernel 3.6 addresses copy i as copy 0's slot plus i sweeps of ROWS_PER_LOAD rows; every lane of
    every warp must then write exactly where permuted_chunk puts that row (Kernel 3.5), for both BK."""
    assert configured("k3.5", arch).tile_k == configured("k3.6", arch).tile_k
    same_instructions(block_step("k3.5", arch=arch), block_step("k3.6", arch=arch))


@pytest.mark.parametrize("arch", ARCHS)
def test_b_pairs_read_the_same_words_in_fewer_ldmatrix(arch):
    """Kernel 3.3 loads two B fragments per ldmatrix.x4 where 3.2 issues two .x2: every warp reads the
    same words as often, in 3/4 of the ldmatrix (4 of A + 2 of B per slice instead of 4 + 4) and with
    the same number of wavefronts, all conflict-free."""
    x2, x4 = (ldsm(block_step(k, arch=arch), "As") + ldsm(block_step(k, arch=arch), "Bs") for k in ("k3.2", "k3.3"))
    assert words_per_warp(x2) == words_per_warp(x4)
    assert 3 * len(x2) == 4 * len(x4)
    assert count(x2).ldsm.wavefronts == count(x4).ldsm.wavefronts and count(x4).ldsm.conflicts == 0


@pytest.mark.parametrize("key, arch", [(k, a) for k in PERMUTED for a in ARCHS if a in (None, *GEMM_KERNELS[k].archs)])
def test_permuted_kernels_are_conflict_free(key, arch):
    k = configured(key, arch)
    counts = predict(key, 2 * k.tile_m, 2 * k.tile_n, 2 * k.tile_k, arch=arch)
    assert counts.ldsm.requests > 0 and (counts.st.requests > 0) != k.signature.tensor_maps   # TMA: the copy engine stores
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
    c = constants("h1")
    assert predict("h1", M, N, K).ldsm.requests == 2 * (K // c["TK"]) * (M // c["TM"]) * (N // c["TN"])


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
H100_OP_LD = {"k1.0": (402_775_378, 201_448_786), "k1.1": (201_397_674, 100_734_378),
              "h1": (402_792_308, 201_465_716)}


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
    with pytest.raises(ValueError, match="k2.0, k2.1, a1 only"):
        predict("k1.0", 64, 64, 32, permuted=False)
    with pytest.raises(KeyError, match="h1"):
        predict("cublas", 64, 64, 32)


def test_bigger_warp_tiles_read_fewer_shared_bytes_per_mma():
    """The prediction behind Kernel 4.0: ldmatrix bytes per mma fall from 192 (64 x 32 warp tile)
    to 128 (64 x 64), and the permuted layout keeps every one conflict-free for BK = 32 and 64."""
    def bytes_per_mma(key, arch):
        k = configured(key, arch)
        counts = predict(key, k.tile_m, k.tile_n, k.tile_k, arch=arch)
        mmas = (k.tile_m // 16) * (k.tile_n // 8) * (k.tile_k // 16)
        return counts.ldsm.wavefronts * 128 / mmas
    assert {bytes_per_mma(k, "sm_90") for k in ("k3.1", "k3.2", "k3.3", "k3.4", "k3.5", "k3.6")} == {192}
    assert bytes_per_mma("k4.0", "sm_90") == 128 == bytes_per_mma("k4.0", "sm_89")
    assert configured("k4.0", "sm_90").tile_k == 64 and configured("k4.0", "sm_89").tile_k == 32
