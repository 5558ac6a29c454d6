"""The bank-conflict explorer: choose an access and a layout, see each phase's banks and the conflicts."""
from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

from tcgemm.smem import bank_cases
from tcgemm.smem.banks import Report

HERE = Path(__file__).parent


def module_source(*names: str) -> str:
    """One ES module made of these files of tcgemm/widgets, in order (anywidget takes one module)."""
    return "\n".join((HERE / name).read_text() for name in names)


class BankExplorer(anywidget.AnyWidget):
    _esm = module_source("dom.js", "banks.js", "bank_explorer.js")
    _css = (HERE / "widgets.css").read_text()

    catalog = traitlets.Dict({"accesses": bank_cases.ACCESSES, "layouts": bank_cases.LAYOUTS}).tag(sync=True)
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

    def __init__(self, **settings):
        traits = bank_cases.settings(**settings)
        traits["smem_layout"] = traits.pop("layout")
        super().__init__(**traits)

    def settings(self) -> dict:
        values = {name: getattr(self, name) for name in bank_cases.DEFAULTS if name != "layout"}
        return {**values, "layout": self.smem_layout}

    def report(self) -> Report:
        """What tcgemm.smem.banks says about the case now on screen (the page computes the same)."""
        return bank_cases.analyze(self.settings())
