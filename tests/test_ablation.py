"""The ablation kernel (kernels/a1_ablation.cu): Kernel 4.4 line for line with its switches off, each
switch visible in the SASS that NVRTC compiles for every target, the shared-memory model's prediction
for NO_XOR, and the ranking of tcgemm.pipelines.ablation. No GPU needed (the SASS tests need NVRTC and
cuobjdump, as tests/test_nvrtc.py does)."""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from tcgemm.engine import sass_loop, source  # noqa: E402
from tcgemm.engine.catalog import ABLATION_SWITCHES, GEMM_KERNELS, SKIP_SWITCHES, TARGET_ARCHS, configured  # noqa: E402
from tcgemm.pipelines import ablation  # noqa: E402
from tcgemm.pipelines.ablation import (ABLATED, Measurement, ablation_figure, ablation_table, ranked,  # noqa: E402
                                       switches_table)
from tcgemm.engine.report import summarize  # noqa: E402
from tcgemm.smem.kernel_smem import predict  # noqa: E402

SWITCHES = [name for name, _ in ABLATION_SWITCHES]
SWITCH_LINE = re.compile(r"#(if|ifndef) (!?)(\w+)$")


def resolve_switches(text: str, names) -> str:
    """`text` with every `#if NAME` / `#if !NAME` block of a switch in `names` resolved for NAME = 0,
    and the `#ifndef NAME` blocks that give those switches their default dropped; every other
    preprocessor line is kept as it is."""
    out, stack = [], []      # stack: per open #if, (is a switch block, keep the current branch)
    for line in text.splitlines():
        match = SWITCH_LINE.match(line.strip())
        if match and match.group(3) in names:
            directive, negated, _ = match.groups()
            stack.append((True, directive == "if" and negated == "!"))
            continue
        if line.startswith("#if"):
            stack.append((False, True))
        elif line.startswith("#else") and stack[-1][0]:
            stack[-1] = (True, not stack[-1][1])
            continue
        elif line.startswith("#endif"):
            if stack.pop()[0]:
                continue
        if all(keep for _, keep in stack):
            out.append(line)
    assert not stack, "unbalanced #if / #endif"
    return "\n".join(out)


def code(text: str) -> list[str]:
    """The lines after the header comment."""
    lines = text.splitlines()
    return lines[next(i for i, line in enumerate(lines) if not line.startswith("//")):]


def test_with_every_switch_off_the_ablation_kernel_is_kernel_4_4():
    a1 = code(resolve_switches(source.kernel_text("a1"), SWITCHES))
    k44 = code(source.kernel_text("k4.4"))
    entry = [i for i, (x, y) in enumerate(zip(a1, k44)) if x != y]
    assert len(a1) == len(k44) and len(entry) == 1, entry
    assert (a1[entry[0]], k44[entry[0]]) == (
        "ablation(const __half *A, const __half *B, float *C, int M, int N, int K) {",
        "slice_xor(const __half *A, const __half *B, float *C, int M, int N, int K) {")


def test_resolving_can_fail():
    """Resolved with NO_XOR = 1 kept, the text is not 4.4's; an unbalanced block is refused."""
    others = [s for s in SWITCHES if s != "NO_XOR"]
    assert code(resolve_switches(source.kernel_text("a1"), others)) != code(source.kernel_text("k4.4"))
    with pytest.raises(AssertionError, match="unbalanced"):
        resolve_switches("#if NO_XOR\nx\n", SWITCHES)


def test_the_diff_from_kernel_4_4_is_the_switches():
    """diff_kernels("k4.4", "a1") removes only the header comment and the entry name; every line it
    adds is a comment, a preprocessor line, or code inside a switch's #if block."""
    diff = str(source.diff_kernels("k4.4", "a1")).splitlines()[2:]
    removed = [line[1:] for line in diff if line.startswith("-")]
    assert all(line.startswith("//") for line in removed[:-1]) and removed[-1].startswith("slice_xor(")
    inside, depth = [], 0
    for line in source.kernel_text("a1").splitlines():
        match = SWITCH_LINE.match(line)
        if match and match.group(3) in SWITCHES:
            depth += 1
        elif line.startswith("#if"):
            depth += depth > 0
        elif line.startswith("#endif") and depth:
            depth -= 1
        elif depth:
            inside.append(line)
    stray = [line[1:] for line in diff if line.startswith("+") and not (
        line[1:].lstrip().startswith(("//", "#")) or line[1:] in inside or line[1:].startswith("ablation("))]
    assert not stray, stray


