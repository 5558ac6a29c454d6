"""Exercises of the Hopper chapter (book/hopper.ipynb): a wgmma matrix descriptor, where TMA's 128-byte
swizzle puts an element, the boxes of an operand tile, the mbarrier parities of a ring, and who holds an
entry of wgmma's accumulator; checked against tcgemm.canonical, tcgemm.engine.tma and
tcgemm.hopper.wgmma. Pure module."""
from __future__ import annotations

from dataclasses import replace
from functools import cache

from tcgemm.canonical import DESCRIPTOR_FIELDS, SWIZZLE_MODES, descriptor
from tcgemm.engine.catalog import configured
from tcgemm.engine.kernel_types import ITEMSIZE, ORDER_NAMES
from tcgemm.engine.tma import box_offsets, operand_map
from tcgemm.hopper.wgmma import accumulator_layout
from tcgemm.practice.exercise import Exercise, Mismatch, Report

CHAPTER = "hopper"


# ---------------------------------------------------------------------------------------------
# The matrix descriptor

DESCRIPTOR_ADDRESSES = (0x0, 0x400, 0x1F400)


def _descriptor_cases():
    for mode, m in SWIZZLE_MODES.items():
        k_row = 64 if mode == "none" else m.width // 2          # a K-major tile row: one atom row (none: 8 chunks)
        shapes = {"K": sorted({(64, 16), (128, 16), (64, k_row)}), "MN": [(64, 16), (128, 64), (256, 64)]}
        for major, tiles in shapes.items():
            for mn, k in tiles:
                for address in DESCRIPTOR_ADDRESSES:
                    yield (mode, major, mn, k, address), f"{mode} {major}-major, {mn} of M/N x {k} of K at {address:#x}"


def _model_descriptor(mode, major, mn, k, address):
    return descriptor(mode, mn, k, address, 2, major).encode()


