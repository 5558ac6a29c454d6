"""Exercises of the Maxas SGEMM chapter (book/sgemm.ipynb): the thread layout, a thread's shared and global
loads, and register banks, checked against tcgemm.sgemm.sgemm_layout and tcgemm.sgemm.regbank. Pure module."""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable

import numpy as np

from tcgemm.practice.exercise import UNANSWERED, Exercise, Report
from tcgemm.sgemm import regbank, sgemm_layout
from tcgemm.sgemm.regbank import MAXWELL, REGISTER_FILES, SIZE

CHAPTER = "sgemm"
A_REGISTERS = np.arange(64, 64 + SIZE)        # a_i in R(64 + i): two LDS.128, four consecutive registers each
B_REGISTERS = np.arange(72, 72 + SIZE)        # b_j in R(72 + j)
LOOP_ORDER = "back and forth"
LOOP_REUSE = (("a",), 1)                      # .reuse on the first source slot, one register deep


# ---------------------------------------------------------------------------------------------
# Cases and the model's answers.

def _threads():
    return (((tid, tile), f"{tile}x{tile} tile, thread {tid}")
            for tile in sgemm_layout.TILES for tid in range(sgemm_layout.thread_count(tile)))


def _shared_loads():
    return (((tid, k, matrix, load, tile), f"{where}, k {k}, LDS.128 {load} of {matrix}s")
            for (tid, tile), where in _threads() for k in range(sgemm_layout.BK)
            for matrix in sgemm_layout.MATRICES for load in (0, 1))


def _global_loads():
    return (((tid, j, tile), f"{where}, copy {j}")
            for (tid, tile), where in _threads() for j in range(sgemm_layout.loads_per_thread(tile)))


def _ffma_sources():
    return (((a, b, c, name), f"FFMA R{c}, R{a}, R{b}, R{c} ({name})")
            for name in REGISTER_FILES for a in range(12) for b in range(12) for c in range(12))


def _loop_cells():
    return (((i, j), f"FFMA {n} of the loop, c[{i}][{j}]") for n, (i, j) in enumerate(regbank.order_named(LOOP_ORDER)))


@lru_cache(maxsize=None)
def _lds_addresses(tile, warp, k, matrix, load) -> tuple[int, ...]:
    return tuple(int(a) for a in sgemm_layout.shared_read_addresses(tile, warp, k, matrix, load))


def _lds_model(tid, k, matrix, load, tile) -> int:
    return _lds_addresses(tile, sgemm_layout.warp_of(tid, tile), k, matrix, load)[sgemm_layout.lane_of(tid, tile)]


@lru_cache(maxsize=None)
def _load_map(tile):
    return sgemm_layout.load_map(tile)


def _global_model(tid, j, tile) -> tuple[str, int, int]:
    return tuple(_load_map(tile)[tid][j])


def _extra_cycles_model(a, b, c, name) -> int:
    return REGISTER_FILES[name].extra_cycles({a, b, c})


# ---------------------------------------------------------------------------------------------
# The accumulator numbering: scored as a whole loop by the bank model, then compared FFMA by FFMA.

@dataclass(frozen=True)
class FfmaRead:
    """One FFMA of the loop as the register-bank model reads it."""
    text: str
    banks: tuple[int, ...]          # of the a, b and c sources
    cached: tuple[str, ...]         # slots served by the reuse cache
    extra_cycles: int

    def __repr__(self) -> str:
        cached = f", {' and '.join(self.cached)} from the reuse cache" if self.cached else ""
        cycles = f"{self.extra_cycles} extra cycle{'s' * (self.extra_cycles != 1)}"
        return f"{self.text} (banks of a, b, c: {' '.join(map(str, self.banks))}{cached}): {cycles}"


class NotANumbering(ValueError):
    pass


def _loop_reads(c_register) -> dict[tuple[int, int], FfmaRead]:
    """The loop's FFMAs with c_ij in register c_register(i, j), a and b fixed, as the model reads them."""
    c = np.zeros((SIZE, SIZE), dtype=object)
    for i in range(SIZE):
        for j in range(SIZE):
            try:
                c[i, j] = c_register(i, j)
            except Exception as exc:     # the reader's code: say what it raised, and where
                raise NotANumbering(f"c[{i}][{j}]: the answer raised {type(exc).__name__}: {exc}") from exc
    try:
        numbering = regbank.Numbering("your numbering", np.array(c.tolist()), A_REGISTERS, B_REGISTERS)
    except ValueError as err:
        raise NotANumbering(f"{err} (a_0..a_7 are R64..R71, b_0..b_7 R72..R79)") from err
    instrs = regbank.instructions(numbering, regbank.order_named(LOOP_ORDER))
    return {step.instruction.cell: FfmaRead(str(step.instruction), step.banks, step.hits, step.extra_cycles)
            for step in regbank.simulate(instrs, MAXWELL, *LOOP_REUSE)}


def _as_answer(reads: dict) -> Callable[[int, int], FfmaRead]:
    return lambda i, j: reads[i, j]


