"""wgmma through NVRTC, without a GPU: kernels/probe_wgmma.cu built for sm_90a, the target the book
launches it with (tcgemm.engine.gpu.compile.get_arch_specific_function), holds one HGMMA per entry, and
ptxas takes exactly the shapes tcgemm.hopper.wgmma lists. This toolchain prints wgmma as
HGMMA.64x<N>x16.F32, wgmma.fence as WARPGROUP.ARRIVE, wgmma.wait_group as WARPGROUP.DEPBAR.LE and
fence.proxy.async as FENCE.VIEW.ASYNC.S.

Needs an NVRTC with its headers and cuobjdump (tests/test_nvrtc.py's rules: skipped without them
unless TCGEMM_REQUIRE_NVRTC=1)."""
import re

import pytest

from tcgemm.engine.catalog import PROBES, TRANSPOSE_SASS, WMMA_CASES, build_target, configured
from tcgemm.errors import KernelCompileError
from tcgemm.hopper.wgmma import WGMMA_TYPES
from tcgemm.engine.gpu.compile import arch_specific_target
from tcgemm.engine.gpu.nvrtc_offline import (WHEEL_LAYOUT, compile_cubin, compile_source_text, cuda_tool, cuobjdump_sass,
                                             find_toolkit)
from tcgemm.engine.gpu.sass import WGMMA_OPS, function_ops, wgmma_sass_table
from required import skip_or_fail

SOURCE = PROBES["wgmma"].source


def _tools(major: int = 13):
    kit = find_toolkit(major)
    missing = "an NVRTC with its headers" if kit is None else "cuobjdump" if cuda_tool("cuobjdump") is None else None
    if missing:
        skip_or_fail("TCGEMM_REQUIRE_NVRTC", f"no {missing} for CUDA {major}")
    return kit


@pytest.mark.parametrize("major", sorted(WHEEL_LAYOUT, reverse=True))
def test_probe_holds_one_hgmma_per_entry_on_sm_90a(major):
    kit = _tools(major)
    ops = function_ops(cuobjdump_sass(compile_cubin(SOURCE, arch_specific_target("sm_90"), (), kit)), WGMMA_OPS)
    assert set(ops) == set(PROBES["wgmma"].entries)
    for entry in PROBES["wgmma"].entries:
        found = ops[entry]
        n = int(re.search(r"m64n(\d+)k16", entry).group(1))     # probe_wgmma_m64n<N>k16[_a_mn|_b_mn]
        print(f"NVRTC {major}, {entry} on sm_90a: {dict(found)}")
        assert found[f"HGMMA.64x{n}x16.F32"] == 1, found
        assert {"WARPGROUP.ARRIVE", "WARPGROUP.DEPBAR.LE", "FENCE.VIEW.ASYNC.S"} <= set(found), found


def test_probe_reads_the_mn_major_operand_transposed():
    """cuobjdump prints wgmma's transpose immediates as suffixes of the descriptor operand: .tnspA,
    .tnspB (tcgemm.engine.catalog.TRANSPOSE_SASS), on the MN-major entries only."""
    kit = _tools()
    listing = cuobjdump_sass(compile_cubin(SOURCE, arch_specific_target("sm_90"), (), kit))
    hgmma = {entry: [line for line in body.splitlines() if "HGMMA" in line]
             for entry, body in _functions(listing).items()}
    for entry, lines in hgmma.items():
        operand = {"_a_mn": "A", "_b_mn": "B"}.get(entry[-5:], "")
        assert len(lines) == 1, (entry, lines)
        for op, suffix in TRANSPOSE_SASS.items():
            assert (suffix in lines[0]) == (op == operand), (entry, lines[0])


def _functions(listing: str) -> dict[str, str]:
    """cuobjdump -sass listing -> {function name: its text}."""
    parts = re.split(r"\s+Function : (\S+)", listing)
    return dict(zip(parts[1::2], parts[2::2]))


