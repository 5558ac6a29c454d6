"""Shared-memory traffic of whole kernel launches, predicted with the bank model. Pure module (numpy).

``block_step(key)`` lists every warp-level shared-memory instruction that one thread block of a
catalog kernel executes in one step of its K loop: the warp, the array, and each lane's byte
address, computed with the kernel's own index arithmetic (mirrored from kernels/*.cu, names kept).
``predict(key, M, N, K)`` runs them through ``tcgemm.smem.banks.analyze`` and scales to the launch.

Why one block and one step are enough: in every kernel here a shared-memory address depends only on
threadIdx and on counters of loops inside the step (i, tm, tn, ks). blockIdx (block_m, block_n,
tile_m, tile_n) and k0 only offset *global* addresses. Every block runs K / tile_k steps with the
same constant loop bounds, and no kernel touches shared memory outside its K loop (the epilogues
write C from registers). So a launch executes (grid blocks) x (K / tile_k) copies of one block-step.

Addresses are byte offsets within each ``__shared__`` array; a kernel's second array (Bs) gets the
base offset sizeof(As) rounded up to 128 bytes. The counts do not depend on that choice: every
instruction touches a single array, and moving all its addresses by one multiple of 16 bytes only
renames the banks.

Source or SASS (``arch``). With ``arch=None`` there is one instruction per shared-memory access the
C++ spells out. With ``arch`` one of tcgemm.engine.catalog.TARGET_ARCHS there is one per instruction that
NVRTC / nvcc 13.0 emit, which differs in two ways (seen in the SASS; tests/test_sass.py checks both):

* all targets: two consecutive 16-bit loads of the two halves of one aligned word become one
  32-bit LDS. Kernels 1.0 and 1.1 read every ``pack_half2`` pair that way: half the loads, the
  same words, so half the wavefronts and conflicts of the source-level count.
* sm_90: ptxas drops an ldmatrix that repeats an earlier one of the same warp in the same step (no
  store comes between them). Kernel 2.0, which reloads A for every B tile and B for every A tile,
  then issues exactly what Kernel 2.1 issues.

Hardware counters count SASS instructions: compare them with ``arch`` set to the GPU's.

What the model does not express, so the predictions do not claim it: two lanes storing different
halves of one 4-byte word are taken as one word (no conflict, as for loads); and nothing between
instructions is modelled (other warps, L1 traffic on the same data banks). Nsight Compute's counters
show a few such extra wavefronts (see tcgemm.engine.gpu.ncu).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache, partial

import numpy as np

from tcgemm.smem.banks import WARP, Access, analyze
from tcgemm.engine.catalog import GEMM_KERNELS, TARGET_ARCHS, configured
from tcgemm.engine.operands import check_gemm_shape

OPS = ("st", "ld", "ldsm")   # ordinary stores, ordinary loads, ldmatrix
_OP_OF_KIND = {"st": "st", "ld": "ld", "ldmatrix": "ldsm"}
LANE = np.arange(WARP)
HALF, UINT4 = 2, 16
INACTIVE = -1

# What NVRTC / nvcc 13.0 do to these kernels' shared-memory accesses, by target (see the docstring).
_MERGES_HALF_PAIRS = frozenset(TARGET_ARCHS)
_REUSES_LDMATRIX = frozenset({"sm_90"})


@dataclass(frozen=True, eq=False)
class Instr:
    """One warp-level shared-memory instruction of a block-step."""

    warp: int
    array: str          # "As" or "Bs"
    access: Access

    @property
    def op(self) -> str:
        return _OP_OF_KIND[self.access.kind]


def _base_after(nbytes: int) -> int:
    return -(-nbytes // 128) * 128


# ---------------------------------------------------------------------------------------------
# The kernels, one warp of one step each.


def _naive_mma(warp: int, BM: int, BN: int, TILES_M: int, TILES_N: int) -> list[Instr]:
    """kernels/k1.0_naive_mma.cu (TILES_M = TILES_N = 1) and k1.1_warp_tile_2x2.cu."""
    BK, WARPS_N, MMA_M, MMA_N, THREADS = 16, 4, 16, 8, 256
    WM, WN = TILES_M * MMA_M, TILES_N * MMA_N
    bs_base = _base_after(BM * BK * HALF)
    tid = warp * WARP + LANE
    group, tig = LANE >> 2, LANE % 4
    warp_m = (warp // WARPS_N) * WM
    warp_n = (warp % WARPS_N) * WN
    out = []
    for array, rows, base in (("As", BM, 0), ("Bs", BN, bs_base)):
        i = tid                                   # for (int i = tid; i < rows * BK; i += THREADS)
        while np.any(i < rows * BK):
            addr = np.where(i < rows * BK, base + ((i // BK) * BK + i % BK) * HALF, INACTIVE)
            out.append(Instr(warp, array, Access(addr, HALF, "st")))
            i = i + THREADS
    for tm in range(TILES_M):
        for i in range(8):                        # a_elem[i] = As[warp_m + tm * MMA_M + row][col]
            row = group + 8 * ((i // 2) % 2)
            col = 2 * tig + (i % 2) + 8 * (i // 4)
            out.append(Instr(warp, "As", Access(((warp_m + tm * MMA_M + row) * BK + col) * HALF, HALF)))
    for tn in range(TILES_N):
        for i in range(4):                        # b_elem[i] = Bs[warp_n + tn * MMA_N + col][row]
            row = 2 * tig + (i % 2) + 8 * (i // 2)
            col = group
            addr = bs_base + ((warp_n + tn * MMA_N + col) * BK + row) * HALF
            out.append(Instr(warp, "Bs", Access(addr, HALF)))
    return out


def _ldmatrix_hgemm(warp: int) -> list[Instr]:
    """kernels/h1_ldmatrix_hgemm_f16.cu: one warp per block."""
    TM, TN, TK = 16, 8, 16
    bs_base = _base_after(TM * TK * HALF)
    lane = LANE
    ld_row, ld_col = lane // 2, (lane % 2) * 8
    a_addr = ((lane % 16) * TK + (lane // 16) * 8) * HALF
    b_addr = bs_base + ((lane % 8) * TK + ((lane // 8) % 2) * 8) * HALF
    return [
        Instr(warp, "As", Access((ld_row * TK + ld_col) * HALF, UINT4, "st")),
        Instr(warp, "Bs", Access(np.where(lane < TN * 2, bs_base + (ld_row * TK + ld_col) * HALF, INACTIVE),
                                 UINT4, "st")),
        Instr(warp, "As", Access(a_addr, UINT4, "ldmatrix", 4)),
        Instr(warp, "Bs", Access(b_addr, UINT4, "ldmatrix", 2)),
    ]


def _permuted_smem(warp: int, a_once: bool, permuted: bool = True) -> list[Instr]:
    """kernels/k2.0_permuted_smem.cu (a_once=False) and k2.1_permuted_smem_a_once.cu (a_once=True).
    ``permuted=False`` replaces the XOR in permuted_chunk by the identity (plain row-major lines)."""
    BM, BK, WARPS_N, MMA_M, MMA_N, MMA_K, TILES_M, TILES_N = 64, 32, 4, 16, 8, 16, 2, 2
    WM, WN = TILES_M * MMA_M, TILES_N * MMA_N
    CHUNK, LINE = 8, 8
    CHUNKS, K_STEPS = BK // CHUNK, BK // MMA_K
    bs_base = _base_after(BM * CHUNKS * UINT4)

    def permuted_chunk(row, chunk):
        line = row // 2
        column = (row % 2) * CHUNKS + chunk
        return line * LINE + ((column ^ (line % 4)) if permuted else column)

    tid = warp * WARP + LANE
    warp_m = (warp // WARPS_N) * WM
    warp_n = (warp % WARPS_N) * WN
    st_slot = permuted_chunk(tid // CHUNKS, tid % CHUNKS)
    a_row, a_chunk = LANE % 16, LANE // 16
    b_row, b_chunk = LANE % 8, (LANE // 8) % 2

    def ldmatrix_a(tm, ks):
        slot = permuted_chunk(warp_m + tm * MMA_M + a_row, ks * (MMA_K // CHUNK) + a_chunk)
        return Instr(warp, "As", Access(slot * UINT4, UINT4, "ldmatrix", 4))

    def ldmatrix_b(tn, ks):
        slot = permuted_chunk(warp_n + tn * MMA_N + b_row, ks * (MMA_K // CHUNK) + b_chunk)
        return Instr(warp, "Bs", Access(bs_base + slot * UINT4, UINT4, "ldmatrix", 2))

    out = [Instr(warp, "As", Access(st_slot * UINT4, UINT4, "st")),
           Instr(warp, "Bs", Access(bs_base + st_slot * UINT4, UINT4, "st"))]
    if a_once:
        for ks in range(K_STEPS):
            out += [ldmatrix_a(tm, ks) for tm in range(TILES_M)]
            out += [ldmatrix_b(tn, ks) for tn in range(TILES_N)]
    else:
        for tm in range(TILES_M):
            for tn in range(TILES_N):
                for ks in range(K_STEPS):
                    out += [ldmatrix_a(tm, ks), ldmatrix_b(tn, ks)]
    return out


def permuted_chunk(row, chunk, chunks: int):
    """Kernel 2.0's XOR permutation (kernels/k3.0 to k5.0) for tile rows of `chunks` 16-byte chunks
    (4 or 8): the uint4 slot of (row, chunk). A 128-byte line holds 8 / chunks rows; the column in
    the line is XOR-ed with line % chunks."""
    line = row // (8 // chunks)
    column = (row % (8 // chunks)) * chunks + chunk
    return line * 8 + (column ^ (line % chunks))


def _pipelined(warp: int, BM: int, BN: int, BK: int, TILES_M: int, TILES_N: int, b_pairs: bool,
               copy_offsets: bool = False, slice_xor: bool = False, permuted: bool = True,
               tma: bool = False) -> list[Instr]:
    """Kernels 3.0 to 5.0: one K tile of one stage (every stage has the same banks: a stage is a whole
    number of 128-byte lines). Copies are cp.async (counted as stores); then, per k16 slice, the
    A fragments (x4) and the B fragments (x2 per n-tile, or x4 per pair of n-tiles: `b_pairs`).
    `copy_offsets`: the copy addresses as Kernel 3.6 and later compute them, copy 0's slot plus whole
    sweeps of ROWS_PER_LOAD rows, instead of permuted_chunk per copy.
    `slice_xor`: the addresses as Kernels 4.4 and 4.5 compute them, slice 0's offset XOR ks << 5
    plus a whole number of 16-row tiles, instead of permuted_chunk per ldmatrix.
    `permuted=False`: the tiles row-major, without the XOR (the ablation kernel's NO_XOR).
    `tma`: the copy engine writes the tiles (Kernel 5.0), no warp stores them: ldmatrix reads only."""
    THREADS, WARPS_N, MMA_M, MMA_N, MMA_K, CHUNK = 256, 4, 16, 8, 16, 8
    WM, WN = TILES_M * MMA_M, TILES_N * MMA_N
    CHUNKS, K_STEPS = BK // CHUNK, BK // MMA_K
    ROWS_PER_LOAD = THREADS // CHUNKS
    bs_base = _base_after(BM * CHUNKS * UINT4)
    slot_of = partial(permuted_chunk, chunks=CHUNKS) if permuted else (lambda row, chunk: row * CHUNKS + chunk)

    tid = warp * WARP + LANE
    warp_m = (warp // WARPS_N) * WM
    warp_n = (warp % WARPS_N) * WN
    st_slot = slot_of(tid // CHUNKS, tid % CHUNKS)
    out = []
    for rows, base, array in () if tma else ((BM, 0, "As"), (BN, bs_base, "Bs")):
        for i in range(rows // ROWS_PER_LOAD):
            if copy_offsets:
                slot = st_slot + i * ROWS_PER_LOAD * CHUNKS
            else:
                slot = slot_of(tid // CHUNKS + i * ROWS_PER_LOAD, tid % CHUNKS)
            out.append(Instr(warp, array, Access(base + slot * UINT4, UINT4, "st")))
    a_row, a_chunk = LANE % 16, LANE // 16
    b_row = LANE % 8 + (8 * (LANE // 16) if b_pairs else 0)
    b_chunk = (LANE // 8) % 2
    row_bytes = CHUNKS * UINT4

    def offset(row0, rows_down, chunk0, ks):
        if slice_xor:
            return (slot_of(row0, chunk0) * UINT4 ^ (ks << 5)) + rows_down * row_bytes
        return slot_of(row0 + rows_down, ks * (MMA_K // CHUNK) + chunk0) * UINT4

    for ks in range(K_STEPS):
        for tm in range(TILES_M):
            a = offset(warp_m + a_row, tm * MMA_M, a_chunk, ks)
            out.append(Instr(warp, "As", Access(a, UINT4, "ldmatrix", 4)))
        for tn in range(0, TILES_N, 2 if b_pairs else 1):
            b = offset(warp_n + b_row, tn * MMA_N, b_chunk, ks)
            out.append(Instr(warp, "Bs", Access(bs_base + b, UINT4, "ldmatrix", 4 if b_pairs else 2)))
    return out


def _operand_slot(rows_are_k: bool, BK: int, MN: int):
    """Kernel 4.7's Operand<K_MAJOR, MN>::slot: the uint4 slot of (row, chunk) in one stage."""
    CH, LINE = (MN if rows_are_k else BK) // 8, 8

    def slot(row, chunk):
        if CH <= LINE:
            line = row // (LINE // CH)
            column = (row % (LINE // CH)) * CH + chunk
            return line * LINE + (column ^ (line % CH))
        return row * CH + (chunk & ~(LINE - 1)) + ((chunk ^ row) & (LINE - 1))
    return slot, CH


def _operand_orders(warp: int, BK: int, a_col_major: bool = False, b_col_major: bool = True,
                    BM: int = 128, BN: int = 256, WARPS_M: int = 2, WARPS_N: int = 4) -> list[Instr]:
    """Kernel 4.7, one K tile of one stage, for A and B in either memory order: the copies, then per
    k16 slice the A fragments and the B fragment pairs, ldmatrix (K-major operand: A row-major, B
    column-major) or ldmatrix.trans (MN-major: rows along K, chunks along M or N)."""
    THREADS, MMA_M, MMA_N = 32 * WARPS_M * WARPS_N, 16, 8
    TILES_M, TILES_N = BM // WARPS_M // MMA_M, BN // WARPS_N // MMA_N
    tid = warp * WARP + LANE
    warp_m, warp_n = (warp // WARPS_N) * BM // WARPS_M, (warp % WARPS_N) * BN // WARPS_N
    a_slot, a_ch = _operand_slot(a_col_major, BK, BM)
    b_slot, b_ch = _operand_slot(not b_col_major, BK, BN)
    bs_base = _base_after((BM * BK // 8) * UINT4)
    out = []
    for slot, ch, rows, base, array in ((a_slot, a_ch, BM * BK // 8 // a_ch, 0, "As"),
                                        (b_slot, b_ch, BN * BK // 8 // b_ch, bs_base, "Bs")):
        per_load = THREADS // ch
        for i in range(-(-rows // per_load)):
            row = tid // ch + i * per_load
            active = row < rows
            address = np.where(active, base + slot(np.where(active, row, 0), tid % ch) * UINT4, INACTIVE)
            out.append(Instr(warp, array, Access(address, UINT4, "st")))
    for ks in range(BK // 16):
        for tm in range(TILES_M):
            if a_col_major:
                row, chunk = ks * 16 + LANE % 8 + 8 * (LANE // 16), (warp_m + tm * MMA_M) // 8 + LANE // 8 % 2
            else:
                row, chunk = warp_m + tm * MMA_M + LANE % 16, ks * 2 + LANE // 16
            out.append(Instr(warp, "As", Access(a_slot(row, chunk) * UINT4, UINT4, "ldmatrix", 4)))
        for tn in range(0, TILES_N, 2):
            if b_col_major:
                row, chunk = warp_n + tn * MMA_N + LANE % 8 + 8 * (LANE // 16), ks * 2 + LANE // 8 % 2
            else:
                row, chunk = ks * 16 + LANE % 8 + 8 * (LANE // 8 % 2), (warp_n + tn * MMA_N) // 8 + LANE // 16
            out.append(Instr(warp, "Bs", Access(bs_base + b_slot(row, chunk) * UINT4, UINT4, "ldmatrix", 4)))
    return out


_WARP_STEPS = {
    "k1.0": lambda warp: _naive_mma(warp, BM=32, BN=32, TILES_M=1, TILES_N=1),
    "k1.1": lambda warp: _naive_mma(warp, BM=64, BN=64, TILES_M=2, TILES_N=2),
    "h1": _ldmatrix_hgemm,
    "k2.0": lambda warp, permuted=True: _permuted_smem(warp, a_once=False, permuted=permuted),
    "k2.1": lambda warp, permuted=True: _permuted_smem(warp, a_once=True, permuted=permuted),
    "k3.0": lambda warp, BK=32: _pipelined(warp, 64, 64, BK, 2, 2, b_pairs=False),
    "k3.1": lambda warp, BK=32: _pipelined(warp, 128, 128, BK, 4, 4, b_pairs=False),
    "k3.2": lambda warp, BK=32: _pipelined(warp, 128, 128, BK, 4, 4, b_pairs=False),
    "k3.3": lambda warp, BK=32: _pipelined(warp, 128, 128, BK, 4, 4, b_pairs=True),
    "k3.4": lambda warp, BK=32: _pipelined(warp, 128, 128, BK, 4, 4, b_pairs=True),
    "k3.5": lambda warp, BK=32: _pipelined(warp, 128, 128, BK, 4, 4, b_pairs=True),
    "k3.6": lambda warp, BK=32: _pipelined(warp, 128, 128, BK, 4, 4, b_pairs=True, copy_offsets=True),
    "k4.0": lambda warp, BK=32: _pipelined(warp, 128, 256, BK, 4, 8, b_pairs=True, copy_offsets=True),
    "k4.1": lambda warp, BK=32: _pipelined(warp, 128, 256, BK, 4, 8, b_pairs=True, copy_offsets=True),
    "k4.2": lambda warp, BK=32: _pipelined(warp, 128, 256, BK, 4, 8, b_pairs=True, copy_offsets=True),
    "k4.3": lambda warp, BK=32: _pipelined(warp, 128, 256, BK, 4, 8, b_pairs=True, copy_offsets=True),
    "k4.4": lambda warp, BK=32: _pipelined(warp, 128, 256, BK, 4, 8, b_pairs=True, copy_offsets=True,
                                           slice_xor=True),
    "k4.5": lambda warp, BK=32: _pipelined(warp, 128, 256, BK, 4, 8, b_pairs=True, copy_offsets=True,
                                           slice_xor=True),
    # Kernel 4.6 in its default (largest) tile, the one it shares with 4.5.
    "k4.6": lambda warp, BK=32: _pipelined(warp, 128, 256, BK, 4, 8, b_pairs=True, copy_offsets=True,
                                           slice_xor=True),
    "k4.7": lambda warp, BK=32, orders=("C", "F"): _operand_orders(warp, BK, orders[0] == "F", orders[1] == "F"),
    # Kernel 4.4's reads of tiles that TMA wrote (swizzled as permuted_chunk: tcgemm.hopper.tma_tiles).
    "k5.0": lambda warp, BK=32: _pipelined(warp, 128, 256, BK, 4, 8, b_pairs=True, slice_xor=True, tma=True),
    # The ablation kernel with its switches off is Kernel 4.4; permuted=False is its NO_XOR.
    "a1": lambda warp, BK=32, permuted=True: _pipelined(warp, 128, 256, BK, 4, 8, b_pairs=True, copy_offsets=True,
                                                        slice_xor=True, permuted=permuted),
}
# Kernel D1 in its default type, fp16, is Kernel 4.6 (and every other type moves the same bytes).
_WARP_STEPS["d1"] = _WARP_STEPS["k4.6"]
PERMUTABLE = ("k2.0", "k2.1", "a1")


# ---------------------------------------------------------------------------------------------
# From source-level accesses to the instructions the compiler emits.


def _merge_half_pairs(instrs: list[Instr]) -> list[Instr]:
    out, j = [], 0
    while j < len(instrs):
        a = instrs[j]
        b = instrs[j + 1] if j + 1 < len(instrs) else None
        if (b is not None and a.op == b.op == "ld" and a.access.width == b.access.width == HALF
                and a.array == b.array and np.array_equal(a.access.active, b.access.active)):
            lo, hi = a.access.addresses[a.access.active], b.access.addresses[b.access.active]
            if np.all(hi == lo + HALF) and np.all(lo % 4 == 0):
                out.append(Instr(a.warp, a.array, Access(a.access.addresses, 4, "ld")))
                j += 2
                continue
        out.append(a)
        j += 1
    return out


def _drop_repeated_ldmatrix(instrs: list[Instr]) -> list[Instr]:
    seen, out = set(), []
    for ins in instrs:
        if ins.op == "ldsm":
            used = ins.access.addresses[:8 * ins.access.ldmatrix_num]
            key = (ins.array, ins.access.ldmatrix_num, used.tobytes())
            if key in seen:
                continue
            seen.add(key)
        out.append(ins)
    return out


def _check_arch(arch):
    if arch is not None and arch not in TARGET_ARCHS:
        raise ValueError(f"arch must be None (source level) or one of {sorted(TARGET_ARCHS)}, got {arch!r}")


def block_step(key: str, *, arch: str | None = None, permuted: bool = True,
               orders: tuple[str, str] | None = None) -> list[Instr]:
    """Every warp-level shared-memory instruction of one block in one K step, warp by warp, in
    program order. ``arch`` as in the module docstring; ``permuted=False`` (Kernels 2.x and a1)
    stores the tiles without the XOR permutation; ``orders`` (Kernel 4.7 only): the memory orders
    of A and B ('C' row-major, 'F' column-major)."""
    if key not in _WARP_STEPS:
        raise KeyError(f"no shared-memory model for kernel {key!r}; the models are: {', '.join(_WARP_STEPS)}")
    _check_arch(arch)
    if not permuted and key not in PERMUTABLE:
        raise ValueError(f"permuted=False applies to {', '.join(PERMUTABLE)} only, not {key!r}")
    warp_step = _WARP_STEPS[key]
    if orders is not None:
        if not GEMM_KERNELS[key].either_order:
            raise ValueError(f"orders applies to kernels that take either memory order, not {key!r}")
        warp_step = partial(warp_step, orders=orders)
    kernel = configured(key, arch)
    out = []
    for warp in range(kernel.threads // WARP):
        kwargs = ({"BK": kernel.tile_k} if kernel.dynamic_smem else {}) | ({} if permuted else {"permuted": False})
        instrs = warp_step(warp, **kwargs)
        if arch in _MERGES_HALF_PAIRS:
            instrs = _merge_half_pairs(instrs)
        if arch in _REUSES_LDMATRIX:
            instrs = _drop_repeated_ldmatrix(instrs)
        out += instrs
    return out


# ---------------------------------------------------------------------------------------------
# Counting.


@dataclass(frozen=True)
class OpCounts:
    requests: int = 0     # warp-level instructions
    wavefronts: int = 0
    ideal: int = 0        # one wavefront per phase with an active lane

    @property
    def conflicts(self) -> int:
        return self.wavefronts - self.ideal

    def __add__(self, other: OpCounts) -> OpCounts:
        return OpCounts(self.requests + other.requests, self.wavefronts + other.wavefronts,
                        self.ideal + other.ideal)

    def __mul__(self, n: int) -> OpCounts:
        return OpCounts(self.requests * n, self.wavefronts * n, self.ideal * n)


@dataclass(frozen=True)
class SmemCounts:
    """Shared-memory requests, wavefronts, ideal wavefronts and conflicts by op class
    ("st", "ld", "ldsm" = ldmatrix) and in total."""

    st: OpCounts = field(default_factory=OpCounts)
    ld: OpCounts = field(default_factory=OpCounts)
    ldsm: OpCounts = field(default_factory=OpCounts)

    def __getitem__(self, op: str) -> OpCounts:
        if op not in OPS:
            raise KeyError(f"op must be one of {OPS}, got {op!r}")
        return getattr(self, op)

    @property
    def total(self) -> OpCounts:
        return self.st + self.ld + self.ldsm

    def __mul__(self, n: int) -> SmemCounts:
        return SmemCounts(self.st * n, self.ld * n, self.ldsm * n)

    def table_rows(self) -> list[tuple[str, int, int, int, int]]:
        """(op, requests, wavefronts, ideal, conflicts) for each op class, then "total"."""
        return [(op, c.requests, c.wavefronts, c.ideal, c.conflicts)
                for op, c in [*((op, self[op]) for op in OPS), ("total", self.total)]]


def count(instrs) -> SmemCounts:
    """Sum the bank model's verdict on each instruction, by op class."""
    sums = {op: OpCounts() for op in OPS}
    for ins in instrs:
        report = analyze(ins.access)
        sums[ins.op] += OpCounts(1, report.wavefronts, report.ideal)
    return SmemCounts(**sums)


@lru_cache(maxsize=None)
def _block_step_counts(key: str, arch: str | None, permuted: bool) -> SmemCounts:
    return count(block_step(key, arch=arch, permuted=permuted))


def predict(key: str, M: int, N: int, K: int, *, arch: str | None = None,
            permuted: bool = True) -> SmemCounts:
    """Shared-memory traffic of one launch of kernel ``key`` on an M x N x K problem: all blocks,
    all warps, all K steps. ``arch`` and ``permuted`` as in ``block_step``."""
    block = _block_step_counts(key, arch, permuted)   # checks key, arch and permuted
    kernel = configured(key, arch)
    M, N, K = check_gemm_shape(kernel, M, N, K)
    gx, gy, gz = kernel.grid(M, N)
    return block * (gx * gy * gz * (K // kernel.tile_k))
