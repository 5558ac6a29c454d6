"""SGEMM pictures: labels, colours and outlines read back from the figures match tcgemm.sgemm.sgemm_layout."""
import numpy as np
import pytest
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure

from tcgemm.sgemm import draw_sgemm
from tcgemm.sgemm import sgemm_layout as sg
from tcgemm.style import GROUP_HUES, MUTED_FACE


def axes(fig, label):
    (ax,) = [a for a in fig.axes if a.get_label() == label]
    return ax


def labels_at(ax, gid):
    """(x, y) of the text's centre -> text, for the texts with ``gid``."""
    return {tuple(np.round(t.get_position(), 3)): t.get_text() for t in ax.texts if t.get_gid() == gid}


def patches(ax, gid):
    return [p for p in ax.patches if p.get_gid() == gid]


def corners(ax, gid="highlight"):
    """Cell corners (x, y) of the outlines, undoing their inset."""
    return sorted((int(np.floor(p.get_x())), int(np.floor(p.get_y()))) for p in patches(ax, gid))


def face(patch):
    return tuple(np.round(patch.get_facecolor()[:3], 6))


@pytest.mark.parametrize("tile", [64, 128])
def test_layout_blocks_are_labelled_with_their_owner(tile):
    fig = draw_sgemm.thread_layout_figure(tile)
    assert isinstance(fig, Figure)
    labels = labels_at(axes(fig, "C tile"), "block-label")
    assert len(labels) == (tile // 4) ** 2
    owner = sg.owner_map(tile)
    assert all(text == str(owner[int(y), int(x)]) for (x, y), text in labels.items())
    assert labels[(2.0, 2.0)] == "0"
    assert labels[(6.0, 2.0)] == "1" and labels[(2.0, 6.0)] == "2"


def test_64_layout_outlines_thread_0_at_its_four_blocks():
    fig = draw_sgemm.thread_layout_figure(64)
    assert corners(axes(fig, "C tile")) == [(0, 0), (0, 32), (32, 0), (32, 32)]
    assert corners(axes(fig, "A column")) == [(0, 0), (0, 32)]
    assert corners(axes(fig, "B row")) == [(0, 0), (32, 0)]


def test_layout_outlines_follow_the_chosen_thread():
    fig = draw_sgemm.thread_layout_figure(128, highlight_tid=33)   # warp 1: rows 0-3, cols 20-23
    assert corners(axes(fig, "C tile")) == [(20, 0), (20, 64), (84, 0), (84, 64)]


def test_layout_colours_are_the_warp_hue_lighter_outside_the_first_quadrant():
    ax = axes(draw_sgemm.thread_layout_figure(64), "C tile")
    faces = {(int(p.get_x()), int(p.get_y())): face(p) for p in patches(ax, "block")}
    orange, blue = to_rgb(GROUP_HUES[0]), to_rgb(GROUP_HUES[1])
    assert faces[(0, 0)] == pytest.approx(orange)
    assert faces[(16, 0)] == pytest.approx(blue)            # thread 32, warp 1
    assert faces[(32, 0)] == pytest.approx(draw_sgemm.lighter(orange))
    assert faces[(16, 32)] == pytest.approx(draw_sgemm.lighter(blue))
    assert faces[(32, 0)] != faces[(0, 0)]


def test_layout_vectors_colour_only_the_floats_thread_0_reads():
    fig = draw_sgemm.thread_layout_figure(64)
    for label, position in (("A column", 1), ("B row", 0)):
        floats = patches(axes(fig, label), "float")
        assert len(floats) == 64
        coloured = sorted(int(p.get_xy()[position]) for p in floats if face(p) != MUTED_FACE)
        assert coloured == [0, 1, 2, 3, 32, 33, 34, 35]
    assert sorted(labels_at(axes(fig, "A column"), "float-label").values()) == ["0-3", "32-35"]


@pytest.mark.parametrize("tile", [64, 128])
def test_load_pattern_labels_each_float4_with_its_loader(tile):
    fig = draw_sgemm.load_pattern_figure(tile)
    loader = {(load.matrix, load.k, load.col4): (tid, j)
              for tid, loads in enumerate(sg.load_map(tile)) for j, load in enumerate(loads)}
    for matrix in "AB":
        ax = axes(fig, f"{matrix}s")
        labels = labels_at(ax, "load-label")
        assert len(labels) == sg.BK * tile // 4
        assert all(text == str(loader[(matrix, int(y), int(x))][0]) for (x, y), text in labels.items())
        for p in patches(ax, "load"):
            j = loader[(matrix, int(p.get_y()), int(p.get_x()))][1]
            assert face(p) == pytest.approx(to_rgb(GROUP_HUES[j]))


def test_64_load_pattern_outlines_thread_0_and_the_first_b_loader():
    fig = draw_sgemm.load_pattern_figure(64)
    labels = labels_at(axes(fig, "As"), "load-label")
    assert [labels[(0.5, k + 0.5)] for k in range(4)] == ["0", "16", "0", "16"]
    assert labels_at(axes(fig, "Bs"), "load-label")[(0.5, 0.5)] == "32"
    assert corners(axes(fig, "As")) == [(0, k) for k in (0, 2, 4, 6)]
    assert corners(axes(fig, "Bs")) == [(0, k) for k in (0, 2, 4, 6)]
    only_b = draw_sgemm.load_pattern_figure(64, highlight_tids=[33])
    assert corners(axes(only_b, "As")) == []
    assert corners(axes(only_b, "Bs")) == [(1, k) for k in (0, 2, 4, 6)]


@pytest.mark.parametrize("tile, p", [(64, 0), (64, 3), (128, 1)])
def test_writeback_stage_cells_name_their_writer_and_rows_their_c_row(tile, p):
    fig = draw_sgemm.writeback_figure(tile, p)
    stage = labels_at(axes(fig, "stage"), "stage-label")
    writer = {(c.stage_row, c.col4): tid for tid, cells in enumerate(sg.stage_writes(tile, p)) for c in cells}
    assert len(stage) == (tile // 4) ** 2
    assert all(text == str(writer[(int(y), int(x))]) for (x, y), text in stage.items())
    assert len(patches(axes(fig, "stage"), "pad")) == tile // 4
    c_rows = sorted(labels_at(axes(fig, "stores"), "c-row").items(), key=lambda item: item[0][1])
    assert [text for _, text in c_rows] == [f"→ C row {sg.stage_c_row(tile, p, s)}" for s in range(tile // 4)]


def test_64_writeback_warps_store_two_stage_rows_per_instruction():
    fig = draw_sgemm.writeback_figure(64, p=2)
    stores = labels_at(axes(fig, "stores"), "store-label")
    assert [stores[(0.5, s + 0.5)] for s in (0, 1, 2, 3, 4, 15)] == \
           ["warp 0, j 0", "warp 0, j 0", "warp 1, j 0", "warp 1, j 0", "warp 0, j 1", "warp 1, j 3"]
    c_rows = labels_at(axes(fig, "stores"), "c-row")
    assert c_rows[(1.08, 0.5)] == "→ C row 2" and c_rows[(1.08, 8.5)] == "→ C row 34"
    assert corners(axes(fig, "stage")) == [(0, 0), (0, 8), (8, 0), (8, 8)]
    assert "1 wavefront per 8-lane phase" in fig.get_suptitle()
    assert "4 without" in fig.get_suptitle()


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="tile must be"):
        draw_sgemm.thread_layout_figure(32)
    with pytest.raises(ValueError, match="tid must be"):
        draw_sgemm.load_pattern_figure(64, highlight_tids=[64])
    with pytest.raises(ValueError, match="pass p must be"):
        draw_sgemm.writeback_figure(64, p=4)
