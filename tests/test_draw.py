import io

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from tcgemm.fragments.draw import (  # noqa: E402
    fragment_grid, lane_legend, ldmatrix_figure, mma_product_figure, product_splits_a,
)
from tcgemm.style import (  # noqa: E402
    COLUMN_WIDTH_IN, MIN_FONT_PT, MUTED_FACE, contrast_ratio, lane_color, relative_luminance,
)
from tcgemm.fragment_layouts import (  # noqa: E402
    MMA_VARIANTS,
    ldmatrix_address_lane,
    ldmatrix_instruction,
    ldmatrix_layout,
    mma_layout,
    ptx_instruction,
)

TYPE_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "e4m3": 8, "e5m2": 8, "f32": 32, "s32": 32}
ALL_MMA = [(key, op) for key in MMA_VARIANTS for op in ("A", "B", "C", "D")]


def cell_texts(ax):
    return [t for t in ax.texts if t.get_gid() == "cell-label"]


def cell_faces(ax):
    """(row, col) -> facecolor RGB of every cell patch."""
    faces = {}
    for patch in ax.patches:
        if patch.get_gid() == "cell":
            x, y = patch.get_xy()
            faces[(int(y), int(x))] = tuple(np.round(patch.get_facecolor()[:3], 6))
    return faces


def owners(layout):
    """(row, col) -> (lane, element), read straight off the layout tables."""
    return {
        (int(layout.row[lane, e]), int(layout.col[lane, e])): (lane, e)
        for lane in range(32)
        for e in range(layout.elements_per_lane)
    }


def expected_label_parts(operand, type_name, lane, element):
    per_register = 32 // TYPE_BITS[type_name]
    letter = {"A": "a", "B": "b", "C": "c", "D": "c"}[operand]
    return f"T{lane}", f"{letter}{element}", f"R{element // per_register}"


def layout_and_type(key, operand):
    shape, ab_type, acc_type = MMA_VARIANTS[key]
    type_name = acc_type if operand in ("C", "D") else ab_type
    return mma_layout(shape, operand, ab_type, acc_type), type_name


@pytest.mark.slow     # draws every operand of every variant
@pytest.mark.parametrize("key,operand", ALL_MMA)
def test_every_cell_has_one_label_naming_its_lane_element_register(key, operand):
    layout, type_name = layout_and_type(key, operand)
    fig = fragment_grid(layout)
    ax = fig.axes[0]
    texts = cell_texts(ax)
    assert len(texts) == layout.shape[0] * layout.shape[1]
    who = owners(layout)
    seen = set()
    for text in texts:
        x, y = text.get_position()
        cell = (int(y), int(x))
        seen.add(cell)
        lane, element = who[cell]
        lane_part, element_part, register_part = expected_label_parts(
            operand, type_name, lane, element)
        lines = text.get_text().split("\n")
        assert lines[0] == lane_part
        assert "".join(lines[1:]) in (f"{element_part}·{register_part}",
                                      f"{element_part}{register_part}")
    assert len(seen) == len(texts)


@pytest.mark.parametrize("num,trans", [(n, t) for n in (1, 2, 4) for t in (False, True)])
def test_ldmatrix_figure_labels_cells_and_row_addresses(num, trans):
    fig = ldmatrix_figure(num, trans)
    assert ldmatrix_instruction(num, trans) in fig._suptitle.get_text()
    ax = fig.axes[0]
    layout = ldmatrix_layout(num, trans)
    who = owners(layout)
    texts = cell_texts(ax)
    assert len(texts) == 8 * num * 8
    for text in texts:
        x, y = text.get_position()
        lane, element = who[(int(y), int(x))]
        half = "lo" if element % 2 == 0 else "hi"
        assert text.get_text() == f"T{lane}\nr{element // 2}.{half}"
    addresses = [t for t in ax.texts if t.get_gid() == "address-label"]
    assert len(addresses) == 8 * num
    lanes = ldmatrix_address_lane(num)
    for text in addresses:
        row = int(text.get_position()[1])
        assert f"T{lanes[row]} " in text.get_text()


