"""Kernel 3.0's N-stage cp.async ring buffer, modelled for one thread. Pure (stdlib only).

``schedule`` runs the kernel's loop and records every event, ``check_schedule`` checks the
invariants that make it correct, ``timeline`` times it: with enough stages the copy latency hides
behind the mma work, and a tile costs ``steady_state_period``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from tcgemm.table import Table

KINDS = ("issue", "commit", "wait", "barrier", "compute")


@dataclass(frozen=True)
class Step:
    """One event. issue/commit: ``group`` is the commit group (a commit's ``tile`` is None when
    the group is empty). wait: ``in_flight`` groups may stay in flight, ``group`` is the newest
    group guaranteed complete (-1: none). iteration -1 is the prologue."""
    kind: str
    iteration: int
    tile: int | None = None
    stage: int | None = None
    group: int | None = None
    in_flight: int | None = None


@dataclass(frozen=True)
class Interval:
    kind: str  # "copy" (issue to land), "compute" or "wait" (compute idle until tile lands)
    tile: int
    stage: int
    start: float
    end: float


def _check_int(name: str, value, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")


def _check_time(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


def schedule(n_stages: int, k_tiles: int, *, wait_in_flight: int | None = None,
             skip_empty_commits: bool = False) -> list[Step]:
    """The events of one thread, in program order. The knobs break the kernel on purpose:
    ``wait_in_flight`` replaces ``wait_group N-2``; ``skip_empty_commits`` drops empty groups."""
    _check_int("n_stages", n_stages, 2)
    _check_int("k_tiles", k_tiles, 1)
    if wait_in_flight is None:
        wait_in_flight = n_stages - 2
    _check_int("wait_in_flight", wait_in_flight, 0)
    steps: list[Step] = []
    commits = 0
    open_group: list[int] = []

    def issue(iteration: int, tile: int) -> None:
        if tile < k_tiles:
            steps.append(Step("issue", iteration, tile, tile % n_stages, commits))
            open_group.append(tile)

    def commit(iteration: int) -> None:
        nonlocal commits
        if skip_empty_commits and not open_group:
            return
        tile = open_group[0] if open_group else None
        steps.append(Step("commit", iteration, tile, None if tile is None else tile % n_stages, commits))
        commits += 1
        open_group.clear()

    for s in range(n_stages - 1):
        issue(-1, s)
        commit(-1)
    done = -1
    for kt in range(k_tiles):
        done = max(done, commits - 1 - wait_in_flight)
        steps.append(Step("wait", kt, group=done, in_flight=wait_in_flight))
        steps.append(Step("barrier", kt))
        issue(kt, kt + n_stages - 1)
        commit(kt)
        steps.append(Step("compute", kt, kt, kt % n_stages))
    return steps


def check_schedule(steps: list[Step], n_stages: int, k_tiles: int | None = None) -> None:
    """Raise ValueError unless (a) every computed tile is in a group a wait guaranteed complete,
    followed by a barrier; (b) no copy overwrites a stage before a barrier after the compute of its
    old tile; (c) tiles 0..k_tiles-1 are issued once and computed once, in order. Groups are
    counted from the commits, not read from the steps."""
    _check_int("n_stages", n_stages, 2)
    commits, done, visible, last_barrier = 0, -1, -1, -1
    group_of: dict[int, int] = {}
    holds: dict[int, int] = {}
    computed_at: dict[int, int] = {}
    issued: list[int] = []
    computed: list[int] = []
    for i, step in enumerate(steps):
        where = f"step {i} (iteration {step.iteration})"
        if step.kind in ("issue", "compute") and step.stage not in range(n_stages):
            raise ValueError(f"{where}: stage {step.stage!r} is not one of the {n_stages} stages")
        if step.kind == "issue":
            tile, stage = step.tile, step.stage
            if tile != len(issued):
                raise ValueError(f"{where}: tile {tile} issued out of order, expected tile {len(issued)}")
            old = holds.get(stage)
            if old is not None and old not in computed_at:
                raise ValueError(f"{where}: tile {tile} overwrites stage {stage} before tile {old} in it was computed")
            if old is not None and last_barrier < computed_at[old]:
                raise ValueError(f"{where}: tile {tile} is copied into stage {stage} with no barrier since tile "
                                 f"{old} was computed from it: other warps may still be reading it")
            holds[stage] = tile
            group_of[tile] = commits
            issued.append(tile)
        elif step.kind == "commit":
            commits += 1
        elif step.kind == "wait":
            _check_int(f"{where}: in_flight", step.in_flight, 0)
            done = max(done, commits - 1 - step.in_flight)
        elif step.kind == "barrier":
            visible, last_barrier = done, i
        elif step.kind == "compute":
            tile, stage = step.tile, step.stage
            if tile != len(computed):
                raise ValueError(f"{where}: tile {tile} computed out of order, expected tile {len(computed)}")
            if tile not in group_of:
                raise ValueError(f"{where}: tile {tile} computed but never issued")
            if holds.get(stage) != tile:
                raise ValueError(f"{where}: tile {tile} computed from stage {stage}, which holds tile {holds.get(stage)}")
            group = group_of[tile]
            if group > done:
                raise ValueError(f"{where}: tile {tile} (commit group {group}) is computed but not guaranteed "
                                 f"complete: the waits so far only guarantee groups up to {done}")
            if group > visible:
                raise ValueError(f"{where}: tile {tile} is computed with no barrier after the wait that completed "
                                 f"it: other threads' copies may not have landed")
            computed_at[tile] = i
            computed.append(tile)
        else:
            raise ValueError(f"{where}: unknown step kind {step.kind!r}, expected one of {KINDS}")
    expected = len(issued) if k_tiles is None else k_tiles
    if expected < 1:
        raise ValueError("no tile is issued")
    if len(issued) != expected:
        raise ValueError(f"tiles {list(range(len(issued), expected))} never issued")
    if len(computed) != expected:
        raise ValueError(f"tiles {list(range(len(computed), expected))} never computed")


def verdict_table(cases: dict[str, list[Step]], n_stages: int, k_tiles: int) -> Table:
    """check_schedule's verdict on each named schedule: accepted, or REJECTED with its reason."""
    rows = []
    for name, steps in cases.items():
        try:
            check_schedule(steps, n_stages, k_tiles)
            rows.append([name, "accepted", ""])
        except ValueError as err:
            rows.append([name, "REJECTED", str(err)])
    return Table(["Case", "Verdict", "Reason"], rows)


