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
from tcgemm.catalog import (GEMM_KERNELS, MMA_ORDERS, PROBES, TARGET_ARCHS, WMMA_CASES, WMMA_KERNELS, all_sources,
                            defines_for, sass_claims)
from tcgemm.gpu.nvrtc_offline import cuda_tool

ARCHS = list(TARGET_ARCHS)
SOURCES = all_sources()
CLAIMS = sass_claims()
ENTRIES = {k.source: (k.entry,) for k in GEMM_KERNELS.values()}
ENTRIES.update({p.source: p.entries for p in PROBES.values()})
ENTRIES.update({w.source: (w.entry,) for w in WMMA_KERNELS.values()})
GEMM_SOURCES = [k.source for k in GEMM_KERNELS.values()] + [w.source for w in WMMA_KERNELS.values()]

LOCAL_MEMORY = re.compile(r"\b(LDL|STL)\b")
FUNCTION = re.compile(r"Function : (\S+)")


def _require(name: str) -> str:
    path = cuda_tool(name)
    if path is None:
        reason = f"{name} not found (pip install -r requirements-test.txt, or a CUDA toolkit on PATH)"
        if os.environ.get("TCGEMM_REQUIRE_NVCC") == "1":
            pytest.fail(reason + "; TCGEMM_REQUIRE_NVCC=1 makes this a failure")
        pytest.skip(reason)
    return path


def _compile_all(out_dir, jobs) -> list[str]:
    """cuobjdump -sass listings of (source, arch, defines) jobs, compiled in parallel."""
    nvcc = _require("nvcc")
    cuobjdump = _require("cuobjdump")

    def build(job) -> str:
        source, arch, defines = job
        flags = [f"-D{name}={value}" for name, value in defines]
        cubin = out_dir / f"{source}.{arch}{''.join(flags)}.cubin"
        cmd = [nvcc, "-cubin", f"-arch={arch}", "-I", str(KERNEL_DIR), "-o", str(cubin), *flags,
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
    jobs = [(s, a) for s in SOURCES for a in ARCHS]
    return dict(zip(jobs, _compile_all(tmp_path_factory.mktemp("cubins"),
                                       [(s, a, defines_for(s, a)) for s, a in jobs])))


@pytest.fixture(scope="module")
def wmma_sass(tmp_path_factory) -> dict[tuple[str, str, str], str]:
    """(WMMA key, case, arch) -> SASS of the WMMA kernel compiled for that case's memory orders."""
    jobs = [(w, case, a) for w in WMMA_KERNELS for case in WMMA_CASES for a in ARCHS]
    return dict(zip(jobs, _compile_all(tmp_path_factory.mktemp("wmma_cubins"), [
        (WMMA_KERNELS[w].source, a, WMMA_KERNELS[w].defines(*WMMA_CASES[case])) for w, case, a in jobs])))


def _mnemonics(listing: str) -> list[str]:
    return sorted(set(re.findall(r"\b(?:HMMA|IMMA|LDSM)\S*", listing)))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("source", SOURCES)
def test_claimed_instructions_present(sass, source, arch):
    listing = sass[source, arch]
    missing = [s for s in CLAIMS[source] if s not in listing]
    assert not missing, (
        f"{source} on {arch}: the catalog claims {missing} but the SASS has only "
        f"{_mnemonics(listing)}"
    )


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("source", SOURCES)
def test_every_entry_compiled(sass, source, arch):
    functions = set(FUNCTION.findall(sass[source, arch]))
    assert set(ENTRIES[source]) <= functions, f"{source} on {arch}: SASS has functions {functions}"


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("source", GEMM_SOURCES)
def test_gemm_kernels_use_no_local_memory(sass, source, arch):
    hits = [line.strip() for line in sass[source, arch].splitlines() if LOCAL_MEMORY.search(line)]
    assert not hits, f"{source} on {arch} spills to local memory:\n" + "\n".join(hits[:10])


@pytest.mark.parametrize("arch", ARCHS)
def test_claims_can_fail(sass, arch):
    """Every claimed string is absent from some other kernel, so finding it means something
    (e.g. 'LDSM.16.M88 ' with its space matches .x1 only, not .x2 or .x4)."""
    for source, claims in CLAIMS.items():
        for claim in claims:
            absent_in = [s for s in SOURCES if claim not in sass[s, arch]]
            assert absent_in, f"{claim!r} (claimed for {source}) occurs in every kernel on {arch}"
    assert "LDSM.16.M88 " not in sass["hgemm_ldmatrix_hgemm_f16.cu", arch]


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


def main_loop(sass, key: str, arch: str):
    """The opcodes of a GEMM kernel's main loop (the backward-branch loop with the most HMMA), in order."""
    from tcgemm import sass_loop

    spec = GEMM_KERNELS[key]
    return [i.opcode for i in sass_loop.hot_loop(sass[spec.source, arch], spec.entry, "HMMA")]


@pytest.mark.parametrize("arch", ARCHS)
def test_kernel_3_2_compiles_to_kernel_3_1s_main_loop(sass, arch):
    """3.2 loads the fragments one k16 slice at a time in the source; ptxas schedules the SASS itself and
    emits 3.1's main loop, opcode for opcode (only which accumulator each HMMA updates differs)."""
    assert main_loop(sass, "k3.1", arch) == main_loop(sass, "k3.2", arch)


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
    from tcgemm.catalog import configured
    from tcgemm.plan import tile_named
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
