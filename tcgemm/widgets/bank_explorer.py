"""The bank-conflict explorer: choose an access and a layout (or a preset, or a CuTe layout), see the
tile coloured by bank, each phase's lanes stepped through, shared memory in address order, the
conflicts, and for the kernels' own instructions what Nsight Compute measured. Its puzzles
(tcgemm.smem.bank_puzzles) ask for a layout with a stated goal and judge the one on screen."""
from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.smem import bank_cases, bank_puzzles
from tcgemm.smem.banks import Report

HERE = Path(__file__).parent


def module_source(*names: str) -> str:
    """One ES module made of these files of tcgemm/widgets, in order (anywidget takes one module)."""
    return "\n".join((HERE / name).read_text() for name in names)


def catalog() -> dict:
    """What the view offers: accesses, layouts and the settings each reads, presets, the kernels'
    names, the Nsight Compute counters of each op class, and the puzzles."""
    kernels = {p[k] for p in bank_cases.PRESETS.values() for k in ("kernel", "source") if p[k]}
    return {"accesses": bank_cases.ACCESSES, "layouts": bank_cases.LAYOUTS,
            "layout_settings": {k: list(v) for k, v in bank_cases.LAYOUT_SETTINGS.items()},
            "presets": bank_cases.PRESETS,
            "kernels": {key: GEMM_KERNELS[key].title for key in sorted(kernels)},
            "measured_counters": {op: list(c) for op, c in bank_cases.MEASURED_COUNTERS.items()},
            "puzzles": bank_puzzles.PUZZLES,
            # the puzzles by difficulty: a list keeps its order where a notebook sorts the keys of a dict
            "puzzle_order": list(bank_puzzles.PUZZLES)}


class BankExplorer(anywidget.AnyWidget):
    _esm = module_source("dom.js", "banks.js", "bank_puzzles.js", "bank_puzzle_panel.js", "bank_explorer.js")
    # The puzzles' styles in a file of their own: the other widgets share widgets.css (and its recordings).
    _css = "\n".join((HERE / name).read_text() for name in ("widgets.css", "bank_puzzles.css"))

    catalog = traitlets.Dict(catalog()).tag(sync=True)
    access = traitlets.Unicode(bank_cases.DEFAULTS["access"]).tag(sync=True)
    # Not "layout": DOMWidget.layout is ipywidgets' own (CSS layout), and shadowing it breaks the view.
    smem_layout = traitlets.Unicode(bank_cases.DEFAULTS["layout"]).tag(sync=True)
    elem_bytes = traitlets.Int(bank_cases.DEFAULTS["elem_bytes"]).tag(sync=True)
    row_elems = traitlets.Int(bank_cases.DEFAULTS["row_elems"]).tag(sync=True)
    pad_bytes = traitlets.Int(bank_cases.DEFAULTS["pad_bytes"]).tag(sync=True)
    B = traitlets.Int(bank_cases.DEFAULTS["B"]).tag(sync=True)
    M = traitlets.Int(bank_cases.DEFAULTS["M"]).tag(sync=True)
    S = traitlets.Int(bank_cases.DEFAULTS["S"]).tag(sync=True)
    unit = traitlets.Unicode(bank_cases.DEFAULTS["unit"]).tag(sync=True)
    expr = traitlets.Unicode(bank_cases.DEFAULTS["expr"]).tag(sync=True)
    cute = traitlets.Unicode(bank_cases.DEFAULTS["cute"]).tag(sync=True)
    # Nsight Compute's counts of the kernels' instructions (bank_cases.measured_state), set by the
    # chapter's profiling cell where it runs; empty elsewhere.
    measured = traitlets.Dict({}).tag(sync=True)
    # The puzzle on screen (a key of bank_puzzles.PUZZLES), or "" for none.
    puzzle = traitlets.Unicode("").tag(sync=True)

    def __init__(self, puzzle: str = "", **settings):
        """``puzzle``: open on that puzzle, with its start settings (``settings`` override them)."""
        start = bank_puzzles.start_settings(puzzle) if puzzle else {}
        traits = bank_cases.settings(**{**start, **settings})
        traits["smem_layout"] = traits.pop("layout")
        super().__init__(puzzle=puzzle, **traits)

    @traitlets.validate("puzzle")
    def _known_puzzle(self, proposal):
        if proposal["value"] and proposal["value"] not in bank_puzzles.PUZZLES:
            raise traitlets.TraitError(f"unknown puzzle {proposal['value']!r}; choose one of {list(bank_puzzles.PUZZLES)}")
        return proposal["value"]

    def settings(self) -> dict:
        values = {name: getattr(self, name) for name in bank_cases.DEFAULTS if name != "layout"}
        return {**values, "layout": self.smem_layout}

    def report(self) -> Report:
        """What tcgemm.smem.banks says about the case now on screen (the page computes the same)."""
        return bank_cases.analyze(self.settings())

    def verdict(self) -> bank_puzzles.Verdict:
        """What the page says of the settings now on screen as an answer to the puzzle shown."""
        if not self.puzzle:
            raise ValueError("no puzzle is shown: choose one (BankExplorer(puzzle=...) or .puzzle = ...)")
        return bank_puzzles.puzzle_solved(self.puzzle, self.settings())
