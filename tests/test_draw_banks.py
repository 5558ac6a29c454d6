"""Bank-map pictures: the colours and labels are the bank groups tcgemm.smem.banks computes."""
import numpy as np
import pytest
from matplotlib.patches import Rectangle

from tcgemm import layouts
from tcgemm.smem import banks, draw_banks


def test_chunk_addresses_and_groups_of_a_row_major_tile():
    addresses = draw_banks.chunk_addresses(layouts.row_major(32, 2), rows=4, chunks=4)
    assert addresses[1, 2] == 64 + 32
    assert draw_banks.bank_group(addresses).tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]] * 2


def test_xor_layout_gives_each_chunk_column_all_groups_over_eight_rows():
    groups = draw_banks.bank_group(draw_banks.chunk_addresses(layouts.xor_permuted(), 8, 4))
    assert all(sorted(groups[:, c]) == list(range(8)) for c in range(4))


def test_misaligned_chunks_are_refused():
    with pytest.raises(ValueError, match="16-byte aligned"):
        draw_banks.chunk_addresses(layouts.padded(32, 2, 4), 4, 4)


def test_phase_cells_are_the_rows_ldmatrix_reads():
    layout = layouts.row_major(32, 2)
    addresses = draw_banks.chunk_addresses(layout, 16, 4)
    access = banks.ldmatrix_tile(layout, num=4)
    assert draw_banks.phase_cells(access, addresses, 0) == [(r, 0) for r in range(8)]
    assert draw_banks.phase_cells(access, addresses, 3) == [(r, 1) for r in range(8, 16)]
    with pytest.raises(ValueError, match="outside the drawn tile"):
        draw_banks.phase_cells(access, draw_banks.chunk_addresses(layout, 4, 4), 0)


def _texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_bank_map_titles_carry_the_phase_wavefronts():
    plain, permuted = layouts.row_major(32, 2), layouts.xor_permuted()
    fig = draw_banks.bank_map_figure({"plain": (plain, banks.ldmatrix_tile(plain)),
                                      "xor": (permuted, banks.ldmatrix_tile(permuted))})
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["plain\nphase 0: 4 wavefronts", "xor\nphase 0: 1 wavefront"]
    plain_labels = [t.get_text() for t in fig.axes[0].texts]
    assert [plain_labels[4 * r] for r in range(16)] == ["0-3", "16-19"] * 8   # chunk 0 of rows 0..15
    outlines = [p for p in fig.axes[0].patches if isinstance(p, Rectangle) and not p.get_fill()]
    assert len(outlines) == 8


def test_bank_map_numbers_the_phases_as_the_explorer_does():
    from tcgemm.smem import bank_cases
    plain = layouts.row_major(32, 2)
    fig = draw_banks.bank_map_figure({"plain": (plain, banks.ldmatrix_tile(plain))}, phase=3)
    assert fig.axes[0].get_title() == "plain\nphase 3: 4 wavefronts"
    assert bank_cases.phase_label(bank_cases.settings(layout="row-major"), 3).startswith("phase 3 (")


def test_permutation_figure_names_every_chunk_once():
    fig = draw_banks.permutation_figure(layouts.xor_permuted(), rows=16)
    held = [t for t in fig.axes[0].texts if "," in t.get_text()]
    assert sorted(t.get_text() for t in held) == sorted(f"{r},{c}" for r in range(16) for c in range(4))
    slot_of = {t.get_text(): int(t.get_position()[0]) for t in held}
    assert slot_of["2,1"] == 0 and slot_of["2,0"] == 1   # line 1: chunk ^ 1
