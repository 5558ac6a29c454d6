"""The ldmatrix lane picker: choose a lane, see the row it addresses and the elements it receives.

The layouts come from tcgemm.fragment_layouts (the one source the drawings, tests and probes also use);
all six variants (.x1/.x2/.x4, with and without .trans) are sent to the page, so switching works
in the static HTML book too."""
from __future__ import annotations

import anywidget
import traitlets

from tcgemm.fragment_layouts import WARP_SIZE, ldmatrix_address_lane, ldmatrix_instruction, ldmatrix_layout
from tcgemm.widgets.bank_explorer import HERE, module_source

NUMS = (1, 2, 4)


def case(num: int, trans: bool) -> dict:
    """JSON-ready: which row each lane addresses and which (register, half, row, col) it receives."""
    layout = ldmatrix_layout(num, trans)
    addressed = [None] * WARP_SIZE
    for row, lane in enumerate(ldmatrix_address_lane(num)):
        addressed[int(lane)] = row
    received = [[[e // 2, e % 2, int(layout.row[lane, e]), int(layout.col[lane, e])]
                 for e in range(layout.elements_per_lane)] for lane in range(WARP_SIZE)]
    return {"instruction": ldmatrix_instruction(num, trans), "num": num, "trans": trans,
            "addressed": addressed, "received": received}


def all_cases() -> dict:
    return {f"x{num}{'.trans' if trans else ''}": case(num, trans) for num in NUMS for trans in (False, True)}


class LanePicker(anywidget.AnyWidget):
    _esm = module_source("dom.js", "lane_picker.js")
    _css = (HERE / "widgets.css").read_text()

    cases = traitlets.Dict(all_cases()).tag(sync=True)
    num = traitlets.Int(4).tag(sync=True)
    trans = traitlets.Bool(False).tag(sync=True)
    lane = traitlets.Int(0).tag(sync=True)

    @traitlets.validate("num")
    def _check_num(self, proposal):
        if proposal["value"] not in NUMS:
            raise traitlets.TraitError(f"num must be one of {NUMS}, got {proposal['value']}")
        return proposal["value"]

    @traitlets.validate("lane")
    def _check_lane(self, proposal):
        if not 0 <= proposal["value"] < WARP_SIZE:
            raise traitlets.TraitError(f"lane must be in 0..31, got {proposal['value']}")
        return proposal["value"]