def test_lane_colours_distinct_and_lightness_follows_lane_mod_4():
    colours = np.array([lane_color(lane) for lane in range(32)])
    distances = np.linalg.norm(colours[:, None] - colours[None], axis=-1)
    np.fill_diagonal(distances, np.inf)
    assert distances.min() > 0.1
    for group in range(8):
        luminances = [relative_luminance(lane_color(4 * group + t)) for t in range(4)]
        assert luminances == sorted(luminances) and len(set(luminances)) == 4
    with pytest.raises(ValueError):
        lane_color(32)


@pytest.mark.parametrize("key,operand", [("m16n8k16.f32", "A"), ("m16n8k32.s32", "B"),
                                         ("m16n8k8.f32", "C")])
def test_cells_coloured_by_lane_with_readable_text(key, operand):
    layout, _ = layout_and_type(key, operand)
    ax = fragment_grid(layout).axes[0]
    faces = cell_faces(ax)
    assert len(faces) == layout.shape[0] * layout.shape[1]
    colour_of_lane = {}
    for cell, (lane, _) in owners(layout).items():
        colour_of_lane.setdefault(lane, set()).add(faces[cell])
    assert all(len(colours) == 1 for colours in colour_of_lane.values())
    assert len({next(iter(c)) for c in colour_of_lane.values()}) == 32
    for text in cell_texts(ax):
        x, y = text.get_position()
        assert contrast_ratio(text.get_color(), faces[(int(y), int(x))]) >= 4.5


def test_highlight_greys_out_other_lanes():
    layout = mma_layout("m16n8k16", "A")
    ax = fragment_grid(layout, highlight_lanes=[5, 17]).axes[0]
    faces = cell_faces(ax)
    muted = tuple(np.round(MUTED_FACE, 6))
    for cell, (lane, _) in owners(layout).items():
        if lane in (5, 17):
            assert faces[cell] == tuple(np.round(lane_color(lane), 6))
        else:
            assert faces[cell] == muted
    assert sum(face != muted for face in faces.values()) == 2 * layout.elements_per_lane


def grid_axes(fig):
    """The axes drawing cells: (rows, first column, columns) of each."""
    found = {}
    for ax in fig.axes:
        if cell_texts(ax):
            (first, end), rows = ax.get_xlim(), int(ax.get_ylim()[0])
            found[ax] = (rows, int(first), int(end - first))
    return found


def all_fonts_at_least(fig, size):
    fig.savefig(io.BytesIO(), format="png", dpi=40)
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_text() and t.get_visible()]
    return min(sizes) >= size


def cell_inches(fig, ax, grid):
    """(width, height) in inches of one cell of a grid axes."""
    width, height = fig.get_size_inches()
    box = ax.get_position()
    return box.width * width / grid[2], box.height * height / grid[0]


@pytest.mark.slow     # draws and lays out the product figure of every variant
@pytest.mark.parametrize("key", MMA_VARIANTS)
def test_product_figure_fits_the_column_with_equal_cells(key):
    shape, ab_type, acc_type = MMA_VARIANTS[key]
    fig = mma_product_figure(shape, ab_type, acc_type)
    assert ptx_instruction(key) in fig._suptitle.get_text()
    assert fig.get_size_inches()[0] <= COLUMN_WIDTH_IN + 1e-9
    grids = grid_axes(fig)
    sizes = [cell_inches(fig, ax, grid) for ax, grid in grids.items()]
    assert all(size == pytest.approx(sizes[0]) for size in sizes)
    assert all_fonts_at_least(fig, MIN_FONT_PT)


