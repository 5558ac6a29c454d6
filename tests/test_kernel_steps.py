"""The kernels as a sequence of steps, read as text (no compiler, no GPU).

Device code that is not a step's idea is copied from kernel to kernel rather than moved into a header,
so that every kernel file compiles alone to the machine code the book measured and consecutive kernels
diff to their idea. The copies are guarded here instead: each shared piece (the GROUP_M tile order,
`tile_origin`, the Hopper `store_tile` epilogue, the mbarrier ring set-up, `permuted_chunk`) is, in every
kernel that has it, the code of the kernel that introduced that version of it, comments aside. And every
step's diff (the lines `tcgemm.engine.source.diff_kernels` adds and removes, as the book's diff cells show them)
is bounded: by ONE_IDEA lines, or by an explicit allowance that names what the step carries.
Kernel A1 is read with its switches off (tests/test_ablation.py keeps it equal to Kernel 4.4 line for line).
"""
from __future__ import annotations

import re

import pytest

from tcgemm import KERNEL_DIR
from tcgemm.engine import source
from tcgemm.engine.catalog import GEMM_KERNELS, WMMA_KERNELS
from test_ablation import SWITCHES, resolve_switches

KERNELS = {**GEMM_KERNELS, **WMMA_KERNELS}
ORDER = list(KERNELS)


def kernel_code(key: str) -> str:
    """The kernel's source; Kernel A1's with every switch 0, as its default build compiles it."""
    text = source.kernel_text(key)
    return resolve_switches(text, SWITCHES) if key == "a1" else text


def function(text: str, name: str) -> str | None:
    """The definition of the __device__ function `name` in `text`, up to its closing brace; None if none."""
    match = re.search(rf"^__device__ __forceinline__ [^\n(]*\b{name}\(", text, flags=re.M)
    if not match:
        return None
    return source.through_closing_brace(text, match.start(), match.end())


def block(pattern: str):
    """A reader of the lines of kernel code that `pattern` (from the start of a line to the end of one) matches."""
    def read(text: str) -> str | None:
        match = re.search(pattern, text, flags=re.M | re.S)
        return match.group(0) if match else None
    return read


def code(text: str) -> str:
    """`text` without its comments and blank lines: what the compiler reads of it."""
    lines = (re.sub(r"\s*//.*", "", line).rstrip() for line in text.splitlines())
    return "\n".join(line for line in lines if line)


# ---- shared device code: each piece, its versions, and the kernels that carry each unchanged -----------------