# The book's answer, from the chapter's rules: fields in units of 16 bytes, the swizzle's descriptor code.
def descriptor_word(mode: str, major: str, mn: int, k: int,
                    address: int) -> int:
    width = {"none": 16, "32B": 32, "64B": 64, "128B": 128}[mode]
    if major == "K":
        if mode == "none":
            lbo, sbo = 128, 128 * (2 * k // 16)
        else:
            lbo, sbo = 16, 8 * width
    else:
        # k / 8 atoms (none: core matrices) of 8 rows of K
        past_all_of_k = 8 * width * (k // 8)
        if mode == "none":
            lbo, sbo = 128, past_all_of_k
        else:
            lbo, sbo = past_all_of_k, 8 * width
    code = {"none": 0, "128B": 1, "64B": 2, "32B": 3}[mode]
    return (address >> 4 | (lbo >> 4) << 16 | (sbo >> 4) << 32
            | code << 62)


def _field(word: int, name: str) -> int:
    first, bits, _ = DESCRIPTOR_FIELDS[name]
    return (word >> first) & ((1 << bits) - 1)


def _with_field(word: int, name: str, value: int) -> int:
    first, bits, _ = DESCRIPTOR_FIELDS[name]
    return word & ~(((1 << bits) - 1) << first) | value << first


OFFSET_FIELDS = ("start_address", "leading_byte_offset", "stride_byte_offset")


def _in_bytes(word: int) -> int:
    """The word with its address and offsets stored in bytes, not >> 4."""
    fields = [(_field(word, name) << 4, DESCRIPTOR_FIELDS[name][0]) for name in OFFSET_FIELDS]
    swizzle = word & 3 << 62
    return swizzle | sum(value << first for value, first in fields)


def _tma_code(mode, major, mn, k, address):
    return _with_field(descriptor_word(mode, major, mn, k, address), "swizzle", SWIZZLE_MODES[mode].tma_value)


def _offsets_swapped(mode, major, mn, k, address):
    word = descriptor_word(mode, major, mn, k, address)
    if major == "K":
        return word
    lbo, sbo = _field(word, "leading_byte_offset"), _field(word, "stride_byte_offset")
    return _with_field(_with_field(word, "leading_byte_offset", sbo), "stride_byte_offset", lbo)


class FieldExercise(Exercise):
    """An exercise whose answer is a 64-bit descriptor: each wrong case names its first wrong field."""

    def check(self, answer, truth=None, against: str = "the model") -> Report:
        report = super().check(answer, truth, against)
        return replace(report, first=tuple(_first_wrong_field(m) for m in report.first))


def _first_wrong_field(mismatch: Mismatch) -> Mismatch:
    expected, got = mismatch.expected, mismatch.got
    if type(got) is not int or not 0 <= got < 1 << 64:
        return Mismatch(f"{mismatch.where}: not a 64-bit unsigned integer", hex(expected), got)
    for name, (first, bits, _) in DESCRIPTOR_FIELDS.items():
        if _field(expected, name) != _field(got, name):
            return Mismatch(f"{mismatch.where}: {name} (bits {first}-{first + bits - 1}, as stored)",
                            _field(expected, name), _field(got, name))
    return Mismatch(f"{mismatch.where}: bits outside every field", hex(expected), hex(got))


# ---------------------------------------------------------------------------------------------
# TMA: where the 128-byte swizzle puts an element, and the boxes of an operand tile

@cache
def _b_row_major():
    """Kernel 5.7 with B row-major (N-major): one block's share of B's stage tile, as TMA copies it."""
    kernel = configured("k5.7", "sm_90").with_orders("C", "C")
    tile_map = operand_map(kernel, "B", 4096, 4096)
    return tile_map, kernel.tile_n // kernel.cluster // tile_map.box_cols


def _b_tile_entries():
    tile_map, boxes = _b_row_major()
    return (((k, n), f"B tile (k={k}, n={n})") for k in range(tile_map.box_rows)
            for n in range(boxes * tile_map.box_cols))


def _model_b_offset(k, n):
    tile_map, boxes = _b_row_major()
    return int(box_offsets(tile_map, boxes, k, n))


def b_tile_offset(k: int, n: int) -> int:
    box, column = divmod(n, 64)     # 64 fp16: one 128-byte swizzle row
    chunk = (column // 8) ^ (k % 8)
    return 64 * 64 * 2 * box + 128 * k + 16 * chunk + 2 * (column % 8)


def _operand_cases():
    for key in ("k5.7", "k5.8", "k5.9"):
        base = configured(key, "sm_90")
        for operand in ("A", "B"):
            for order in ("C", "F"):
                orders = (order, base.b_order) if operand == "A" else (base.a_order, order)
                kernel = base.with_orders(*orders)
                yield (kernel, operand), f"{kernel.short_title}, {operand} {ORDER_NAMES[order]}"


def _model_boxes(kernel, operand):
    tile_map = operand_map(kernel, operand, 4096, 4096)
    share = kernel.tile_m if operand == "A" else kernel.tile_n // kernel.cluster     # B: multicast halves
    return tile_map.box_rows, tile_map.box_cols, share * kernel.tile_k * ITEMSIZE[kernel.in_dtype] // tile_map.box_bytes


def operand_boxes(kernel, operand: str) -> tuple[int, int, int]:
    # a block's part of B
    tile = (kernel.tile_m if operand == "A"
            else kernel.tile_n // kernel.cluster)
    if kernel.mn_major(operand):
        # rows of K by one 128-byte swizzle row of M or N
        return kernel.tile_k, 64, tile // 64
    return tile, kernel.tile_k, 1


def _boxes_without_multicast(kernel, operand: str) -> tuple[int, int, int]:
    tile = kernel.tile_m if operand == "A" else kernel.tile_n
    return (kernel.tile_k, 64, tile // 64) if kernel.mn_major(operand) else (tile, kernel.tile_k, 1)


def _mn_major_in_one_box(kernel, operand: str) -> tuple[int, int, int]:
    rows, cols, boxes = operand_boxes(kernel, operand)
    return (rows, cols * boxes, 1) if kernel.mn_major(operand) else (rows, cols, boxes)


def _k_major_box_transposed(kernel, operand: str) -> tuple[int, int, int]:
    rows, cols, boxes = operand_boxes(kernel, operand)
    return (rows, cols, boxes) if kernel.mn_major(operand) else (cols, rows, boxes)


# ---------------------------------------------------------------------------------------------
# mbarrier parities of an N-stage ring, derived from the phases a run of the ring completes

RING_STAGES = range(2, 7)          # a ring has 2 stages at least
RING_TRIPS = 4


def _passes(completed_phases: int, parity: int) -> bool:
    """mbarrier.try_wait.parity: true once the phase of that parity has completed, i.e. while the barrier's
    current (incomplete) phase has the other parity."""
    return completed_phases % 2 != parity


def _awaited_parity(before: int, after: int) -> int:
    """The parity whose wait blocks with `before` phases completed and passes with `after`."""
    (parity,) = [p for p in (0, 1) if not _passes(before, p) and _passes(after, p)]
    return parity


@cache
def _ring(n_stages: int) -> tuple[dict[int, int], dict[int, int]]:
    """Run the ring for RING_TRIPS trips: each step's fill completes a phase of its stage's full barrier, its
    release one of the empty barrier. Returns step -> the parity the consumer waits on (full) and step -> the
    parity the producer waits on (empty) before refilling the stage with that step's tile."""
    full, empty = [0] * n_stages, [0] * n_stages
    consumer, producer = {}, {}
    for step in range(n_stages * RING_TRIPS):
        stage = step % n_stages
        before, full[stage] = full[stage], full[stage] + 1                 # TMA's bytes land
        consumer[step] = _awaited_parity(before, full[stage])
        before, empty[stage] = empty[stage], empty[stage] + 1              # the consumers release the stage
        producer[step + n_stages] = _awaited_parity(before, empty[stage])
    return consumer, producer


def _ring_steps(first_trip: int):
    return lambda: (((step, n), f"step {step} of a {n}-stage ring") for n in RING_STAGES
                    for step in range(first_trip * n, RING_TRIPS * n))


def full_parity(step: int, n_stages: int) -> int:
    return (step // n_stages) % 2


def empty_parity(step: int, n_stages: int) -> int:
    return (step // n_stages - 1) % 2


# ---------------------------------------------------------------------------------------------
# The accumulator of wgmma m64n256k16

ACC_N = 256


@cache
def _accumulator_owners() -> dict[tuple[int, int], tuple[int, int]]:
    layout = accumulator_layout(ACC_N)
    owners = {}
    for thread in range(layout.row.shape[0]):
        for i in range(layout.registers_per_thread):
            owners[int(layout.row[thread, i]), int(layout.col[thread, i])] = thread, i
    return owners


def _d_entries():
    return (((r, c), f"D[{r}][{c}]") for r in range(64) for c in range(ACC_N))


def d_owner(row: int, col: int) -> tuple[int, int]:
    thread = 32 * (row // 16) + 4 * (row % 8) + (col % 8) // 2
    register = 4 * (col // 8) + 2 * (row % 16 // 8) + col % 2
    return thread, register


EXERCISES = (
    FieldExercise(
        key="hopper.descriptor", chapter=CHAPTER, title="The wgmma matrix descriptor of a canonical fp16 tile",
        task="Write `descriptor_word(mode, major, mn, k, address) -> int`: the 64-bit shared-memory matrix "
             "descriptor of an fp16 tile of `mn` elements of M (or N) by `k` of K, stored densely in a canonical "
             "layout of swizzle mode `mode` (\"none\", \"32B\", \"64B\", \"128B\") starting at shared byte "
             "address `address`. `major` is \"K\" (the tile lies as `mn` rows of `k`) or \"MN\" (as `k` rows of "
             "`mn`, the way a TMA box of rows of K writes it). Dense means: K-major, the 8-row groups of M/N "
             "follow one another (none: the core matrices of one group lie side by side along K, 128 bytes "
             "apart); MN-major, the 8-row groups of K follow one another down all of K, and only then comes the "
             "next atom (none: core matrix) along M/N. Fields: start address, leading byte offset (LBO) and "
             "stride byte offset (SBO) in bytes >> 4 at bits 0, 16 and 32; base offset 0; the swizzle code in "
             "bits 62-63. A field a layout does not use (LBO of K-major swizzled) is 16 bytes.",
        cases=_descriptor_cases, model=_model_descriptor, solution=descriptor_word,
        hints=((lambda *case: _in_bytes(descriptor_word(*case)),
                "the start address, LBO and SBO are stored in units of 16 bytes: bytes >> 4"),
               (_tma_code,
                "bits 62-63 take the descriptor's code (128B: 1, 64B: 2, 32B: 3), not the tensor map's "
                "CU_TENSOR_MAP_SWIZZLE value (128B: 3)"),
               (_offsets_swapped,
                "MN-major, LBO and SBO are swapped: in a swizzled mode SBO steps 8 rows of K (one atom) and LBO "
                "one atom along M/N (past all of K); in none it is the other way round"))),
    Exercise(
        key="hopper.tma_offset", chapter=CHAPTER,
        title="Where TMA's 128-byte swizzle puts B[k][n] (Kernel 5.7, B row-major)",
        task="Kernel 5.7 with B row-major (N-major): each block copies 128 columns of N of B's stage tile, "
             "64 rows of K, in boxes of 64 rows of K by 64 fp16 of N, with the 128-byte swizzle, the boxes one "
             "after another in shared memory. Write `b_tile_offset(k, n) -> int`: the byte offset from the first "
             "box where TMA puts element (k, n) of that 64 x 128 tile (k, n from 0).",
        cases=_b_tile_entries, model=_model_b_offset, solution=b_tile_offset,
        hints=((lambda k, n: 8192 * (n // 64) + 128 * k + 2 * (n % 64),
                "TMA writes the box swizzled: the 16-byte chunk c of box row r lands in chunk c ^ (r % 8)"),
               (lambda k, n: 256 * k + 16 * ((n // 8) ^ (k % 8)) + 2 * (n % 8),
                "a box row holds 64 fp16 (128 bytes, the swizzle's row): columns 64 to 127 are in the second "
                "box, 64 x 128 = 8192 bytes after the first"),
               (lambda k, n: 8192 * (n // 64) + 128 * k + 2 * ((n % 64) ^ (k % 8)),
                "the XOR acts on 16-byte chunks (address bits 4-6 with bits 7-9), not on elements"))),
    Exercise(
        key="hopper.operand_boxes", chapter=CHAPTER, title="The TMA boxes of one stage of an operand tile",
        task="Write `operand_boxes(kernel, operand) -> (box_rows, box_cols, boxes)`: the box of the tensor map "
             "of operand \"A\" or \"B\" (rows and columns of the matrix as it lies in global memory, in elements) "
             "and how many boxes one block copies per stage. `kernel` is a catalog kernel (Kernels 5.7 to 5.9, "
             "A and B in either order): `kernel.tile_m`, `kernel.tile_n`, `kernel.tile_k`, `kernel.cluster` "
             "(blocks that share each B tile by multicast, each copying its part), and "
             "`kernel.mn_major(operand)` (A column-major or B row-major).",
        cases=_operand_cases, model=_model_boxes, solution=operand_boxes,
        hints=((_mn_major_in_one_box,
                "an MN-major box row lies along M or N, and with the 128-byte swizzle it holds 128 bytes at most "
                "(64 fp16): the tile takes one box per 64 of M or N"),
               (_boxes_without_multicast,
                "in a cluster of two each block copies half of B's tile and multicasts it to both"),
               (_k_major_box_transposed,
                "the box is (rows, columns) of the matrix as it lies: K-major, A is M rows of K (B: N rows of K), "
                "so the box is the tile's M (or N) by tile_k"))),
    Exercise(
        key="hopper.full_parity", chapter=CHAPTER, title="The parity a consumer waits on: full barrier of ring step s",
        task="Write `full_parity(step, n_stages) -> int`: the phase parity (0 or 1) the consumers pass to "
             "`mbarrier.try_wait.parity` on the *full* barrier of stage `step % n_stages` before reading the "
             "K tile of ring step `step` (from 0). A wait for parity p passes once the barrier's phase of parity "
             "p has completed; each fill of a stage completes one phase of its full barrier.",
        cases=_ring_steps(0), model=lambda step, n: _ring(n)[0][step], solution=full_parity,
        hints=((lambda step, n: step % 2,
                "the parity flips once per trip round the ring, not every step: the n-th fill of a stage "
                "completes its barrier's phase n"),
               (lambda step, n: (step // n + 1) % 2,
                "the first fill of a stage completes phase 0, so the first trip waits for parity 0"))),
    Exercise(
        key="hopper.empty_parity", chapter=CHAPTER,
        title="The parity the producer waits on: empty barrier of ring step s",
        task="Write `empty_parity(step, n_stages) -> int`, for `step >= n_stages`: the parity the producer "
             "passes to `mbarrier.try_wait.parity` on the *empty* barrier of stage `step % n_stages` before "
             "refilling it with ring step `step`'s tile. Each release of a stage by the consumers completes one "
             "phase of its empty barrier; before step n_stages the stages are free and the producer does not wait.",
        cases=_ring_steps(1), model=lambda step, n: _ring(n)[1][step], solution=empty_parity,
        hints=((lambda step, n: (step // n) % 2,
                "the producer waits for the release of the stage's previous use, one trip earlier: that is "
                "release step // n_stages - 1 of the stage"),
               (lambda step, n: step % 2,
                "the parity flips once per trip round the ring, not every step"))),
    Exercise(
        key="hopper.d_owner", chapter=CHAPTER, title="Who holds D[row][col] of wgmma m64n256k16 (fp32)?",
        task="Write `d_owner(row, col) -> (thread, register)`: the thread of the warpgroup (0 to 127) and the "
             "index i of its accumulator register d_i (0 to 127) that hold entry (row, col) of the 64 x 256 "
             "fp32 accumulator.",
        cases=_d_entries, model=lambda row, col: _accumulator_owners()[row, col], solution=d_owner,
        hints=((lambda row, col: (4 * (row % 8) + (col % 8) // 2, d_owner(row, col)[1]),
                "warp w of the warpgroup holds rows 16w to 16w + 15: the thread is 32 (row // 16) + lane"),
               (lambda row, col: (d_owner(row, col)[0], 64 * (row % 16 // 8) + 2 * (col // 8) + col % 2),
                "each block of 8 columns takes 4 registers, d_4j to d_4j+3: two for row groupID, then two for "
                "row groupID + 8, before the next block"),
               (lambda row, col: (32 * (row // 16) + 4 * ((col % 8) // 2) + row % 8, d_owner(row, col)[1]),
                "lane = 4 groupID + threadID_in_group, with groupID the row within 8 and threadID_in_group the "
                "pair of columns within 8, as in mma.sync's accumulator"))),
)