@pytest.mark.slow     # compiles Kernels 5.7 and 5.8 in every memory order
@pytest.mark.parametrize("key", ["k5.7", "k5.8"])
@pytest.mark.parametrize("case", list(WMMA_CASES))
def test_hopper_kernels_read_each_mn_major_operand_transposed(key, case):
    """Kernels 5.7 and 5.8 compiled for each memory-order case: their HGMMA (5.7: 64x256x16, 5.8:
    64x128x16) reads A with .tnspA when A is column-major and B with .tnspB when B is row-major, and only
    then; an MN-major operand is copied in boxes of 64 (two for A's 128 rows; for the block's half of B's
    columns, multicast, two in 5.7 and one in 5.8) instead of one box; nothing spills."""
    kit = _tools()
    spec = configured(key, "sm_90").with_orders(*WMMA_CASES[case])
    listing = cuobjdump_sass(compile_cubin(spec.source, build_target(spec.source, "sm_90"), spec.defines, kit))
    shape = next(s for s in spec.sass if s.startswith("HGMMA."))
    hgmma = [line for line in listing.splitlines() if shape in line]
    assert hgmma and all(s in listing for s in spec.sass), (case, spec.sass)
    for op, suffix in TRANSPOSE_SASS.items():
        assert all((suffix in line) == spec.mn_major(op) for line in hgmma), (case, op, hgmma)
    copies = listing.count("UTMALDG.2D ") + listing.count("UTMALDG.2D.MULTICAST ")
    boxes = lambda op, tile: tile // 64 if spec.mn_major(op) else 1
    assert copies >= boxes("A", spec.tile_m) + boxes("B", spec.tile_n // spec.cluster), (case, copies)
    assert not re.search(r"\b(LDL|STL)\b", listing), f"{spec.title} {case} spills to local memory"


def test_sass_table_names_each_entrys_instructions_per_target():
    _tools()
    table = wgmma_sass_table()
    assert [c.name for c in table.columns] == ["Entry", "sm_90", "sm_90a"]
    assert table.rows[1] == ("probe_wgmma_m64n16k16", "none",
                             "FENCE.VIEW.ASYNC.S, HGMMA.64x16x16.F32, WARPGROUP.ARRIVE, WARPGROUP.DEPBAR.LE")


def test_probe_is_empty_on_the_other_targets():
    kit = _tools()
    for arch in ("sm_80", "sm_90"):
        listing = cuobjdump_sass(compile_cubin(SOURCE, arch, (), kit))
        assert "HGMMA" not in listing and all(e in listing for e in PROBES["wgmma"].entries), arch


def _wgmma_kernel(ab_type: str, n: int) -> str:
    """One wgmma of `ab_type` with N = n, operands from shared-memory descriptors, 32-bit accumulators."""
    k, acc = WGMMA_TYPES[ab_type].k, WGMMA_TYPES[ab_type].acc_types[0]
    registers = n // 2
    constraint, ctype = ("r", "int") if acc == "s32" else ("f", "float")
    # The transposes exist for 16-bit inputs only; the integer wgmma has no scale immediates.
    tail = {"f16": ", 1, 1, 0, 0", "bf16": ", 1, 1, 0, 0", "s8": "", "u8": ""}.get(ab_type, ", 1, 1")
    outs = ", ".join(f'"+{constraint}"(d[{i}])' for i in range(registers))
    regs = ", ".join(f"%{i}" for i in range(registers))
    return f"""extern "C" __global__ void k({ctype} *out, unsigned long long a, unsigned long long b) {{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    {ctype} d[{registers}] = {{}};
    asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{registers + 2}, 0;\\n"
                 "wgmma.mma_async.sync.aligned.m64n{n}k{k}.{acc}.{ab_type}.{ab_type} "
                 "{{{regs}}}, %{registers}, %{registers + 1}, p{tail};\\n}}\\n"
                 : {outs} : "l"(a), "l"(b), "r"(1));
    for (int i = 0; i < {registers}; ++i) out[i] = d[i];
#endif
}}"""


@pytest.mark.parametrize("ab_type, n, accepted", [
    ("f16", 8, True), ("f16", 256, True), ("f16", 40, True), ("f16", 264, False), ("f16", 12, False),
    ("bf16", 104, True), ("tf32", 40, True), ("e4m3", 40, True), ("e5m2", 256, True),
    ("s8", 24, True), ("s8", 48, True), ("s8", 40, False), ("u8", 256, True)])
def test_ptxas_takes_the_listed_shapes_only(ab_type, n, accepted):
    kit = _tools()
    assert (n in WGMMA_TYPES[ab_type].n_values) == accepted
    try:
        compile_source_text(_wgmma_kernel(ab_type, n), "shape.cu", "sm_90a", (), kit)
        compiled = True
    except KernelCompileError as exc:
        assert "shape" in str(exc) or "modifier" in str(exc), str(exc)   # refused for its shape, not its syntax
        compiled = False
    assert compiled == accepted