def ring_state(n_stages: int, k_tiles: int, iteration: int) -> list[tuple[int | None, str]]:
    """(tile, state) of each stage while ``iteration`` computes, from the schedule: state is
    "computing", "in flight" (issued, not yet waited for) or "free" (tile None)."""
    steps = schedule(n_stages, k_tiles)
    _check_int("iteration", iteration, 0)
    if iteration >= k_tiles:
        raise ValueError(f"iteration must be < k_tiles = {k_tiles}, got {iteration}")
    holds: dict[int, int] = {}
    computed: set[int] = set()
    for step in steps:
        if step.kind == "issue":
            holds[step.stage] = step.tile
        elif step.kind == "compute":
            if step.iteration == iteration:
                break
            computed.add(step.tile)
    return stage_states(holds, computed, n_stages, iteration)


def stage_states(holds: dict[int, int], computed: set[int], n_stages: int,
                 iteration: int) -> list[tuple[int | None, str]]:
    """Each stage's (tile, state) while `iteration` computes: `holds` maps a stage to the last tile copied
    into it, `computed` the tiles computed before."""
    state = []
    for stage in range(n_stages):
        tile = holds.get(stage)
        if tile == iteration:
            state.append((tile, "computing"))
        elif tile is None or tile in computed:
            state.append((None, "free"))
        else:
            state.append((tile, "in flight"))
    return state


def timeline(n_stages: int, k_tiles: int, copy_time: float, compute_time: float) -> list[Interval]:
    """Time the schedule: copies overlap, each lands ``copy_time`` after its issue; a wait stalls
    until its groups have landed; a compute takes ``compute_time``. Sorted by start."""
    copy_time = _check_time("copy_time", copy_time)
    compute_time = _check_time("compute_time", compute_time)
    steps = schedule(n_stages, k_tiles)
    eps = 1e-9 * (copy_time + compute_time)
    clock = ready = 0.0
    folded = 0  # groups 0..folded-1 are in ready, the time by which they have all landed
    issued_at: dict[int, float] = {}
    group_tiles: list[list[int]] = [[]]
    out: list[Interval] = []
    for step in steps:
        if step.kind == "issue":
            issued_at[step.tile] = clock
            group_tiles[-1].append(step.tile)
        elif step.kind == "commit":
            group_tiles.append([])
        elif step.kind == "wait":
            while folded <= step.group:
                ready = max([ready] + [issued_at[t] + copy_time for t in group_tiles[folded]])
                folded += 1
            if ready - clock > eps:
                out.append(Interval("wait", step.iteration, step.iteration % n_stages, clock, ready))
            clock = max(clock, ready)
        elif step.kind == "compute":
            out.append(Interval("compute", step.tile, step.stage, clock, clock + compute_time))
            clock += compute_time
    out += [Interval("copy", t, t % n_stages, s, s + copy_time) for t, s in issued_at.items()]
    order = {"copy": 0, "wait": 1, "compute": 2}
    return sorted(out, key=lambda iv: (iv.start, order[iv.kind], iv.tile))


def steady_state_period(n_stages: int, copy_time: float, compute_time: float) -> float:
    """Time per tile in the long run: N-1 copies overlap, so the copy costs copy_time/(N-1)."""
    _check_int("n_stages", n_stages, 2)
    return max(_check_time("compute_time", compute_time), _check_time("copy_time", copy_time) / (n_stages - 1))
