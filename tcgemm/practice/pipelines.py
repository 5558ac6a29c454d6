"""Exercises of the cp.async pipeline chapter (book/pipelines.ipynb): Kernel 3.0's N-stage ring, where a K
tile lives, what each iteration copies and how many groups its wait may leave in flight, checked against
the loop simulated by tcgemm.pipelines.pipeline. Pure module."""
from __future__ import annotations

from functools import lru_cache

from tcgemm.pipelines.pipeline import ring_state, schedule
from tcgemm.practice.exercise import UNANSWERED, Exercise, Report

CHAPTER = "pipelines"
STAGE_COUNTS = range(2, 7)
TILE_COUNTS = range(1, 10)


@lru_cache(maxsize=None)
def _steps(n_stages: int, k_tiles: int, empty_groups: bool = True) -> tuple:
    return tuple(schedule(n_stages, k_tiles, skip_empty_commits=not empty_groups))


def _copies(n_stages: int, k_tiles: int, iteration: int) -> list[tuple[int, int]]:
    return [(s.tile, s.stage) for s in _steps(n_stages, k_tiles) if s.kind == "issue" and s.iteration == iteration]


# The model's answers, read off the simulated loop.
def _stage_model(n_stages: int, kt: int) -> int:
    return next(s.stage for s in _steps(n_stages, kt + 1) if s.kind == "compute" and s.tile == kt)


def _prologue_model(n_stages: int, k_tiles: int) -> list[tuple[int, int]]:
    return _copies(n_stages, k_tiles, -1)


def _copied_model(n_stages: int, k_tiles: int, kt: int) -> tuple[int, int] | None:
    copies = _copies(n_stages, k_tiles, kt)
    return copies[0] if copies else None


def _wait_model(n_stages: int, k_tiles: int, kt: int, empty_groups: bool) -> int:
    """Groups committed before iteration kt's wait, less tile kt's own group and the older ones."""
    steps = _steps(n_stages, k_tiles, empty_groups)
    wait = next(i for i, s in enumerate(steps) if s.kind == "wait" and s.iteration == kt)
    committed = sum(s.kind == "commit" for s in steps[:wait])
    group = next(s.group for s in steps if s.kind == "issue" and s.tile == kt)
    return committed - 1 - group


def _rows(value):
    """A sequence of pairs as a list of tuples, so that lists and tuples of pairs compare alike."""
    try:
        return [tuple(row) if isinstance(row, (list, tuple)) else row for row in value]
    except TypeError:
        return value


def _same_rows(got, expected) -> bool:
    return _rows(got) == _rows(expected)


# The cases: every stage count the chapter sweeps (2 to 6; Kernel 3.0's static shared memory holds no more),
# and K from one tile (fewer than the stages) to nine.
def _stage_cases():
    return (((n, kt), f"N = {n}, K tile {kt}") for n in STAGE_COUNTS for kt in range(4 * n))


def _ring_sizes():
    return (((n, k), f"N = {n}, {k} K tile{'s' * (k > 1)}") for n in STAGE_COUNTS for k in TILE_COUNTS)


def _iterations():
    return (((n, k, kt), f"{where}, iteration {kt}") for (n, k), where in _ring_sizes() for kt in range(k))


def _waits():
    return (((n, k, kt, empty), f"{where}, {'with' if empty else 'without'} empty groups")
            for empty in (True, False) for (n, k, kt), where in _iterations())


class NoneIsAnAnswer(Exercise):
    """An exercise where None is the right answer for some cases: an answer that returns None on every case
    is still one not written yet, not one right where nothing is copied."""

    def check(self, answer, truth=None, against: str = "the model") -> Report:
        report = super().check(answer, truth, against)
        if report.wrong and not report.error and all(answer(*args) is None for args, _ in self.cases()):
            return Report(self.title, report.checked, report.wrong, error=UNANSWERED, against=against)
        return report


# The book's answers, written from the chapter's loop.
def stage(n_stages: int, kt: int) -> int:
    return kt % n_stages


def prologue(n_stages: int, k_tiles: int) -> list[tuple[int, int]]:
    return [(tile, tile) for tile in range(min(n_stages - 1, k_tiles))]


def copied(n_stages: int, k_tiles: int, kt: int) -> tuple[int, int] | None:
    tile = kt + n_stages - 1
    return (tile, tile % n_stages) if tile < k_tiles else None


def wait_count(n_stages: int, k_tiles: int, kt: int,
               empty_groups: bool) -> int:
    if empty_groups:
        return n_stages - 2
    return min(n_stages - 2, k_tiles - 1 - kt)


def ring(n_stages: int, k_tiles: int,
         kt: int) -> list[tuple[int | None, str]]:
    slots = []
    for slot in range(n_stages):
        # the tile of kt .. kt + N - 1 that maps to this stage
        tile = kt + (slot - kt) % n_stages
        if tile == kt:
            slots.append((tile, "computing"))
        elif tile < k_tiles:
            slots.append((tile, "in flight"))
        else:
            slots.append((None, "free"))
    return slots