@lru_cache(maxsize=None)
def _model_reads() -> dict[tuple[int, int], FfmaRead]:
    model = regbank.conflict_free_numbering(MAXWELL)
    return _loop_reads(lambda i, j: int(model.c[i, j]))


def _numbering_model(i, j) -> FfmaRead:
    return _model_reads()[i, j]


def _none_everywhere(c_register) -> bool:
    try:
        return all(c_register(i, j) is None for i in range(SIZE) for j in range(SIZE))
    except Exception:        # the reader's code: _loop_reads says what it raised, and where
        return False


class NumberingExercise(Exercise):
    """The answer numbers the accumulators, one c_ij at a time; its loop is simulated whole (a register used
    twice is an error), and each FFMA must cost the model's extra cycles. Hints are numberings too."""

    def check(self, answer) -> Report:
        if not callable(answer):
            return super().check(answer)
        if _none_everywhere(answer):
            return Report(self.title, SIZE * SIZE, SIZE * SIZE, error=UNANSWERED)
        try:
            reads = _loop_reads(answer)
        except NotANumbering as err:
            return Report(self.title, SIZE * SIZE, 1, error=str(err))
        hints = tuple((_as_answer(_loop_reads(typical)), what) for typical, what in self.hints)
        return Exercise.check(replace(self, hints=hints), _as_answer(reads))


# ---------------------------------------------------------------------------------------------
# The book's answers, written from the chapter's rules.

