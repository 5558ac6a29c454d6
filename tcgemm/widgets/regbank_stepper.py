"""The register-bank stepper: walk an SGEMM thread's 64 FFMAs one at a time and watch the banks,
the reuse cache and the conflicts.

Every case (numbering x order x register file x reuse setting) is simulated here by
tcgemm.sgemm.regbank and sent to the page, which only displays it, so the widget also works in the
static HTML book."""
from __future__ import annotations

import itertools

import anywidget
import traitlets
from matplotlib.colors import to_hex, to_rgb

from tcgemm.sgemm import regbank
from tcgemm.style import GROUP_HUES, text_color_on
from tcgemm.widgets.bank_explorer import HERE, module_source

STEPS = regbank.SIZE * regbank.SIZE
CHOICES = {
    "numbering": list(regbank.NUMBERINGS),
    "order": list(regbank.ORDERS),
    "register_file": list(regbank.REGISTER_FILES),
    "reuse": list(regbank.REUSE_SETTINGS),
}


def case_key(numbering: str, order: str, register_file: str, reuse: str) -> str:
    return "|".join((numbering, order, register_file, reuse))


def case(numbering: str, order: str, register_file: str, reuse: str) -> dict:
    """JSON-ready, one list per field with an entry per step in issue order: the cell (i, j), the
    source registers and their banks in slot order a, b, c, the slots served by the reuse cache
    (a string such as "ab") and the extra cycles; and the totals."""
    slots, depth = regbank.REUSE_SETTINGS[reuse]
    steps = regbank.simulate_case(numbering, order, register_file, slots, depth)
    return {
        "i": [s.instruction.cell[0] for s in steps],
        "j": [s.instruction.cell[1] for s in steps],
        "registers": [[r for _, r in s.sources] for s in steps],
        "banks": [list(s.banks) for s in steps],
        "hits": ["".join(s.hits) for s in steps],
        "extra": [s.extra_cycles for s in steps],
        "totals": regbank.summarize(steps).as_dict(),
    }


def all_cases() -> dict:
    return {case_key(*names): case(*names) for names in itertools.product(*CHOICES.values())}


def bank_palette() -> list[dict]:
    """Face and text colour of each bank, as in tcgemm.sgemm.draw_regbank."""
    banks = max(rf.banks for rf in regbank.REGISTER_FILES.values())
    return [{"face": hue, "ink": to_hex(text_color_on(to_rgb(hue)))} for hue in GROUP_HUES[:banks]]


class RegbankStepper(anywidget.AnyWidget):
    _esm = module_source("dom.js", "regbank_stepper.js")
    _css = (HERE / "widgets.css").read_text()

    cases = traitlets.Dict(all_cases()).tag(sync=True)
    choices = traitlets.Dict(CHOICES).tag(sync=True)
    palette = traitlets.List(bank_palette()).tag(sync=True)
    numbering = traitlets.Unicode("conflict-free for Maxwell").tag(sync=True)
    order = traitlets.Unicode("row by row").tag(sync=True)
    register_file = traitlets.Unicode("Maxwell/Pascal").tag(sync=True)
    reuse = traitlets.Unicode("a, depth 1").tag(sync=True)
    step = traitlets.Int(1).tag(sync=True)  # the FFMA shown, 1..64 in issue order

    @traitlets.validate(*CHOICES)
    def _check_choice(self, proposal):
        name, value = proposal["trait"].name, proposal["value"]
        if value not in CHOICES[name]:
            raise traitlets.TraitError(f"{name} must be one of {CHOICES[name]}, got {value!r}")
        return value

    @traitlets.validate("step")
    def _check_step(self, proposal):
        if not 1 <= proposal["value"] <= STEPS:
            raise traitlets.TraitError(f"step must be in 1..{STEPS}, got {proposal['value']}")
        return proposal["value"]

    def key(self) -> str:
        return case_key(self.numbering, self.order, self.register_file, self.reuse)

    def report(self) -> regbank.Score:
        """tcgemm.sgemm.regbank's score of the case now on screen."""
        slots, depth = regbank.REUSE_SETTINGS[self.reuse]
        return regbank.score_case(self.numbering, self.order, self.register_file, slots, depth)
