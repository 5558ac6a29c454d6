"""Interactive widgets of the book (anywidget). Their logic is JavaScript that runs in the page, so
they work in a live notebook and in the built HTML book alike; the Python side only holds state and
answers the same questions through tcgemm's pure modules, for tests and for the curious reader.
Imports anywidget, never CuPy."""
from tcgemm.widgets.bank_explorer import BankExplorer
from tcgemm.widgets.lane_picker import LanePicker
from tcgemm.widgets.regbank_stepper import RegbankStepper

__all__ = ["BankExplorer", "LanePicker", "RegbankStepper"]
