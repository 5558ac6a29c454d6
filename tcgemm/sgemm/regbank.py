"""Register-bank conflicts of an SGEMM thread's 64 FFMAs, and how numbering, order and the operand
reuse cache remove them. Pure module (numpy).

Each thread holds an 8x8 block of accumulators c_ij and, per k-step, a column a_0..a_7 of A and a
row b_0..b_7 of B, then issues ``FFMA c_ij, a_i, b_j, c_ij`` for all 64 (i, j). An FFMA reads three
source registers, one per operand slot: "a" (slot 1), "b" (slot 2), "c" (slot 3).

The register-file models below come from published microbenchmarks, not from measurements of ours:

* Maxwell/Pascal (Scott Gray's maxas documentation): 4 banks, bank = register % 4, each bank serves
  one 32-bit read per cycle. k > 1 reads from one bank cost k - 1 extra cycles.
* Volta and later (Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via
  Microbenchmarking", 2018): 2 banks, bank = register % 2, each 64 bits wide, so it serves two
  reads per cycle; only three distinct sources in one bank cost an extra cycle.

Operand reuse cache (idealised): with depth d, each enabled slot remembers the last d distinct
registers read through it (least recently used goes first). A source found there needs no bank
read. One register read through two slots of one instruction is read from its bank once.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

SIZE = 8
SLOTS = ("a", "b", "c")
AB_SLOTS = ("a", "b")
REUSE_DEPTHS = (0, 1, 2)
MAX_REGISTER = 254  # R255 is RZ, the zero register


@dataclass(frozen=True)
class RegisterFile:
    name: str
    banks: int
    reads_per_bank: int  # 32-bit reads one bank serves per cycle

    def bank(self, register: int) -> int:
        return register % self.banks

    def extra_cycles(self, registers) -> int:
        """Extra cycles to read these distinct registers from their banks in one instruction."""
        counts = np.bincount([self.bank(r) for r in registers], minlength=self.banks)
        return int(np.maximum(counts - self.reads_per_bank, 0).sum())


MAXWELL = RegisterFile("Maxwell/Pascal", banks=4, reads_per_bank=1)
VOLTA = RegisterFile("Volta and later", banks=2, reads_per_bank=2)
REGISTER_FILES = {"Maxwell/Pascal": MAXWELL, "Volta and later": VOLTA}


# ---------------------------------------------------------------------------------------------
# Register numberings.


@dataclass(frozen=True, eq=False)
class Numbering:
    """Which register holds each c_ij (an 8x8 array), each a_i and each b_j (8 each)."""

    name: str
    c: np.ndarray
    a: np.ndarray
    b: np.ndarray

    def __post_init__(self):
        shapes = {"c": (SIZE, SIZE), "a": (SIZE,), "b": (SIZE,)}
        for key, shape in shapes.items():
            values = np.asarray(getattr(self, key))
            if values.shape != shape:
                raise ValueError(f"{self.name}: {key} must have shape {shape}, got {values.shape}")
            if values.dtype.kind not in "iu" or values.min() < 0 or values.max() > MAX_REGISTER:
                raise ValueError(f"{self.name}: {key} must hold register numbers 0..{MAX_REGISTER}")
            values = values.astype(np.int64)
            values.setflags(write=False)
            object.__setattr__(self, key, values)
        registers = np.concatenate([self.c.ravel(), self.a, self.b])
        unique, counts = np.unique(registers, return_counts=True)
        if np.any(counts > 1):
            raise ValueError(f"{self.name}: registers used twice: {sorted(int(r) for r in unique[counts > 1])}")


def naive_numbering() -> Numbering:
    """c_ij in R(8i + j), a in R64..R71, b in R72..R79."""
    return Numbering("naive", np.arange(64).reshape(SIZE, SIZE), np.arange(64, 72), np.arange(72, 80))


def _bank_choices(rf: RegisterFile, a_bank: int, b_bank: int) -> list[int]:
    """Banks for c_ij that add no conflict to its FFMA: the bank still has a read to spare after
    serving a_i and b_j."""
    return [bank for bank in range(rf.banks) if [a_bank, b_bank].count(bank) < rf.reads_per_bank]


def _assign_banks(allowed: list[list[int]], banks: int, capacity: int) -> list[int] | None:
    """Backtracking: one bank per cell from its allowed list, no bank used more than ``capacity``."""
    left = [capacity] * banks
    chosen: list[int] = []

    def place(cell: int) -> bool:
        if cell == len(allowed):
            return True
        for bank in allowed[cell]:
            if left[bank]:
                left[bank] -= 1
                chosen.append(bank)
                if place(cell + 1):
                    return True
                chosen.pop()
                left[bank] += 1
        return False

    return chosen if place(0) else None


@lru_cache(maxsize=None)
def conflict_free_numbering(rf: RegisterFile = MAXWELL) -> Numbering:
    """a in R64..R71, b in R72..R79, and c in R0..R63 chosen by a search so that no c_ij adds a
    bank conflict to its FFMA: on Maxwell bank(c_ij) differs from bank(a_i) and bank(b_j).
    Every bank holds the same number of c registers."""
    a, b = np.arange(64, 72), np.arange(72, 80)
    cells = [(i, j) for i in range(SIZE) for j in range(SIZE)]
    allowed = [_bank_choices(rf, rf.bank(a[i]), rf.bank(b[j])) for i, j in cells]
    banks = _assign_banks(allowed, rf.banks, capacity=SIZE * SIZE // rf.banks)
    if banks is None:
        raise ValueError(f"no conflict-free numbering of R0..R63 exists for {rf.name}")
    free = {bank: [r for r in range(SIZE * SIZE) if rf.bank(r) == bank] for bank in range(rf.banks)}
    c = np.zeros((SIZE, SIZE), dtype=np.int64)
    for (i, j), bank in zip(cells, banks):
        c[i, j] = free[bank].pop(0)
    return Numbering(f"conflict-free for {rf.name}", c, a, b)


NUMBERINGS = {
    "naive": naive_numbering,
    "conflict-free for Maxwell": lambda: conflict_free_numbering(MAXWELL),
    "conflict-free for Volta": lambda: conflict_free_numbering(VOLTA),
}


def unavoidable_conflicts(numbering: Numbering, rf: RegisterFile = MAXWELL) -> list[tuple[int, int]]:
    """The (i, j) whose a_i and b_j alone overload a bank: no choice of c registers helps them."""
    return [(i, j) for i in range(SIZE) for j in range(SIZE)
            if rf.extra_cycles({int(numbering.a[i]), int(numbering.b[j])}) > 0]


# ---------------------------------------------------------------------------------------------
# Orders in which a thread issues its 64 FFMAs: lists of (i, j).


def row_by_row() -> list[tuple[int, int]]:
    return [(i, j) for i in range(SIZE) for j in range(SIZE)]


def back_and_forth() -> list[tuple[int, int]]:
    """Rows in order; even rows run j = 7..0, odd rows j = 0..7."""
    return [(i, j) for i in range(SIZE) for j in (range(SIZE - 1, -1, -1) if i % 2 == 0 else range(SIZE))]


MAXAS_INDEX = (0, 1, 2, 3, 32, 33, 34, 35)  # maxas's names x (for A) and y (for B) of i, j = 0..7


def maxas_swirl() -> list[tuple[int, int]]:
    """maxas's order, in its own index names: two columns of B (y, y + 1) at a time, visiting the
    A values in pairs 2 apart, sweeping x up, then down for the next two columns."""
    position = {name: k for k, name in enumerate(MAXAS_INDEX)}
    xs = [0, 1, 32, 33]
    order = []
    for y in (0, 2, 32, 34):
        for x in xs:
            order += [(x + 2, y), (x + 2, y + 1), (x, y + 1), (x, y)]
        xs.reverse()
    return [(position[x], position[y]) for x, y in order]


ORDERS = {"row by row": row_by_row, "back and forth": back_and_forth, "Maxas swirl": maxas_swirl}


def check_order(order) -> list[tuple[int, int]]:
    """The order as a list of (i, j), or ValueError unless it visits each of the 64 cells once."""
    pairs = [(int(i), int(j)) for i, j in order]
    outside = [p for p in pairs if not (0 <= p[0] < SIZE and 0 <= p[1] < SIZE)]
    if outside:
        raise ValueError(f"order leaves the 8x8 block at {outside[:4]}")
    repeated = sorted({p for p in pairs if pairs.count(p) > 1})
    missing = sorted(set(row_by_row()) - set(pairs))
    if repeated or missing:
        raise ValueError(f"an order must visit each (i, j) once; repeats {repeated[:4]}, misses {missing[:4]}"
                         f"{' ...' if len(missing) > 4 else ''}")
    return pairs


def _named(table: dict, name: str, what: str):
    if name not in table:
        raise ValueError(f"unknown {what} {name!r}; known: {', '.join(map(repr, table))}")
    return table[name]


def order_named(name: str) -> list[tuple[int, int]]:
    return _named(ORDERS, name, "order")()


def numbering_named(name: str) -> Numbering:
    return _named(NUMBERINGS, name, "numbering")()


def register_file_named(name: str) -> RegisterFile:
    return _named(REGISTER_FILES, name, "register file")


# ---------------------------------------------------------------------------------------------
# Simulation.


@dataclass(frozen=True)
class Ffma:
    """``FFMA c, a, b, c``: c is both the destination and the third source."""

    c: int
    a: int
    b: int
    cell: tuple[int, int] | None = None

    @property
    def sources(self) -> tuple[tuple[str, int], ...]:
        return (("a", self.a), ("b", self.b), ("c", self.c))

    def __str__(self) -> str:
        return f"FFMA R{self.c}, R{self.a}, R{self.b}, R{self.c}"


def instructions(numbering: Numbering, order) -> list[Ffma]:
    return [Ffma(int(numbering.c[i, j]), int(numbering.a[i]), int(numbering.b[j]), (i, j))
            for i, j in check_order(order)]


@dataclass(frozen=True)
class Step:
    """One instruction's register reads. ``sources`` and ``banks`` are in slot order."""

    instruction: object  # an Ffma or a SassFfma
    sources: tuple[tuple[str, int], ...]
    banks: tuple[int, ...]
    hits: tuple[str, ...]  # slots served by the reuse cache
    reads: tuple[int, ...]  # distinct registers read from the banks
    extra_cycles: int

    @property
    def conflict(self) -> bool:
        return self.extra_cycles > 0


