"""The register-bank stepper's Python side: the data it sends is tcgemm.sgemm.regbank's simulation."""
import itertools

import pytest
import traitlets
from matplotlib.colors import to_rgb

from tcgemm.sgemm import regbank
from tcgemm.style import GROUP_HUES, text_color_on
from tcgemm.widgets import RegbankStepper
from tcgemm.widgets.regbank_stepper import CHOICES, all_cases, bank_palette, case_key

CASES = all_cases()


def test_every_case_is_sent():
    combos = list(itertools.product(regbank.NUMBERINGS, regbank.ORDERS, regbank.REGISTER_FILES,
                                    regbank.REUSE_SETTINGS))
    assert sorted(CASES) == sorted(case_key(*names) for names in combos) and len(CASES) == 54


@pytest.mark.parametrize("key", sorted(CASES))
def test_case_data_is_the_simulation(key):
    numbering, order, register_file, reuse = key.split("|")
    slots, depth = regbank.REUSE_SETTINGS[reuse]
    steps = regbank.simulate_case(numbering, order, register_file, slots, depth)
    data = CASES[key]
    assert list(zip(data["i"], data["j"])) == [s.instruction.cell for s in steps]
    assert data["registers"] == [[r for _, r in s.sources] for s in steps]
    assert data["banks"] == [list(s.banks) for s in steps]
    assert data["hits"] == ["".join(s.hits) for s in steps]
    assert data["extra"] == [s.extra_cycles for s in steps]
    assert data["totals"] == regbank.summarize(steps).as_dict()


def test_report_follows_the_settings():
    w = RegbankStepper()
    assert w.report().conflicts == 2          # conflict-free numbering, row by row, reuse a
    w.order = "back and forth"
    assert w.report().conflicts == 0
    w.numbering, w.reuse = "naive", "none"
    assert w.report() == regbank.score_case("naive", "back and forth", "Maxwell/Pascal", (), 0)
    assert CASES[w.key()]["totals"]["conflicts"] == 64


@pytest.mark.parametrize("name, value", [("numbering", "clever"), ("order", "zigzag"),
                                         ("register_file", "Fermi"), ("reuse", "c, depth 3"),
                                         ("step", 0), ("step", 65)])
def test_bad_settings_are_refused(name, value):
    with pytest.raises(traitlets.TraitError):
        setattr(RegbankStepper(), name, value)


def test_every_choice_is_accepted():
    w = RegbankStepper()
    for name, values in CHOICES.items():
        for value in values:
            setattr(w, name, value)
            assert getattr(w, name) == value and w.key() in CASES
    w.step = 64
    assert w.step == 64


def test_palette_is_the_drawings_bank_colours():
    assert [p["face"] for p in bank_palette()] == list(GROUP_HUES[:4])
    assert bank_palette()[1]["ink"] == "#ffffff" == "#%02x%02x%02x" % tuple(
        int(255 * v) for v in text_color_on(to_rgb(GROUP_HUES[1])))


def test_module_has_one_default_export_and_the_root_classes():
    esm = RegbankStepper._esm
    assert esm.count("export default") == 1 and "function element(" in esm
    assert '"tcgemm-widget tcgemm-regbank-stepper"' in esm
    assert ".tcgemm-widget {" in RegbankStepper._css and ".tcgemm-regbank-grid" in RegbankStepper._css