def test_catalog_lists_every_switch_and_the_block_it_needs():
    spec = GEMM_KERNELS["a1"]
    assert tuple(spec.switches) == ABLATION_SWITCHES + SKIP_SWITCHES
    assert set(ABLATED) | {"FRESH_ACC"} == set(SWITCHES)
    text = source.kernel_text("a1")
    for name in SWITCHES:
        assert f"#ifndef {name}\n#define {name} 0\n#endif" in text and f"#if {name}" in text, name
    small = spec.with_switches("SMALL_WARP_TILE")
    assert small.block == (512, 1, 1) and small.threads == 512 and small.defines[-1] == ("SMALL_WARP_TILE", 1)
    assert small.with_switches("NO_XOR").block == (256, 1, 1) == spec.with_switches("NO_XOR").block
    assert configured("a1", "sm_90").with_switches("SMALL_WARP_TILE").variant == "BK=64, 4 stages, SMALL_WARP_TILE"
    with pytest.raises(ValueError, match="no switch 'NO_SUCH'"):
        spec.with_switches("NO_SUCH")


@pytest.mark.parametrize("arch", [None, *TARGET_ARCHS])
def test_the_bank_model_predicts_no_xor_conflicts(arch):
    """Without the XOR, the 8 rows of an ldmatrix phase share one 16-byte column: a 128-byte row (BK = 64)
    puts all 8 in the same banks (8 wavefronts instead of 1), a 64-byte row (BK = 32) pairs them (4)."""
    on, off = (predict("a1", 4096, 4096, 4096, arch=arch, permuted=p) for p in (True, False))
    ways = 8 if configured("a1", arch).tile_k == 64 else 4
    assert on.ldsm.conflicts == 0 and on.ldsm == predict("k4.4", 4096, 4096, 4096, arch=arch).ldsm
    assert off.ldsm.requests == on.ldsm.requests and off.ldsm.wavefronts == ways * on.ldsm.wavefronts
    assert off.st == on.st    # the 16-byte copies of consecutive chunks are conflict-free either way


# ---- SASS: each switch changes what it says it changes, on every target -------------------------

@lru_cache(maxsize=None)
def sass(arch: str, switch: str | None) -> str:
    from tcgemm.engine.gpu.sass import sass_tools_missing
    from tcgemm.engine.gpu.nvrtc_offline import compile_cubin, cuobjdump_sass

    missing = sass_tools_missing()
    if missing:
        pytest.skip(missing)
    spec = configured("a1", arch)
    spec = spec.with_switches(switch) if switch else spec
    return cuobjdump_sass(compile_cubin(spec.source, arch, spec.defines))


def opcodes(listing: str) -> Counter:
    return Counter(re.findall(r"\b(?:LDGSTS|LDGDEPBAR|LDG|STS|STG|LDSM|HMMA|FADD|MUFU|I2F)(?:\.[\w.]+)?(?=[ ;])",
                              listing))


def main_loop(listing: str) -> list[str]:
    return [i.opcode for i in sass_loop.hot_loop(listing, GEMM_KERNELS["a1"].entry, "HMMA")]


def count(ops, prefix: str) -> int:
    return sum(n for op, n in (ops.items() if isinstance(ops, Counter) else Counter(ops).items())
               if op == prefix or op.startswith(prefix + "."))


def _no_xor(on, off, arch):
    """The same ldmatrix, at other addresses (bank conflicts are a runtime matter: see the model)."""
    assert count(off, "LDSM") == count(on, "LDSM") > 0 and sass(arch, "NO_XOR") != sass(arch, None)