def _step(instruction, sources, hits, rf: RegisterFile) -> Step:
    reads = tuple(sorted({r for slot, r in sources if slot not in hits}))
    return Step(instruction, tuple(sources), tuple(rf.bank(r) for _, r in sources), tuple(hits),
                reads, rf.extra_cycles(reads))


def _check_reuse(reuse_slots, reuse_depth) -> tuple[str, ...]:
    slots = tuple(reuse_slots)
    if any(slot not in SLOTS for slot in slots):
        raise ValueError(f"reuse slots must be among {SLOTS}, got {slots}")
    if reuse_depth not in REUSE_DEPTHS:
        raise ValueError(f"reuse_depth must be one of {REUSE_DEPTHS}, got {reuse_depth!r}")
    return slots


def simulate(instrs, rf: RegisterFile = MAXWELL, reuse_slots=("a",), reuse_depth: int = 1) -> list[Step]:
    slots = _check_reuse(reuse_slots, reuse_depth)
    cache: dict[str, list[int]] = {slot: [] for slot in slots}  # most recent first
    steps = []
    for instr in instrs:
        hits = [slot for slot, r in instr.sources if slot in cache and r in cache[slot]]
        steps.append(_step(instr, instr.sources, hits, rf))
        for slot, r in instr.sources:
            if slot in cache:
                cache[slot] = ([r] + [old for old in cache[slot] if old != r])[:reuse_depth]
    return steps