# piece -> (reader, {kernel that introduced a version: the kernels whose copy is that version, itself first}).
SHARED = {
    # Kernel 2.0's XOR permutation; Kernel 3.5 wrote it for either tile width (BK 32 or 64).
    "permuted_chunk": (lambda text: function(text, "permuted_chunk"), {
        "k2.0": ("k2.0", "k2.1", "k3.0", "k3.1", "k3.2", "k3.3", "k3.4"),
        "k3.5": ("k3.5", "k3.6", "k4.0", "k4.1", "k4.2", "k4.3", "k4.4", "k4.5", "k4.6", "k5.0", "a1", "d1"),
    }),
    # GROUP_M's default, from Kernel 4.2 on.
    "GROUP_M": (block(r"^#ifndef GROUP_M\n#define GROUP_M \d+\n#endif$"), {
        "k4.2": ("k4.2", "k4.3", "k4.4", "k4.5", "k4.6", "k4.7", "k5.0", "k5.4", "k5.5", "k5.6", "k5.7", "k5.8",
                 "k5.9", "k5.10", "k5.11", "k5.12", "k5.13", "k5.14", "k5.15", "a1", "d1"),
    }),
    # Kernel 4.2's L2-friendly tile order: launch index -> the block's tile.
    "GROUP_M tile order": (block(r"^[ \t]*// Launch index -> tile:.*?const int block_n = [^\n]*$"), {
        "k4.2": ("k4.2", "k4.3", "k4.4", "k4.5", "k4.6", "k4.7", "k5.0", "a1", "d1"),
    }),
    # The same order for a persistent kernel's tile index (Kernel 5.4).
    "tile_origin": (lambda text: function(text, "tile_origin"), {
        "k5.4": ("k5.4", "k5.5", "k5.6", "k5.7", "k5.8", "k5.9", "k5.10", "k5.11", "k5.12", "k5.13"),
        "k5.14": ("k5.14", "k5.15"),  # a cluster's tiles, CLUSTER_M x CLUSTER_N of them
    }),
    # C from wgmma's accumulators to global memory: whole tiles (5.1), guarded edges (5.4), a 64 x BN
    # tile per consumer (5.8, ping-pong), C in 16 bits or fp32 (5.9), a tile BN wide (5.11), C column-major
    # (5.13).
    "store_tile": (lambda text: function(text, "store_tile"), {
        "k5.1": ("k5.1", "k5.2", "k5.3"),
        "k5.4": ("k5.4", "k5.5", "k5.6", "k5.7"),
        "k5.8": ("k5.8",),
        "k5.9": ("k5.9", "k5.10"),
        "k5.11": ("k5.11", "k5.12", "k5.14", "k5.15"),
        "k5.13": ("k5.13",),
    }),
    # C by TMA through shared memory (Kernel 5.6); Kernel 5.8 stores its two 64-row halves; 5.9 16-bit C;
    # 5.10 stages it with stmatrix; 5.11 stores BN / 64 boxes (16-bit C) of its tile, its buffers taken in
    # turn from tile to tile.
    "store_tile_tma": (lambda text: function(text, "store_tile_tma"), {
        "k5.6": ("k5.6", "k5.7"),
        "k5.8": ("k5.8",),
        "k5.9": ("k5.9",),
        "k5.10": ("k5.10",),
        "k5.11": ("k5.11", "k5.12", "k5.14", "k5.15"),
    }),
    # The wgmma kernels' stages and their two mbarrier rings.
    "mbarrier ring: stages and barriers": (block(
            r"^[ \t]*extern __shared__ unsigned char smem\[\];\n.*?const unsigned full = [^\n]*$"), {
        "k5.1": ("k5.1", "k5.2", "k5.3", "k5.4", "k5.5", "k5.6", "k5.7", "k5.8", "k5.9", "k5.10", "k5.11", "k5.12",
                 "k5.13", "k5.14", "k5.15"),
    }),
    # Thread 0 initialises the rings: one arrival fills a stage; `empty` waits for every warp (5.0),
    # for both consumer warpgroups (5.1), for both of both blocks of a cluster (5.5), for one
    # consumer of each block (5.8, which takes 5.1's count again), for both of every block of a cluster of
    # any shape (5.14), for the one or two consumers of every block (5.15).
    "mbarrier ring: initialisation": (block(
            r"^[ \t]*for \(int s = 0; s < N_STAGES; \+\+s\) \{\n[ \t]*mbarrier_init\(full.*?fence_barrier_init\(\);$"), {
        "k5.0": ("k5.0",),
        "k5.1": ("k5.1", "k5.2", "k5.3", "k5.4", "k5.8"),
        "k5.5": ("k5.5", "k5.6", "k5.7", "k5.9", "k5.10", "k5.11", "k5.12", "k5.13"),
        "k5.14": ("k5.14",),
        "k5.15": ("k5.15",),
    }),
}


def copies(piece: str) -> dict[str, str]:
    """Every catalog kernel that has the piece -> its code."""
    read = SHARED[piece][0]
    found = {key: read(kernel_code(key)) for key in KERNELS}
    return {key: code(text) for key, text in found.items() if text is not None}


@pytest.mark.parametrize("piece", list(SHARED))
def test_each_copy_of_shared_device_code_is_the_version_it_declares(piece):
    versions = SHARED[piece][1]
    found = copies(piece)
    declared = [key for keys in versions.values() for key in keys]
    assert sorted(found, key=ORDER.index) == sorted(declared, key=ORDER.index), (
        f"{piece}: the kernels that have it are {sorted(found, key=ORDER.index)}; SHARED declares {declared}")
    for first, keys in versions.items():
        assert keys[0] == first
        drifted = [key for key in keys if found[key] != found[first]]
        assert not drifted, (f"{piece} in {drifted} is no longer {KERNELS[first].title}'s: change it there too, "
                             f"or declare a new version in SHARED")
    assert len({found[first] for first in versions}) == len(versions), f"{piece}: two versions are the same code"


