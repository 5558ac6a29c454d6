"""Register-bank pictures: labels, colours and outlines are what tcgemm.sgemm.regbank computes."""
import numpy as np
import pytest
from matplotlib.colors import to_rgb

from tcgemm.sgemm import draw_regbank, regbank
from tcgemm.style import GROUP_HUES
from tcgemm.sgemm.regbank import MAXWELL, conflict_free_numbering, naive_numbering

OFFSET = 1 + draw_regbank.GAP


def _by_gid(fig, gid, kind="texts"):
    return [artist for ax in fig.axes for artist in getattr(ax, kind) if artist.get_gid() == gid]


def _outlined_cells(fig, offset=0.0):
    return sorted((round(p.get_y() - 0.07 - offset), round(p.get_x() - 0.07 - offset))
                  for p in _by_gid(fig, "conflict", "patches"))


def test_numbering_figure_labels_and_colours_every_register_by_bank():
    n = conflict_free_numbering()
    fig = draw_regbank.numbering_figure(n)
    labels = [t.get_text() for t in _by_gid(fig, "register-label")]
    assert sorted(labels[16:]) == sorted(f"R{r}" for r in range(64))
    assert labels[:2] == ["a0\nR64", "a1\nR65"] and labels[8] == "b0\nR72"
    faces = {t.get_text(): p.get_facecolor()[:3] for t, p in zip(_by_gid(fig, "register-label"),
                                                                   _by_gid(fig, "register", "patches"))}
    assert faces["R5"] == to_rgb(GROUP_HUES[1]) and faces["a2\nR66"] == to_rgb(GROUP_HUES[2])


def test_numbering_figure_without_order_outlines_the_no_reuse_conflicts():
    fig = draw_regbank.numbering_figure(naive_numbering())
    assert len(_by_gid(fig, "conflict", "patches")) == 64
    assert "64 of 64 FFMAs conflict" in fig.get_suptitle()
    fig = draw_regbank.numbering_figure(conflict_free_numbering())
    assert _outlined_cells(fig, OFFSET) == regbank.unavoidable_conflicts(conflict_free_numbering(), MAXWELL)


def test_numbering_figure_with_order_and_reuse_outlines_the_row_starts():
    fig = draw_regbank.numbering_figure(conflict_free_numbering(), order="row by row",
                                        reuse_slots=("a",), reuse_depth=1)
    assert _outlined_cells(fig, OFFSET) == [(0, 0), (4, 0)]
    assert "2 of 64 FFMAs conflict, 2 extra cycles" in fig.get_suptitle()


def test_order_figure_numbers_the_steps_and_draws_the_path():
    order = regbank.maxas_swirl()
    fig = draw_regbank.order_figure("Maxas swirl")
    steps = {(round(t.get_position()[1] - 0.4), round(t.get_position()[0] - 0.5)): int(t.get_text())
             for t in _by_gid(fig, "step-label")}
    assert [steps[cell] for cell in order] == list(range(1, 65))
    (path,) = _by_gid(fig, "path", "lines")
    assert np.array_equal(path.get_xydata(), [(j + 0.5, i + 0.5) for i, j in order])
    assert _by_gid(fig, "conflict", "patches") == []          # no numbering, no conflicts drawn
    assert "94 of 128 a/b reads from the reuse cache" in fig.get_suptitle()


def test_order_figure_marks_reuse_hits_and_conflicts_from_the_model():
    fig = draw_regbank.order_figure("row by row", naive_numbering(), reuse_slots=("a",), reuse_depth=1)
    assert len(_by_gid(fig, "hit-label")) == 56
    assert len(_by_gid(fig, "conflict", "patches")) == 64
    custom = draw_regbank.order_figure(regbank.back_and_forth(), conflict_free_numbering(),
                                       reuse_slots=("a",), reuse_depth=1)
    assert custom.get_suptitle().startswith("custom order")
    assert _by_gid(custom, "conflict", "patches") == []


def test_figures_refuse_bad_orders():
    with pytest.raises(ValueError, match="unknown order"):
        draw_regbank.order_figure("spiral")
    with pytest.raises(ValueError, match="misses"):
        draw_regbank.numbering_figure(naive_numbering(), order=regbank.row_by_row()[:10])