@dataclass(frozen=True)
class Score:
    instructions: int
    conflicts: int  # instructions with at least one extra cycle
    extra_cycles: int
    reuse_hits: dict[str, int] = field(default_factory=dict)  # per slot
    ab_reads: int = 0  # source reads through slots a and b

    @property
    def hit_rate(self) -> float:
        """Share of the a and b operand reads served by the reuse cache."""
        hits = sum(self.reuse_hits.get(slot, 0) for slot in AB_SLOTS)
        return hits / self.ab_reads if self.ab_reads else 0.0

    def as_dict(self) -> dict:
        return {"instructions": self.instructions, "conflicts": self.conflicts,
                "extra_cycles": self.extra_cycles, "reuse_hits": dict(self.reuse_hits),
                "hit_rate": self.hit_rate}


def summarize(steps: list[Step]) -> Score:
    hits = {slot: sum(slot in s.hits for s in steps) for slot in SLOTS}
    ab_reads = sum(slot in AB_SLOTS for s in steps for slot, _ in s.sources)
    return Score(len(steps), sum(s.conflict for s in steps), sum(s.extra_cycles for s in steps),
                 hits, ab_reads)


def score(instrs, rf: RegisterFile = MAXWELL, reuse_slots=("a",), reuse_depth: int = 1) -> Score:
    return summarize(simulate(instrs, rf, reuse_slots, reuse_depth))


