"""The fragments exercises checked on the GPU (see tcgemm.practice.gpu): the mma probe's own answer.

tcgemm.engine.gpu.probes.observe_mma runs mma.sync.m16n8k16 (fp16 in, fp32 accumulate) with a single 1 in
one (lane, element) of A, B or C at a time and reads off D which entry that was. Turned round, that is the
hardware's answer to all three exercises: who holds A[row][k], B[k][col] and C[row][col]. As the probe says,
A is seen through the B layout it fills B with (and B through A's): renumbering k alike in both would leave
every product unchanged; the ldmatrix chapter's check pins k down.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from tcgemm.engine.gpu.device import device_info
from tcgemm.engine.gpu.probes import observe_mma

VARIANT = "m16n8k16.f32"
OPERAND = {"fragments.a_owner": "A", "fragments.b_owner": "B", "fragments.c_owner": "C"}


@lru_cache(maxsize=None)
def _observation() -> dict:
    return observe_mma(VARIANT)


def mma_observed(operand: str) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols), each of shape (32 lanes, elements): the operand entry the probe saw at each
    (lane, element) of this GPU's m16n8k16 fp16 mma (-1 where it saw none)."""
    if operand not in ("A", "B", "C", "D"):
        raise ValueError(f"an mma operand is one of A, B, C, D, got {operand!r}")
    seen = _observation()[operand]
    shape = seen.expected.row.shape
    return np.reshape(seen.rows, shape), np.reshape(seen.cols, shape)


def holders(rows: np.ndarray, cols: np.ndarray):
    """owner(row, col) -> (lane, element) that holds that entry, from rows[lane, element] and
    cols[lane, element]; None for an entry no (lane, element) was seen holding. An entry seen twice leaves
    another unseen (each operand has one entry per (lane, element)), so a wrong map still shows up."""
    held = {(int(r), int(c)): (lane, element) for (lane, element), r, c
            in zip(np.ndindex(rows.shape), rows.ravel(), cols.ravel())}
    return lambda row, col: held.get((row, col))


def _owner_truth(key: str):
    def truth():
        return holders(*mma_observed(OPERAND[key])), f"probe_mma on the {device_info().name}"
    return truth


TRUTHS = {key: _owner_truth(key) for key in OPERAND}