@pytest.mark.parametrize("key", [k for k, (shape, *_) in MMA_VARIANTS.items() if not product_splits_a(shape)])
def test_product_figure_lines_up_a_b_and_c(key):
    shape, ab_type, acc_type = MMA_VARIANTS[key]
    fig = mma_product_figure(shape, ab_type, acc_type)
    m, n, k = 16, 8, int(shape.split("k")[1])
    grids = grid_axes(fig)
    assert len(grids) == 3
    ax_a = min(grids, key=lambda ax: ax.get_position().x0)
    ax_c, ax_b = sorted((ax for ax in grids if ax is not ax_a),
                        key=lambda ax: ax.get_position().y0)
    assert (grids[ax_a], grids[ax_b], grids[ax_c]) == ((m, 0, k), (k, 0, n), (m, 0, n))
    boxes = {name: ax.get_position() for name, ax in (("A", ax_a), ("B", ax_b), ("C", ax_c))}
    assert boxes["A"].y0 == pytest.approx(boxes["C"].y0)
    assert boxes["A"].y1 == pytest.approx(boxes["C"].y1)
    assert boxes["B"].x0 == pytest.approx(boxes["C"].x0)
    assert boxes["B"].x1 == pytest.approx(boxes["C"].x1)
    assert boxes["B"].y0 > boxes["C"].y1 and boxes["A"].x1 < boxes["C"].x0


def test_m16n8k32_product_splits_a_at_half_k_beside_b_and_keeps_every_cell():
    assert product_splits_a("m16n8k32") and not product_splits_a("m16n8k16")
    fig = mma_product_figure("m16n8k32", "s8", "s32")
    grids = grid_axes(fig)
    by_shape = {grid: ax for ax, grid in grids.items()}
    assert set(by_shape) == {(16, 0, 16), (16, 16, 16), (32, 0, 8), (16, 0, 8)}
    a_low, a_high = by_shape[(16, 0, 16)], by_shape[(16, 16, 16)]
    b, c = by_shape[(32, 0, 8)], by_shape[(16, 0, 8)]
    box = {name: ax.get_position() for name, ax in (("lo", a_low), ("hi", a_high), ("B", b), ("C", c))}
    assert box["lo"].y0 > box["hi"].y1 and box["lo"].x0 == pytest.approx(box["hi"].x0)
    assert box["lo"].y1 == pytest.approx(box["B"].y1) and box["B"].x0 > box["lo"].x1
    assert box["C"].y1 < box["B"].y0 and box["C"].x0 == pytest.approx(box["B"].x0)
    a = mma_layout("m16n8k32", "A", "s8", "s32")
    who = owners(a)
    for ax in (a_low, a_high):
        for text in cell_texts(ax):
            x, y = text.get_position()
            lane, element = who[(int(y), int(x))]
            assert text.get_text() == f"T{lane}\na{element}\nR{element // 4}"
    assert len(cell_texts(a_low)) + len(cell_texts(a_high)) == 16 * 32


def test_fragment_grid_draws_a_range_of_columns_labelled_by_their_index():
    layout = mma_layout("m16n8k32", "A", "s8", "s32")
    ax = fragment_grid(layout, columns=range(16, 32)).axes[0]
    assert ax.get_xlim() == (16, 32)
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(c) for c in range(16, 32)]
    assert {int(t.get_position()[0]) for t in cell_texts(ax)} == set(range(16, 32))
    with pytest.raises(ValueError, match="contiguous range"):
        fragment_grid(layout, columns=range(0, 40))


def test_figures_for_every_ldmatrix_form_and_legend_have_readable_fonts():
    for num in (1, 2, 4):
        for trans in (False, True):
            assert all_fonts_at_least(ldmatrix_figure(num, trans), 6)
    legend = lane_legend()
    labels = [t.get_text() for t in legend.axes[0].texts if t.get_gid() == "legend-label"]
    assert sorted(labels) == sorted(f"T{lane}" for lane in range(32))
    assert all_fonts_at_least(legend, 6)


def test_product_figure_defaults_and_bad_types():
    fig = mma_product_figure("m16n8k32")
    assert "s32.s8.s8.s32" in fig._suptitle.get_text()
    with pytest.raises(ValueError, match="s8"):
        mma_product_figure("m16n8k32", "f16")