def simulate_case(numbering_name: str, order_name: str, rf_name: str,
                  reuse_slots=("a",), reuse_depth: int = 1) -> list[Step]:
    instrs = instructions(numbering_named(numbering_name), order_named(order_name))
    return simulate(instrs, register_file_named(rf_name), reuse_slots, reuse_depth)


def score_case(numbering_name: str, order_name: str, rf_name: str,
               reuse_slots=("a",), reuse_depth: int = 1) -> Score:
    return summarize(simulate_case(numbering_name, order_name, rf_name, reuse_slots, reuse_depth))


REUSE_SETTINGS = {
    "none": ((), 0),
    "a, depth 1": (("a",), 1),
    "a and b, depth 2": (("a", "b"), 2),
}


# ---------------------------------------------------------------------------------------------
# FFMAs read from cuobjdump / nvdisasm output, scored with their own .reuse flags.

_FFMA_LINE = re.compile(r"^\s*(?:/\*\s*[0-9a-fA-F]+\s*\*/)?\s*\{?\s*(?:@!?U?P[T0-9]+\s+)?FFMA(?:\.[A-Z0-9_]+)*\s+([^;]*);")
_REGISTER = re.compile(r"^[-|!]*R(\d+|Z)(\.reuse)?\|?$")


@dataclass(frozen=True)
class SassFfma:
    text: str
    dest: int | None  # None for RZ
    sources: tuple[tuple[str, int], ...]  # register sources only, (slot, register)
    reuse: frozenset[str]  # slots whose operand carries .reuse

    def __str__(self) -> str:
        return self.text


def _parse_operands(operands: list[str], line: str):
    if len(operands) != 4:
        raise ValueError(f"an FFMA has 4 operands, got {len(operands)} in {line.strip()!r}")
    dest = _REGISTER.match(operands[0])
    if dest is None:
        raise ValueError(f"FFMA destination is not a register in {line.strip()!r}")
    sources, reuse = [], set()
    for slot, operand in zip(SLOTS, operands[1:]):
        found = _REGISTER.match(operand)
        if found is None or found.group(1) == "Z":
            continue  # an immediate, a constant-bank operand or RZ: no register read
        sources.append((slot, int(found.group(1))))
        if found.group(2):
            reuse.add(slot)
    number = dest.group(1)
    return (None if number == "Z" else int(number)), tuple(sources), frozenset(reuse)


def parse_ffma(sass_text: str) -> list[SassFfma]:
    """The FFMA instructions of a SASS listing, in order; other lines are skipped."""
    found = []
    for line in sass_text.splitlines():
        match = _FFMA_LINE.match(line)
        if match:
            operands = [op.strip() for op in match.group(1).split(",")]
            dest, sources, reuse = _parse_operands(operands, line)
            found.append(SassFfma(line.strip(), dest, sources, reuse))
    return found


def simulate_sass(ffmas: list[SassFfma], rf: RegisterFile = MAXWELL) -> list[Step]:
    """A source hits the reuse cache when the previous FFMA of the list read the same register
    through the same slot with .reuse (instructions between them in the listing are ignored)."""
    steps, previous = [], None
    for ffma in ffmas:
        kept = {} if previous is None else {s: r for s, r in previous.sources if s in previous.reuse}
        hits = [slot for slot, r in ffma.sources if kept.get(slot) == r]
        steps.append(_step(ffma, ffma.sources, hits, rf))
        previous = ffma
    return steps


def score_sass(ffmas: list[SassFfma], rf: RegisterFile = MAXWELL) -> Score:
    return summarize(simulate_sass(ffmas, rf))
