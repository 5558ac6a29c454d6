"""The SASS the book claims: compile every kernel with nvcc for every target architecture and look
for the instructions the catalog lists (and for local memory, which no GEMM kernel may touch).

Needs nvcc and cuobjdump (the pip packages of requirements-test.txt, or a CUDA toolkit on PATH),
no GPU. Without them the tests skip, unless TCGEMM_REQUIRE_NVCC=1, when they fail.
"""
from __future__ import annotations

import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from tcgemm import KERNEL_DIR
from tcgemm.engine.catalog import (ELEMENTS, GEMM_KERNELS, PROBES, TARGET_ARCHS, WMMA_CASES, WMMA_KERNELS, all_sources,
                                   build_target, configured, defines_for, sass_claims, source_archs)
from tcgemm.engine.kernel_types import MMA_ORDERS
from tcgemm.engine.plan import TILES
from tcgemm.engine.sass_loop import function_listing, instructions
from required import require_cuda_tool

ARCHS = list(TARGET_ARCHS)
SOURCES = all_sources()
CLAIMS = sass_claims()
ENTRIES = {k.source: (k.entry,) for k in GEMM_KERNELS.values()}
ENTRIES.update({p.source: p.entries for p in PROBES.values()})
ENTRIES.update({w.source: (w.entry,) for w in WMMA_KERNELS.values()})
GEMM_SOURCES = [k.source for k in GEMM_KERNELS.values()] + [w.source for w in WMMA_KERNELS.values()]
BUILDS = [(s, a) for s in SOURCES for a in source_archs(s)]     # Kernel 5.0 (TMA) compiles for sm_90 only
GEMM_BUILDS = [(s, a) for s, a in BUILDS if s in GEMM_SOURCES]

LOCAL_MEMORY = re.compile(r"\b(LDL|STL)\b")
FUNCTION = re.compile(r"Function : (\S+)")

# nvcc compiles every kernel for every architecture here, minutes on two cores: `make test-fast` leaves it out.
pytestmark = pytest.mark.slow