def _copy_4b(on, off, arch):
    assert on["LDGSTS.E.BYPASS.LTC128B.128"] > 0
    assert set(op for op in off if op.startswith("LDGSTS")) == {"LDGSTS.E.LTC128B"}   # 4 bytes, through L1
    per_loop = lambda s: main_loop(sass(arch, s)).count
    assert per_loop("COPY_4B")("LDGSTS.E.LTC128B") == 4 * per_loop(None)("LDGSTS.E.BYPASS.LTC128B.128")


def _no_cp_async(on, off, arch):
    assert count(off, "LDGSTS") == count(off, "LDGDEPBAR") == 0
    assert off["LDG.E.128"] > 0 and off["STS.128"] > 0 and count(on, "STS") == 0


def _no_reg_db(on, off, arch):
    """4.4's main loop opens with mma on fragments loaded the iteration before; without the double
    buffer it waits at the barrier and loads the slice's fragments first."""
    def before_first_mma(listing):
        loop = main_loop(listing)
        head = loop[:next(i for i, op in enumerate(loop) if op.startswith("HMMA"))]
        return sum(op.startswith("LDSM") for op in head), sum(op.startswith("BAR") for op in head)
    assert before_first_mma(sass(arch, None)) == (0, 0)
    loads, barriers = before_first_mma(sass(arch, "NO_REG_DB"))
    assert loads >= 1 and barriers == 1


def _no_l2_order(on, off, arch):
    """The grouped order divides the launch index (an integer division: I2F.RP + MUFU.RCP); plain order
    divides nothing."""
    assert on["MUFU.RCP"] > 0 and on["I2F.RP"] > 0 and count(off, "MUFU") == count(off, "I2F") == 0


def _no_vec_store(on, off, arch):
    assert on["STG.E.64"] > 0 and "STG.E" not in on
    assert off["STG.E"] == 2 * on["STG.E.64"] and "STG.E.64" not in off


def _small_warp_tile(on, off, arch):
    """Half the mma per warp and main-loop iteration (a 64 x 32 tile), 6 ldmatrix per slice instead of 8."""
    loop_on, loop_off = main_loop(sass(arch, None)), main_loop(sass(arch, "SMALL_WARP_TILE"))
    assert 2 * count(loop_off, "HMMA") == count(loop_on, "HMMA") > 0
    assert 8 * count(loop_off, "LDSM") == 6 * count(loop_on, "LDSM")


def _fresh_acc(on, off, arch):
    """Every mma accumulates into zero and four FADD add its result outside it."""
    loop_on, loop_off = main_loop(sass(arch, None)), main_loop(sass(arch, "FRESH_ACC"))
    assert count(loop_on, "FADD") == 0 and count(loop_off, "FADD") == 4 * count(loop_off, "HMMA") > 0


SASS_CHANGES = {"NO_XOR": _no_xor, "COPY_4B": _copy_4b, "NO_CP_ASYNC": _no_cp_async, "NO_REG_DB": _no_reg_db,
                "NO_L2_ORDER": _no_l2_order, "NO_VEC_STORE": _no_vec_store, "SMALL_WARP_TILE": _small_warp_tile,
                "FRESH_ACC": _fresh_acc}


def test_every_switch_has_a_sass_check():
    assert set(SASS_CHANGES) == set(SWITCHES)


@pytest.mark.slow     # compiles every switch for every architecture
@pytest.mark.parametrize("switch", SWITCHES)
@pytest.mark.parametrize("arch", TARGET_ARCHS)
def test_each_switch_shows_in_the_sass(arch, switch):
    on, off = opcodes(sass(arch, None)), opcodes(sass(arch, switch))
    assert on["HMMA.16816.F32"] > 0 and off["HMMA.16816.F32"] > 0
    SASS_CHANGES[switch](on, off, arch)


# ---- the ranking -------------------------------------------------------------------------------------

def measured(times_us, switches=(None, *ABLATED), passed=True, size=(4096, 4096, 4096)):
    return [Measurement(s, *size, passed, "PASS" if passed else "FAIL", summarize([t * 1e-6]), 200, 0)
            for s, t in zip(switches, times_us)]


