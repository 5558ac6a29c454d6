"""The ldmatrix exercises checked on the GPU (see tcgemm.practice.gpu): all five, from the ldmatrix probe and,
for the row addresses, the mma probe as well.

The ldmatrix probe (tcgemm.engine.gpu.probes.run_ldmatrix) tags 32 stored rows of 8 b16 values with their own
position, lets lane l point at stored row l, and reads which row and column each (lane, element) received:
turned round, the hardware's answer to `receiver` and `receiver_trans`. A row address is not something a
probe reads off; the hardware's answer is the address the two instructions need together. The row lane l
points at arrives at the (lane, element)s where the ldmatrix probe saw it, and there the mma probe
(tcgemm.practice.gpu.fragments) saw which operand entry the fragment must hold; so that row must start at the
one entry that puts each of its 8 values where the mma wants it. No kernel is built from the reader's
addresses, so none can read outside its tile.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from tcgemm.engine.gpu.device import device_info
from tcgemm.engine.gpu.probes import run_ldmatrix
from tcgemm.practice.gpu.fragments import holders, mma_observed

FP16_BYTES = 2
# key -> (ldmatrix .x<num>, .trans, the mma operand it loads, stored with the operand's columns as rows)
ADDRESSES = {"ldmatrix.a_x4_address": (4, False, "A", False),
             "ldmatrix.b_x2_address": (2, False, "B", True),
             "ldmatrix.b_x2_trans_address": (2, True, "B", False)}
RECEIVERS = {"ldmatrix.receiver": False, "ldmatrix.receiver_trans": True}


@lru_cache(maxsize=None)
def ldmatrix_observed(num: int, trans: bool) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols), each of shape (32 lanes, 2 num elements): the stored row (the lane that addressed it)
    and the column of the value each (lane, element) received from this GPU's ldmatrix.x<num>[.trans];
    element 2j is the low half of register j."""
    tags = run_ldmatrix(num, trans, np.arange(32) % (8 * num))
    return tags // 8, tags % 8


def row_starts(loaded_rows, loaded_cols, fragment_rows, fragment_cols, stored_transposed: bool) -> dict:
    """address lane -> (row, column) from the block's corner, in the stored tile, at which that lane's row
    must start; None for a lane no single start serves. At each (lane, element) the loaded value is column
    c of the row of address lane loaded_rows[lane, element] (c = loaded_cols[...]), and the fragment wants
    operand entry (fragment_rows, fragment_cols)[lane, element] there: stored at (row, col), or at (col, row)
    when `stored_transposed`, so the row starts c values before it."""
    if np.shape(loaded_rows) != np.shape(fragment_rows):
        raise ValueError(f"the load gives {np.shape(loaded_rows)} (lane, element)s, the fragment has "
                         f"{np.shape(fragment_rows)}")
    starts: dict[int, set] = {}
    for lane, c, row, col in zip(*(np.ravel(a) for a in (loaded_rows, loaded_cols, fragment_rows, fragment_cols))):
        stored_row, stored_col = (col, row) if stored_transposed else (row, col)
        starts.setdefault(int(lane), set()).add((int(stored_row), int(stored_col - c)))
    return {lane: next(iter(s)) if len(s) == 1 else None for lane, s in sorted(starts.items())}


def address_truth(starts: dict):
    """address(lane, row0, col0, row_elems) -> bytes: the address of `starts[lane]` in a block at stored
    (row0, col0) of a row-major fp16 tile with row_elems per row; None where the lane has no start."""
    def address(lane: int, row0: int, col0: int, row_elems: int):
        start = starts.get(lane)
        return None if start is None else FP16_BYTES * ((row0 + start[0]) * row_elems + col0 + start[1])
    return address


def receiver_truth(rows, cols):
    """receiver(matrix, row, col) -> (lane, register, half) that received that stored value; None if none."""
    owner = holders(rows, cols)

    def receiver(matrix: int, row: int, col: int):
        held = owner(8 * matrix + row, col)
        return None if held is None else (held[0], held[1] // 2, held[1] % 2)
    return receiver


def _address(key: str):
    num, trans, operand, stored_transposed = ADDRESSES[key]

    def truth():
        starts = row_starts(*ldmatrix_observed(num, trans), *mma_observed(operand), stored_transposed)
        return address_truth(starts), f"probe_ldmatrix and probe_mma on the {device_info().name}"
    return truth


def _receiver(key: str):
    def truth():
        return receiver_truth(*ldmatrix_observed(4, RECEIVERS[key])), f"probe_ldmatrix on the {device_info().name}"
    return truth


TRUTHS = {**{key: _address(key) for key in ADDRESSES}, **{key: _receiver(key) for key in RECEIVERS}}