def thread_origin(tid: int, tile: int) -> tuple[int, int]:
    warp, lane = divmod(tid, 32)
    warp_row, warp_col = divmod(warp, tile // 32)
    row = 4 * (8 * warp_row + ((lane >> 1) & 7))
    col = 4 * (4 * warp_col + 2 * ((lane >> 4) & 1) + (lane & 1))
    return row, col


def lds_address(tid: int, k: int, matrix: str, load: int, tile: int) -> int:
    row, col = thread_origin(tid, tile)
    first = (row if matrix == "A" else col) + load * tile // 2
    return 4 * (k * tile + first)


def global_load(tid: int, j: int, tile: int) -> tuple[str, int, int]:
    loaders = tile * tile // 128    # half the threads copy A, half B
    per_row = tile // 4             # float4 pieces in a stripe row
    i = tid % loaders
    row = i // per_row + j * (loaders // per_row)
    return ("A" if tid < loaders else "B"), row, i % per_row


def extra_cycles(a: int, b: int, c: int, register_file: str) -> int:
    maxwell = register_file == "Maxwell/Pascal"
    banks, reads_per_bank = (4, 1) if maxwell else (2, 2)
    reads = [r % banks for r in {a, b, c}]
    return sum(max(reads.count(bank) - reads_per_bank, 0)
               for bank in range(banks))


def c_register(i: int, j: int) -> int:
    return 8 * i + (j ^ 2)          # bank (j mod 4) XOR 2: never b_j's


# ---------------------------------------------------------------------------------------------
# Typical wrong answers.

def _origin_of_64_threads(tid, tile):
    warp, lane = divmod(tid, 32)
    return 4 * ((lane >> 1) & 7), 4 * (4 * warp + 2 * ((lane >> 4) & 1) + (lane & 1))


def _col4_in_floats(tid, j, tile):
    matrix, k, col4 = global_load(tid, j, tile)
    return matrix, k, 4 * col4


def _copies_in_adjacent_rows(tid, j, tile):
    matrix, _, col4 = global_load(tid, j, tile)
    loaders, per_row = tile * tile // 128, tile // 4
    return matrix, (tid % loaders) // per_row * sgemm_layout.loads_per_thread(tile) + j, col4


def _alternate_warps_copy_a(tid, j, tile):
    warp, lane = divmod(tid, 32)
    _, k, col4 = global_load(32 * (warp // 2) + lane, j, tile)
    return ("A" if warp % 2 == 0 else "B"), k, col4


def _every_slot_read(a, b, c, register_file):
    banks, reads_per_bank = (4, 1) if register_file == "Maxwell/Pascal" else (2, 2)
    reads = [r % banks for r in (a, b, c)]
    return sum(max(reads.count(bank) - reads_per_bank, 0) for bank in range(banks))


def _one_read_per_ffma_bank(a, b, c, register_file):
    return min(extra_cycles(a, b, c, register_file), 1)


EXERCISES = (
    Exercise(
        key="sgemm.thread_origin", chapter=CHAPTER, title="Where does thread tid's 8x8 of C start?",
        task="Write `thread_origin(tid, tile) -> (row, col)`: the first row and first column (elements of the "
             "tile of C, 0-based) of the first of thread `tid`'s four 4x4 blocks, in the 64-thread (tile 64) or "
             "256-thread (tile 128) kernel.",
        cases=_threads, model=sgemm_layout.thread_origin, solution=thread_origin,
        hints=((lambda tid, tile: thread_origin(tid, tile)[::-1],
                "rows and columns are swapped: the row comes from lane bits 1-3 (and the warp's row), the column "
                "from lane bits 0 and 4 (and the warp's column)"),
               (_origin_of_64_threads,
                "the 256-thread block's 8 warps are 2 rows x 4 columns of warps: warp w adds 32 (w // 4) to the "
                "row and 16 (w % 4) to the column"),
               (lambda tid, tile: tuple(x // 4 for x in thread_origin(tid, tile)),
                "that is the 4-row and 4-column group: the origin is in elements of C, 4 times the group"))),
    Exercise(
        key="sgemm.lds_address", chapter=CHAPTER, title="The address of a thread's LDS.128",
        task="Write `lds_address(tid, k, matrix, load, tile) -> int`: the byte offset in `As` (matrix `\"A\"`) "
             "or `Bs` (`\"B\"`), each `BK` = 8 rows of `tile` floats, of the 16 bytes thread `tid` reads with "
             "its LDS.128 number `load` (0 or 1) at step `k`.",
        cases=_shared_loads, model=_lds_model, solution=lds_address,
        hints=((lambda tid, k, matrix, load, tile: lds_address(tid, k, matrix, load, tile) // 4,
                "that is an offset in floats: the address is in bytes, 4 per float"),
               (lambda tid, k, matrix, load, tile: lds_address(tid, k, matrix, 0, tile) + 16 * load,
                "the second LDS.128 reads the thread's second 4x4 block, HALF = tile / 2 floats further, not the "
                "next 4 floats"),
               (lambda tid, k, matrix, load, tile: lds_address(tid, k, "B" if matrix == "A" else "A", load, tile),
                "As[k][m] is read at the thread's rows (its values of A), Bs[k][n] at its columns"))),
    Exercise(
        key="sgemm.global_load", chapter=CHAPTER, title="Which 16 bytes does copy j of thread tid bring?",
        task="Write `global_load(tid, j, tile) -> (matrix, k, col4)`: the piece that thread `tid`'s copy number "
             "`j` brings from global to shared memory for one K tile: `matrix` `\"A\"` or `\"B\"`, the stripe "
             "row `k` (0 to 7) and `col4`, the float4 column (floats 4 col4 .. 4 col4 + 3 of that row).",
        cases=_global_loads, model=_global_model, solution=global_load,
        hints=((_col4_in_floats,
                "col4 counts 16-byte pieces (float4), not floats: copy floats 4 col4 .. 4 col4 + 3"),
               (_copies_in_adjacent_rows,
                "one copy instruction of all the copying threads covers whole stripe rows (tile / 4 threads a row), "
                "so a thread's next copy is (threads copying) / (tile / 4) rows further, not the next row"),
               (_alternate_warps_copy_a,
                "the first half of the threads copy A and the second half B: in the 256-thread kernel warps 0-3 "
                "and 4-7, not alternate warps"))),
    Exercise(
        key="sgemm.extra_cycles", chapter=CHAPTER, title="What does an FFMA wait for its registers?",
        task="Write `extra_cycles(a, b, c, register_file) -> int`: the extra cycles `FFMA Rc, Ra, Rb, Rc` waits "
             "to read its three source registers from the banks (no reuse cache), for `register_file` "
             "`\"Maxwell/Pascal\"` or `\"Volta and later\"`.",
        cases=_ffma_sources, model=_extra_cycles_model, solution=extra_cycles,
        hints=((lambda a, b, c, name: extra_cycles(a, b, c, "Maxwell/Pascal"),
                "from Volta on the register file has 2 banks (register mod 2) of 64 bits, each serving two reads "
                "per cycle: only three sources in one bank cost a cycle"),
               (_every_slot_read,
                "a register read through two slots of one FFMA is read from its bank once"),
               (_one_read_per_ffma_bank,
                "k reads from one Maxwell bank cost k - 1 extra cycles: three sources in one bank wait 2, not 1"))),
    NumberingExercise(
        key="sgemm.c_register", chapter=CHAPTER, title="Number the accumulators: no bank conflict in the loop",
        task="Write `c_register(i, j) -> int`: the register of accumulator c_ij (i, j = 0..7), with a_i in "
             "R(64 + i) and b_j in R(72 + j) (filled by LDS.128). The 64 `FFMA c_ij, a_i, b_j, c_ij` run back and "
             "forth (even rows j = 7..0, odd rows j = 0..7) with `.reuse` on the A slot (one register), on "
             "Maxwell's 4 banks: no FFMA may wait for a bank. Registers must be distinct, 0 to 254.",
        cases=_loop_cells, model=_numbering_model, solution=c_register,
        same=lambda got, expected: got.extra_cycles == expected.extra_cycles,
        hints=((lambda i, j: 8 * i + j,
                "c_ij in R(8i + j) shares bank j mod 4 with b_j = R(72 + j) in every FFMA: give c_ij a register in "
                "another bank than b_j's"),
               (lambda i, j: 8 * i + (j + 1) % 8,
                "c_ij avoids b_j's bank, but the first FFMA of a row reads a_i from its bank too (the reuse cache "
                "still holds the previous row's a): there c_ij must avoid a_i's bank as well"))),
)