def test_ranked_puts_the_costliest_step_first():
    times = [300, 310, 450, 330, 300, 390, 305, 360]          # all on, then ABLATED in its order
    rows = ranked(measured(times))
    assert [r.step.switch for r in rows] == ["COPY_4B", "NO_REG_DB", "NO_VEC_STORE", "NO_CP_ASYNC",
                                             "NO_XOR", "NO_L2_ORDER", "SMALL_WARP_TILE"]
    assert [r.rank for r in rows] == list(range(1, 8))
    assert rows[0].slowdown == pytest.approx(1.5) and rows[-1].slowdown == pytest.approx(1.0)


def test_a_step_alone_can_be_ranked_and_a_speedup_is_kept():
    rows = ranked(measured([300, 270], switches=(None, "NO_XOR")))
    assert len(rows) == 1 and rows[0].slowdown == pytest.approx(0.9)


@pytest.mark.parametrize("measurements, message", [
    (measured([300, 310], passed=False), "failed their check cannot be ranked: none: Kernel 4.4, NO_XOR"),
    (measured([310], switches=("NO_XOR",)), "no measurement with every step on"),
    (measured([300, 310, 320], switches=(None, "NO_XOR", "NO_XOR")), "several of NO_XOR"),
    (measured([300, 310], switches=(None, "FRESH_ACC")), "unknown switch 'FRESH_ACC'"),
    (measured([300])[:1] + measured([310], switches=("NO_XOR",), size=(4096, 4096, 2048)), "different sizes"),
])
def test_what_cannot_be_ranked_is_refused(measurements, message):
    with pytest.raises(ValueError, match=message):
        ranked(measurements)


def test_table_and_figure():
    ms = measured([300, 310, 450, 330, 300, 390, 305, 360])
    table = ablation_table(ms, "NVIDIA H100 80GB HBM3")
    assert table.caption == "NVIDIA H100 80GB HBM3, Ablation: Kernel 4.4 with each step a switch, C = A @ B at 4096³"
    assert table.column("Rank") == ["", *range(1, 8)]
    assert table.column("Switch")[:3] == ["", "COPY_4B", "NO_REG_DB"]
    assert table.column("µs")[:2] == pytest.approx([300, 450])
    assert table.column("Time / all on")[1] == pytest.approx(1.5)
    fig = ablation_figure(ms)
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == "16-byte copies\n(COPY_4B)" and len(labels) == 7
    widths = [bar.get_width() for bar in ax.patches]
    assert widths[0] == pytest.approx(0.5) and min(widths) == pytest.approx(0.0)   # bars start at 1x
    assert ablation.size_text(ms[0]) == "4096³"


def test_switches_table_lists_every_switch_with_its_step():
    table = switches_table()
    assert table.column("Switch") == SWITCHES
    assert table.column("Step it undoes")[SWITCHES.index("NO_XOR")] == "XOR-permuted shared-memory tiles"
    assert table.column("Introduced in")[SWITCHES.index("FRESH_ACC")] == ""
    assert table.caption == "Ablation: Kernel 4.4 with each step a switch: kernels/a1_ablation.cu"


def test_knockout_table_splits_the_time_as_the_fit_does():
    from tcgemm.pipelines.ablation import knockout_table
    from tcgemm.pipelines.scaling import fit_k_scaling
    Ks = (2048, 4096, 8192, 16384)
    written = [10e-6 + k * 40e-9 for k in Ks]             # 10 us outside the loop, 40 ns per unit of K
    skipped = [30e-6 + k * 30e-9 for k in Ks]
    scaling = {"as written": (written, fit_k_scaling(4096, 4096, Ks, written)),
               "SKIP_COPIES": (skipped, fit_k_scaling(4096, 4096, Ks, skipped))}
    table = knockout_table("Kernel 4.4", scaling, Ks)
    assert table.column("Kernel 4.4") == ["as written", "SKIP_COPIES"]
    assert table.column("Outside the loop (µs)") == pytest.approx([10, 30])
    assert table.column("% of the time at K = 4096")[0] == pytest.approx(100 * 10 / (10 + 40 * 4.096))
    assert table.column("Main loop TFLOP/s")[1] == pytest.approx(2 * 4096 * 4096 / 30e-9 / 1e12)
    assert table.column("µs at K = 2k, 4k, 8k, 16k")[0] == "92, 174, 338, 665"