def _compile_all(out_dir, jobs) -> list[str]:
    """cuobjdump -sass listings of (source, arch, defines) jobs, compiled in parallel."""
    nvcc = require_cuda_tool("nvcc")
    cuobjdump = require_cuda_tool("cuobjdump")

    def build(job) -> str:
        source, arch, defines = job
        flags = [f"-D{name}={value}" for name, value in defines]
        cubin = out_dir / f"{source}.{arch}{''.join(flags)}.cubin"
        # Kernels 5.1-5.5 build for sm_90a, which nvcc 13.0 takes in the -gencode form (its -arch=sm_90a
        # also runs a plain sm_90 pass, which rejects wgmma).
        built = build_target(source, arch)
        target = f"-gencode=arch=compute_{built[3:]},code={built}" if built != arch else f"-arch={arch}"
        cmd = [nvcc, "-cubin", target, "-I", str(KERNEL_DIR), "-o", str(cubin), *flags,
               str(KERNEL_DIR / source)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise AssertionError(f"nvcc failed on {source} {flags} for {arch}:\n{done.stderr}")
        return subprocess.run([cuobjdump, "-sass", str(cubin)], check=True, capture_output=True,
                              text=True).stdout

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        return list(pool.map(build, jobs))


@pytest.fixture(scope="module")
def sass(tmp_path_factory) -> dict[tuple[str, str], str]:
    """(source, arch) -> cuobjdump -sass listing, each compiled once as its launcher compiles it."""
    return dict(zip(BUILDS, _compile_all(tmp_path_factory.mktemp("cubins"),
                                         [(s, a, defines_for(s, a)) for s, a in BUILDS])))


@pytest.fixture(scope="module")
def wmma_sass(tmp_path_factory) -> dict[tuple[str, str, str], str]:
    """(WMMA key, case, arch) -> SASS of the WMMA kernel compiled for that case's memory orders."""
    jobs = [(w, case, a) for w in WMMA_KERNELS for case in WMMA_CASES for a in ARCHS]
    return dict(zip(jobs, _compile_all(tmp_path_factory.mktemp("wmma_cubins"), [
        (WMMA_KERNELS[w].source, a, WMMA_KERNELS[w].defines(*WMMA_CASES[case])) for w, case, a in jobs])))


def _mnemonics(listing: str) -> list[str]:
    return sorted(set(re.findall(r"\b(?:HMMA|IMMA|LDSM)\S*", listing)))


@pytest.mark.parametrize("source, arch", BUILDS)
def test_claimed_instructions_present(sass, source, arch):
    listing = sass[source, arch]
    missing = [s for s in CLAIMS[source] if s not in listing]
    assert not missing, (
        f"{source} on {arch}: the catalog claims {missing} but the SASS has only "
        f"{_mnemonics(listing)}"
    )


@pytest.mark.parametrize("source, arch", BUILDS)
def test_every_entry_compiled(sass, source, arch):
    functions = set(FUNCTION.findall(sass[source, arch]))
    assert set(ENTRIES[source]) <= functions, f"{source} on {arch}: SASS has functions {functions}"


def test_kernel_5_7_in_mma_orders_is_kernel_5_6(sass):
    """Kernel 5.7 built for K-major A and B (its default, the orders the bench times) is Kernel 5.6's
    machine code, instruction for instruction: the two differ in a bench run only by the run."""
    k56, k57 = GEMM_KERNELS["k5.6"], GEMM_KERNELS["k5.7"]
    code = [[i.text for i in instructions(function_listing(sass[k.source, "sm_90"], k.entry))] for k in (k56, k57)]
    assert len(code[0]) > 1000 and code[0] == code[1]


@pytest.mark.parametrize("source, arch", GEMM_BUILDS)
def test_gemm_kernels_use_no_local_memory(sass, source, arch):
    hits = [line.strip() for line in sass[source, arch].splitlines() if LOCAL_MEMORY.search(line)]
    assert not hits, f"{source} on {arch} spills to local memory:\n" + "\n".join(hits[:10])


@pytest.mark.parametrize("arch", ARCHS)
def test_claims_can_fail(sass, arch):
    """Every claimed string is absent from some other kernel, so finding it means something
    (e.g. 'LDSM.16.M88 ' with its space matches .x1 only, not .x2 or .x4)."""
    for source, claims in CLAIMS.items():
        for claim in claims:
            absent_in = [s for s in SOURCES if (s, arch) in sass and claim not in sass[s, arch]]
            assert absent_in, f"{claim!r} (claimed for {source}) occurs in every kernel on {arch}"
    assert "LDSM.16.M88 " not in sass["h1_ldmatrix_hgemm_f16.cu", arch]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("ldsm", ["LDSM.16.M88.4", "LDSM.16.M88.2"])
def test_kernel_2_1_loads_each_fragment_once(sass, arch, ldsm):
    """Kernel 2.0 reloads both fragments (A by .x4, B by .x2) for every mma; 2.1 loads each once.
    ptxas for sm_90 removes 2.0's repeated ldmatrix of A and of B by itself, so there the two
    kernels issue the same number of each (the README explains why they tie on an H100); before
    Hopper 2.0 keeps twice as many of each."""
    count = lambda source: sass[(source, arch)].count(ldsm)
    k20, k21 = count(GEMM_KERNELS["k2.0"].source), count(GEMM_KERNELS["k2.1"].source)
    assert k21 > 0
    assert k20 == (k21 if arch == "sm_90" else 2 * k21), (arch, ldsm, k20, k21)


def main_loop_instructions(sass, key: str, arch: str):
    """A GEMM kernel's main loop (the backward-branch loop with the most HMMA), in order."""
    from tcgemm.engine import sass_loop

    spec = GEMM_KERNELS[key]
    return sass_loop.hot_loop(sass[spec.source, arch], spec.entry, "HMMA")


def main_loop(sass, key: str, arch: str):
    """The opcodes of a GEMM kernel's main loop, in order."""
    return [i.opcode for i in main_loop_instructions(sass, key, arch)]


@pytest.mark.parametrize("arch", ARCHS)
def test_kernel_3_1_addresses_its_fragments_by_xor(sass, arch):
    """3.1 computes each lane's ldmatrix row once and reaches tiles by an offset, slices by an XOR; 3.2,
    which sets that aside, evaluates permuted_chunk per ldmatrix: at least twice the integer instructions
    per K tile, for the same HMMA, LDSM and LDGSTS."""
    from tcgemm.engine import sass_loop
    from tcgemm.engine.gpu.sass import MAIN_LOOP_GROUPS

    k31, k32 = (sass_loop.tally(main_loop_instructions(sass, key, arch), MAIN_LOOP_GROUPS) for key in ("k3.1", "k3.2"))
    assert [k31[g] for g in ("HMMA", "LDSM", "LDGSTS")] == [k32[g] for g in ("HMMA", "LDSM", "LDGSTS")] == [32, 16, 4]
    assert 2 * k31["integer"] <= k32["integer"], (k31, k32)


@pytest.mark.parametrize("arch", ARCHS)
def test_kernel_3_3_loads_b_fragments_in_pairs(sass, arch):
    """Per K tile (2 slices) 3.2 issues 8 ldmatrix.x4 (A) and 8 .x2 (B); 3.3 loads B two n-tiles per .x4."""
    count = lambda key: [main_loop(sass, key, arch).count(op) for op in ("LDSM.16.M88.4", "LDSM.16.M88.2")]
    assert count("k3.2") == [8, 8] and count("k3.3") == [12, 0]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("key", ["k1.0", "k1.1"])
def test_naive_kernels_read_half_pairs_with_32_bit_loads(sass, key, arch):
    """tcgemm.smem.kernel_smem, for a target arch, counts each pack_half2 pair of halves as one 32-bit
    LDS: no 16-bit shared loads, and per K step of the main loop (which ptxas unrolls; two barriers
    per step) as many LDS as it counts per warp and step."""
    from tcgemm.smem.kernel_smem import block_step

    loads = re.findall(r"\bLDS(?:\.[\w.]+)?(?=\s)", sass[GEMM_KERNELS[key].source, arch])
    modelled = [i for i in block_step(key, arch=arch) if i.op == "ld" and i.warp == 0]
    assert set(loads) == {"LDS"}, (key, arch, sorted(set(loads)))
    body = main_loop(sass, key, arch)
    steps = sum(op.startswith("BAR.SYNC") for op in body) // 2
    per_step = sum(op.startswith("LDS") for op in body) / steps
    assert per_step == len(modelled), (key, arch, per_step, len(modelled))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", list(WMMA_CASES))
@pytest.mark.parametrize("key", list(WMMA_KERNELS))
def test_wmma_case_compiles_to_its_claims(wmma_sass, key, case, arch):
    """Every case of every WMMA kernel has the claimed Tensor Core instruction; the cases whose A or B
    is not in mma.sync's own orders (A row-major, B column-major) also repack the loaded values (fp16:
    MOVM, a register transpose; int8: byte loads and PRMT), and mma's own case does not; none spills."""
    spec, orders = WMMA_KERNELS[key], WMMA_CASES[case]
    listing = wmma_sass[key, case, arch]
    missing = [s for s in spec.claims(*orders) if s not in listing]
    assert not missing, f"{key} {case} on {arch}: claims {missing} but the SASS has {_mnemonics(listing)}"
    if orders == MMA_ORDERS:
        present = [s for s in spec.repack_sass if s in listing]
        assert not present, f"{key} {case} on {arch}: mma's own orders, yet {present} in the SASS"
    assert not LOCAL_MEMORY.search(listing), f"{key} {case} on {arch} spills to local memory"


@pytest.fixture(scope="module")
def order_sass(tmp_path_factory) -> dict[tuple[str, str, str], str]:
    """(tile, case, arch) -> SASS of Kernel 4.7 compiled for that case's memory orders of A and B: the
    configured tile on every target, and the smallest tile (16 x 64: the narrowest MN-major rows) on sm_90."""
    from tcgemm.engine.catalog import configured
    from tcgemm.engine.plan import tile_named
    jobs = [("configured", case, a) for case in WMMA_CASES for a in ARCHS] + \
           [("16x64", case, "sm_90") for case in WMMA_CASES]

    def spec(tile, case, arch):
        base = configured("k4.7", arch) if tile == "configured" else GEMM_KERNELS["k4.7"].with_tile(tile_named(tile))
        return base.with_orders(*WMMA_CASES[case])
    return dict(zip(jobs, _compile_all(tmp_path_factory.mktemp("order_cubins"), [
        (spec(*job).source, job[2], spec(*job).defines) for job in jobs])))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", list(WMMA_CASES))
def test_kernel_4_7_reads_each_order_with_its_ldmatrix(order_sass, case, arch):
    """A K-major operand (A row-major, B column-major) is read with LDSM.16.M88.4, an MN-major one with
    LDSM.16.MT88.4 (ldmatrix.trans), and only then; every case keeps HMMA.16816.F32 and spills nothing."""
    a_order, b_order = WMMA_CASES[case]
    for tile in ("configured", "16x64"):
        listing = order_sass.get((tile, case, arch))
        if listing is None:
            continue
        trans = a_order == "F" or b_order == "C"
        plain = a_order == "C" or b_order == "F"
        assert "HMMA.16816.F32" in listing, (tile, case, arch)
        assert ("LDSM.16.MT88.4" in listing) == trans, (tile, case, arch, _mnemonics(listing))
        assert ("LDSM.16.M88.4" in listing) == plain, (tile, case, arch, _mnemonics(listing))
        assert not LOCAL_MEMORY.search(listing), f"Kernel 4.7 {case} {tile} on {arch} spills to local memory"


def test_kernel_5_0_copies_by_tma_only(sass):
    """Kernel 5.0 on sm_90: its tiles come by TMA, two UTMALDG (A and B) per K tile in the main loop, which
    waits on mbarriers (SYNCS) and releases its stages on them, with no block barrier (BAR) left, and
    issues Kernel 4.4's HMMA; no cp.async (LDGSTS), no global load left."""
    listing = sass[GEMM_KERNELS["k5.0"].source, "sm_90"]
    assert "LDGSTS" not in listing and not re.search(r"\bLDG\b", listing), _mnemonics(listing)
    loop = main_loop(sass, "k5.0", "sm_90")
    hmma = lambda ops: sum(op.startswith("HMMA") for op in ops)
    assert hmma(loop) == hmma(main_loop(sass, "k4.4", "sm_90")) > 0
    assert sum(op.startswith("UTMALDG") for op in loop) == 2
    assert any(op.startswith("SYNCS.PHASECHK") for op in loop), loop
    assert not any(op.startswith("BAR") for op in loop), loop


# Kernel D1 for each input type on each target whose mma.sync takes it: the type's Tensor Core instruction
# (sm_90 has no fp8 mma.sync instruction: ptxas converts the values to fp16, F2FP, and runs HMMA.16816.F32;
# book/data_types.ipynb), and Kernel 4.6's copies, ldmatrix and paired stores. "HMMA.16816.F32 " with its
# space is fp16's instruction, not bf16's HMMA.16816.F32.BF16.
D1_MMA = {"fp16": ("HMMA.16816.F32 ",), "bf16": ("HMMA.16816.F32.BF16",), "tf32": ("HMMA.1688.F32.TF32",),
          "int8": ("IMMA.16832.S8.S8",)}
D1_BUILDS = [(name, arch) for name, e in ELEMENTS.items() for arch in e.archs]


def d1_mma(name: str, arch: str) -> tuple[str, ...]:
    if name in D1_MMA:
        return D1_MMA[name]
    fp8 = name.upper()
    return (f"QMMA.16832.F32.{fp8}.{fp8}",) if arch == "sm_89" else (f"F2FP.F16.{fp8}.UNPACK_B", "HMMA.16816.F32 ")


def d1_build(name: str, arch: str):
    """Kernel D1 for input type `name` as its launcher builds it for a large product on `arch`: the configured
    tile, or where the type keeps to smaller warp tiles there (fp8 on sm_90), the largest plan tile that does."""
    spec = configured("d1", arch).with_element(name)
    limit = ELEMENTS[name].max_warp_tile(arch)
    if limit is None:
        return spec
    return spec.with_tile(max((t for t in TILES if t.warp_tile <= limit), key=lambda t: t.bm * t.bn))


@pytest.fixture(scope="module")
def element_sass(tmp_path_factory) -> dict[tuple[str, str], str]:
    """(input type, arch) -> SASS of Kernel D1 for that type (d1_build); ("e4m3", "sm_90 configured"): the
    configured 128 x 256 tile, whose 64 x 64 warp tiles the fp8 limit rules out on sm_90."""
    jobs = [(name, arch, d1_build(name, arch)) for name, arch in D1_BUILDS]
    jobs.append(("e4m3", "sm_90 configured", configured("d1", "sm_90").with_element("e4m3")))
    listings = _compile_all(tmp_path_factory.mktemp("d1_cubins"),
                            [(s.source, arch.split()[0], s.defines) for _, arch, s in jobs])
    return {(name, arch): listing for (name, arch, _), listing in zip(jobs, listings)}


@pytest.mark.parametrize("name, arch", D1_BUILDS)
def test_kernel_d1_compiles_each_type_to_its_mma(element_sass, name, arch):
    listing = element_sass[name, arch]
    claims = d1_mma(name, arch) + ("LDSM.16.M88.4", "LDGSTS.E.BYPASS", "STG.E.64")
    missing = [c for c in claims if c not in listing]
    assert not missing, f"Kernel D1 ({name}) on {arch}: no {missing}; has {_mnemonics(listing)}"
    others = [c for other, mma in D1_MMA.items() if other != name for c in mma if c not in claims and c in listing]
    assert not others, f"Kernel D1 ({name}) on {arch} has another type's mma: {others}"
    assert not LOCAL_MEMORY.search(listing), f"Kernel D1 ({name}) on {arch} spills to local memory"


def _instructions(listing: str) -> dict[str, list[str]]:
    """Per function of a SASS listing (its name), its instructions without addresses and encodings."""
    out, name = {}, None
    for line in listing.splitlines():
        if found := FUNCTION.search(line):
            name = found.group(1)
            out[name] = []
        elif name and (m := re.match(r"\s+/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)):
            out[name].append(m.group(1))
    return out


def test_fp8_on_sm_90_keeps_to_warp_tiles_that_do_not_spill(element_sass):
    """The reason for FP8_WARP_TILE_LIMITS: ptxas's fp8 emulation on sm_90 spills Kernel D1's 64 x 64 warp
    tiles to local memory; the 32 x 32 ones the launcher keeps to there do not spill (the test above)."""
    assert LOCAL_MEMORY.search(element_sass["e4m3", "sm_90 configured"])
    assert ELEMENTS["e4m3"].max_warp_tile("sm_90") == 32 * 32 and ELEMENTS["e4m3"].max_warp_tile("sm_89") is None


@pytest.mark.parametrize("arch", ARCHS)
def test_kernel_d1_in_fp16_is_kernel_4_6(sass, arch):
    """The type is the only idea Kernel D1 adds: built for fp16 it is Kernel 4.6, instruction for instruction."""
    d1, k46 = GEMM_KERNELS["d1"], GEMM_KERNELS["k4.6"]
    ours, theirs = (_instructions(sass[k.source, arch]) for k in (d1, k46))
    assert ours.pop(d1.entry) == theirs.pop(k46.entry) and ours == theirs and len(ours) == 1
