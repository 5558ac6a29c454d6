"""The bank-conflict explorer: choose an access and a layout (or a preset, or a CuTe layout), see the
tile coloured by bank, each phase's lanes stepped through, shared memory in address order, the
conflicts, and for the kernels' own instructions what Nsight Compute measured."""
from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.smem import bank_cases
from tcgemm.smem.banks import Report

HERE = Path(__file__).parent


def module_source(*names: str) -> str:
    """One ES module made of these files of tcgemm/widgets, in order (anywidget takes one module)."""
    return "\n".join((HERE / name).read_text() for name in names)


def catalog() -> dict:
    """What the view offers: accesses, layouts and the settings each reads, presets, the kernels'
    names and the Nsight Compute counters of each op class."""
    kernels = {p[k] for p in bank_cases.PRESETS.values() for k in ("kernel", "source") if p[k]}
    return {"accesses": bank_cases.ACCESSES, "layouts": bank_cases.LAYOUTS,
            "layout_settings": {k: list(v) for k, v in bank_cases.LAYOUT_SETTINGS.items()},
            "presets": bank_cases.PRESETS,
            "kernels": {key: GEMM_KERNELS[key].title for key in sorted(kernels)},
            "measured_counters": {op: list(c) for op, c in bank_cases.MEASURED_COUNTERS.items()}}


class BankExplorer(anywidget.AnyWidget):
    _esm = module_source("dom.js", "banks.js", "bank_explorer.js")
    _css = (HERE / "widgets.css").read_text()

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