@pytest.mark.parametrize("piece", list(SHARED))
def test_each_version_is_introduced_before_the_kernels_that_copy_it(piece):
    for first, keys in SHARED[piece][1].items():
        assert all(ORDER.index(first) <= ORDER.index(key) for key in keys), (piece, first, keys)


def test_the_readers_find_what_they_should_and_the_comparison_can_fail():
    """A changed constant in one copy is caught; a changed comment is not code."""
    read = SHARED["tile_origin"][0]
    text = kernel_code("k5.5")
    assert code(read(text)) == copies("tile_origin")["k5.4"]
    assert code(read(text.replace("* BN;", "* BM;", 1))) != copies("tile_origin")["k5.4"]
    assert code("x = 1;   // a comment\n// another\n\ny = 2;") == "x = 1;\ny = 2;"
    ring = copies("mbarrier ring: initialisation")
    assert ring["k5.5"].count("mbarrier_init") == 2 and "fence_barrier_init();" in ring["k5.5"]
    order = copies("GROUP_M tile order")["k4.2"]
    assert order.startswith("    const int grid_m = gridDim.y") and order.endswith("* BN;")


def test_the_shared_pieces_are_not_in_the_headers():
    """Each piece reads its kernel's own constants (BM, BN, CHUNKS, LINE, GROUP_M, N_STAGES) or is a
    part of a kernel's body, so none is in kernels/ptx.cuh or kernels/wgmma.cuh (or in a second copy there)."""
    for header in ("ptx.cuh", "wgmma.cuh"):
        text = (KERNEL_DIR / header).read_text()
        assert not [piece for piece, (read, _) in SHARED.items() if read(text)], header


# ---- the steps: each kernel's diff from the kernel it builds on ------------------------------------------------

ONE_IDEA = 90      # lines added + removed: every step that carries one idea stays within this

# (base, kernel) -> (lines added + removed now, the ideas the step carries). The five steps that carry several
# ideas, then the one-idea steps that are wide all the same. The allowance is today's size: a diff that grows
# must say so here.
ALLOWANCES = {
    ("k1.1", "k2.0"): (104, ("16-byte vector loads from global memory", "the XOR-permuted shared-memory layout",
                             "fragments by ldmatrix, a K slice of 32 per step")),
    ("k4.3", "k4.4"): (79, ("ldmatrix addresses by XOR: address(ks) = address(0) ^ (ks << 5)",
                            "4.3's STAGE_C switch dropped", "the SKIP_COPIES and SKIP_SYNC knock-out switches")),
    ("k4.5", "k4.6"): (152, ("the block tile, warps and pipeline as macros: a tile plan per problem",
                             "deterministic split-K over gridDim.z, added by reduce_splits")),
    ("k4.6", "k4.7"): (224, ("A and B in either memory order: MN-major tiles by ldmatrix.trans, with their own swizzle",
                             "edges read with cp.async's source size: any M, N and K",
                             "leading dimensions lda and ldb", "D = alpha A B + beta C")),
    ("k5.3", "k5.4"): (95, ("persistent blocks looping over tiles in GROUP_M order (tile_origin), the ring running "
                            "on across tiles", "any M and N: TMA's zero fill, guarded stores")),
    ("k4.4", "k5.0"): (126, ("copies by TMA, which replaces every copy and barrier: cp.async groups become full and "
                             "empty mbarriers, permuted_chunk's stores the TMA swizzle",)),
    ("k5.0", "k5.1"): (236, ("a new kernel more than a step, wgmma from shared memory in place of ldmatrix and "
                             "mma.sync: the book shows it whole",)),
    ("k4.4", "a1"): (157, ("every earlier step behind a compile-time switch (tests/test_ablation.py keeps the default "
                           "build Kernel 4.4 line for line)",)),
    ("k5.11", "k5.12"): (166, ("stream-K: the schedule of whole tiles and runs of K steps (Work, piece), and the "
                               "fix-up of a split tile's pieces in the order of K (slot, for_each_piece, add_pieces)",)),
    ("k5.11", "k5.14"): (135, ("the cluster's shape: A's tile shared along N as B's is along M, in the ranks, the "
                               "masks, the copies, the tile order and the barrier count; and a piece wholly past M or N "
                               "not copied, the stage expecting only the bytes that come",)),
    ("k4.6", "d1"): (107, ("the input type as a macro (tests/test_kernel_d1.py keeps the fp16 build Kernel 4.6, "
                           "line for line and in the SASS)",)),
}
SLACK = 10         # an allowance this much above its step's size is stale: lower it