def _ring_without_this_copy(n_stages, k_tiles, kt):
    return [(None, "free") if tile == kt + n_stages - 1 else (tile, state)
            for tile, state in ring(n_stages, k_tiles, kt)]


EXERCISES = (
    Exercise(
        key="pipelines.stage", chapter=CHAPTER, title="Which stage holds K tile kt?",
        task="Write `stage(n_stages, kt) -> int`: the stage (0 to N - 1) of Kernel 3.0's N-stage ring into which "
             "K tile `kt` (0-based) is copied, and from which the loop computes it.",
        cases=_stage_cases, model=_stage_model, solution=stage,
        hints=((lambda n, kt: kt % (n - 1),
                "the ring has N stages, N - 1 tiles in flight and the one being computed: tile kt lives in stage "
                "kt mod N, not kt mod (N - 1)"),
               (lambda n, kt: (kt - 1) % n,
                "(kt - 1) mod N is the stage iteration kt copies tile kt + N - 1 into; tile kt itself was copied "
                "into stage kt mod N"))),
    Exercise(
        key="pipelines.prologue", chapter=CHAPTER, title="What does the prologue copy?",
        task="Write `prologue(n_stages, k_tiles) -> list of (tile, stage)`: the K tiles the prologue copies, in "
             "order, each with the stage it goes to (each copy is committed as a group of its own).",
        cases=_ring_sizes, model=_prologue_model, solution=prologue, same=_same_rows,
        hints=((lambda n, k: [(t, t) for t in range(min(n, k))],
                "the prologue fills N - 1 stages, not N: the last one is filled by iteration 0's copy (of tile N - 1)"),
               (lambda n, k: [(t, t) for t in range(n - 1)],
                "with fewer K tiles than N - 1 the prologue copies only the tiles there are (the other groups it "
                "commits are empty)"))),
    NoneIsAnAnswer(
        key="pipelines.copied", chapter=CHAPTER, title="What does iteration kt copy?",
        task="Write `copied(n_stages, k_tiles, kt) -> (tile, stage) or None`: the K tile that iteration `kt` of the "
             "main loop copies while it computes tile `kt`, and the stage it goes to; `None` where the iteration "
             "copies nothing (it commits an empty group).",
        cases=_iterations, model=_copied_model, solution=copied,
        hints=((lambda n, k, kt: (kt + n, kt % n) if kt + n < k else None,
                "N - 1 tiles are ahead of tile kt in the ring, not N: iteration kt copies tile kt + N - 1"),
               (lambda n, k, kt: (kt + n - 1, kt % n) if kt + n - 1 < k else None,
                "stage kt mod N holds tile kt, which this iteration computes from: tile kt + N - 1 goes to "
                "(kt + N - 1) mod N, the stage tile kt - 1 has left"),
               (lambda n, k, kt: (kt + n - 1, (kt + n - 1) % n),
                "past the last K tile there is nothing to copy: the iteration commits an empty group (answer None)"))),
    Exercise(
        key="pipelines.wait_count", chapter=CHAPTER, title="How many groups may stay in flight?",
        task="Write `wait_count(n_stages, k_tiles, kt, empty_groups) -> int`: the largest n for which "
             "`cp.async.wait_group n` in iteration `kt` still guarantees that tile `kt` has landed. `empty_groups` "
             "says whether the loop commits a group in every iteration, empty past the last tile (Kernel 3.0), "
             "or commits only when it copied something.",
        cases=_waits, model=_wait_model, solution=wait_count,
        hints=((lambda n, k, kt, empty: n - 1,
                "N - 1 groups are in flight when iteration kt waits and tile kt's is the oldest: wait_group N - 1 "
                "would not wait for it, N - 2 leaves only the younger ones"),
               (lambda n, k, kt, empty: n - 2,
                "without empty groups nothing is committed past the last tile, so fewer groups follow tile kt's: "
                "min(N - 2, k_tiles - 1 - kt)"),
               (lambda n, k, kt, empty: min(n - 2, k - 1 - kt),
                "with a group committed in every iteration, N - 2 groups follow tile kt's even at the tail: the "
                "count stays N - 2, which is why Kernel 3.0 commits empty groups"))),
    Exercise(
        key="pipelines.ring", chapter=CHAPTER, title="The ring while tile kt is computed",
        task="Write `ring(n_stages, k_tiles, kt) -> list of (tile, state)`, one pair per stage 0 to N - 1, while "
             "iteration `kt` runs its `mma` (after this iteration's copy was issued): state is `\"computing\"`, "
             "`\"in flight\"` (copied, not yet computed) or `\"free\"` (tile `None`).",
        cases=_iterations, model=ring_state, solution=ring, same=_same_rows,
        hints=((_ring_without_this_copy,
                "iteration kt issues the copy of tile kt + N - 1 before its mma: while tile kt is computed that "
                "stage is already in flight"),
               (lambda n, k, kt: ring(n, k + n, kt),
                "past the last K tile nothing is copied: those stages are free (tile None)"))),
)
