"""The widgets' Python side: settings, the report, and the lane picker's data (from tcgemm.fragment_layouts)."""
import numpy as np
import pytest
import traitlets

from tcgemm.smem import bank_cases, bank_puzzles, banks
from tcgemm import fragment_layouts, layouts
from tcgemm.widgets import BankExplorer, LanePicker
from tcgemm.widgets.lane_picker import all_cases, case


def test_explorer_report_is_the_bank_model():
    w = BankExplorer()
    assert w.report().conflicts == banks.analyze(banks.ldmatrix_tile(layouts.row_major(32, 2))).conflicts == 12
    w.smem_layout = "xor"
    assert w.report().conflicts == 0
    assert BankExplorer(layout="xor").settings()["layout"] == "xor"


def test_explorer_leaves_ipywidgets_layout_alone():
    import ipywidgets
    assert isinstance(BankExplorer().layout, ipywidgets.Layout)


def test_explorer_refuses_unknown_settings():
    with pytest.raises(ValueError, match="unknown explorer settings"):
        BankExplorer(colour="red")


def test_explorer_module_holds_the_js_bank_model_and_the_view():
    esm = BankExplorer._esm
    assert "export function analyze" in esm and "export default { render }" in esm
    assert esm.count("export default") == 1


def test_explorer_offers_every_case_of_the_catalogue():
    catalog = BankExplorer().catalog
    assert (catalog["accesses"], catalog["layouts"], catalog["presets"]) == (
        bank_cases.ACCESSES, bank_cases.LAYOUTS, bank_cases.PRESETS)
    assert set(catalog["layout_settings"]) == set(bank_cases.LAYOUTS)
    assert {p[k] for p in bank_cases.PRESETS.values() for k in ("kernel", "source") if p[k]} == set(catalog["kernels"])
    assert BankExplorer(layout="cute").report().conflicts == 0


def test_explorer_offers_the_puzzles_and_judges_the_one_shown():
    assert BankExplorer().catalog["puzzles"] == bank_puzzles.PUZZLES
    w = BankExplorer(puzzle="pad-a")
    assert w.puzzle == "pad-a" and w.settings() == bank_puzzles.start_settings("pad-a")
    assert not w.verdict() and "ldmatrix.x4 of A: 16 wavefronts where 4 would do" in w.verdict().problems[0]
    w.smem_layout, w.pad_bytes = "padded", 16
    assert w.verdict().solved
    assert BankExplorer(puzzle="pad-a", layout="xor").verdict().solved


def test_explorer_refuses_unknown_puzzles_and_a_verdict_without_one():
    with pytest.raises(ValueError, match="unknown puzzle"):
        BankExplorer(puzzle="nonesuch")
    w = BankExplorer()
    with pytest.raises(traitlets.TraitError, match="unknown puzzle"):
        w.puzzle = "nonesuch"
    with pytest.raises(ValueError, match="no puzzle is shown"):
        w.verdict()


def test_explorer_module_holds_the_puzzles_judge_and_panel():
    esm = BankExplorer._esm
    assert "export function puzzleSolved" in esm and "function puzzlePanel" in esm
    assert esm.index("function puzzlePanel") < esm.index("export default { render }")


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_lane_picker_data_is_the_ldmatrix_layout(num, trans):
    data = case(num, trans)
    layout = fragment_layouts.ldmatrix_layout(num, trans)
    for lane in range(32):
        got = np.array(data["received"][lane])
        assert got[:, 0].tolist() == [layout.register_of(e) for e in range(layout.elements_per_lane)]
        assert got[:, 2].tolist() == layout.row[lane].tolist()
        assert got[:, 3].tolist() == layout.col[lane].tolist()
    assert data["addressed"][:8 * num] == list(range(8 * num))
    assert data["addressed"][8 * num:] == [None] * (32 - 8 * num)


def test_lane_picker_sends_all_six_variants_and_validates():
    assert sorted(all_cases()) == ["x1", "x1.trans", "x2", "x2.trans", "x4", "x4.trans"]
    w = LanePicker()
    with pytest.raises(traitlets.TraitError):
        w.num = 3
    with pytest.raises(traitlets.TraitError):
        w.lane = 32