def title_name(key: str) -> str:
    """'4.4' for Kernel 4.4, 'D1' for Kernel D1; '' for a kernel the book names otherwise (HGEMM)."""
    title = KERNELS[key].title.split(":")[0]
    return title.split()[-1] if title.startswith("Kernel ") else ""


def base(key: str) -> str | None:
    """The kernel `key` builds on: the first other kernel its header comment names ("Kernel 5.0: Kernel 4.4
    with ..."), else the one before it in catalog order in its series (k, s, w); None for a first kernel."""
    lines = source.kernel_text(key).splitlines()
    header = "\n".join(lines[:next(i for i, line in enumerate(lines) if not line.startswith("//"))])
    by_name = {title_name(k): k for k in KERNELS if title_name(k)}
    named = [n for n in re.findall(r"\bKernel ([A-Z]?\d+(?:\.\d+)?)\b", header) if n != title_name(key)]
    if named:
        return by_name[named[0]]
    series = re.match(r"[a-z]+", key).group()
    before = [k for k in ORDER[:ORDER.index(key)] if k.startswith(series) and title_name(k)]
    return before[-1] if title_name(key) and before else None


STEPS = [(base(key), key) for key in ORDER if base(key)]


def lines_changed(old: str, new: str) -> int:
    return sum(line[:1] in "+-" for line in str(source.diff_kernels(old, new)).splitlines()[2:])


def test_the_steps_are_the_book_s():
    assert {key for key in ORDER if not base(key)} == {"k1.0", "h1", "s1", "w1.0"}
    assert ("k1.1", "k2.0") in STEPS and ("k4.4", "k5.0") in STEPS and ("k5.0", "k5.1") in STEPS
    assert ("k4.4", "a1") in STEPS and ("k4.6", "d1") in STEPS and ("w1.0", "w1.2") in STEPS
    assert all(ORDER.index(old) < ORDER.index(new) for old, new in STEPS)
    assert set(ALLOWANCES) <= set(STEPS)


@pytest.mark.parametrize("old, new", STEPS, ids=[f"{old}->{new}" for old, new in STEPS])
def test_each_step_diff_is_bounded(old, new):
    changed = lines_changed(old, new)
    allowed, ideas = ALLOWANCES.get((old, new), (ONE_IDEA, ("one idea",)))
    assert changed <= allowed, (
        f"{KERNELS[old].title} -> {KERNELS[new].title} changes {changed} lines, more than the {allowed} allowed "
        f"({'; '.join(ideas)}): move what is not the step's idea out of the diff, or raise its allowance in ALLOWANCES "
        f"and name what it carries")
    if (old, new) in ALLOWANCES:
        assert changed >= allowed - SLACK, (
            f"{old} -> {new} changes {changed} lines now: lower its allowance in ALLOWANCES from {allowed}")


def test_the_allowances_name_what_the_steps_carry():
    for step, (allowed, ideas) in ALLOWANCES.items():
        assert all(ideas) and (allowed > ONE_IDEA or len(ideas) > 1), step
    several = [step for step, (_, ideas) in ALLOWANCES.items() if len(ideas) > 1]
    assert several == [("k1.1", "k2.0"), ("k4.3", "k4.4"), ("k4.5", "k4.6"), ("k4.6", "k4.7"), ("k5.3", "k5.4")]
