"""The WMMA fragment maps as data (tcgemm.fragments.wmma), the verdicts that read a probe, and the
probe's recorded observation (tests/data/wmma_fragments_*.json, written by tcgemm.fragments.gpu.wmma.report on a
GPU) checked against them without a GPU."""
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tcgemm.engine.catalog import PROBES
from tcgemm import fragment_layouts
from tcgemm.fragments import wmma

DATA = Path(__file__).resolve().parent / "data"
RECORDINGS = sorted(DATA.glob("wmma_fragments_*.json"))


def test_every_kind_has_its_probe_kernel():
    assert sorted(map(wmma.probe_entry, wmma.WMMA_KINDS)) == sorted(PROBES["wmma"].entries)
    with pytest.raises(ValueError, match="unknown WMMA fragment kind 'f16 matrix_c'"):
        wmma.probe_entry("f16 matrix_c")


@pytest.mark.parametrize("kind", list(wmma.WMMA_KINDS))
def test_the_mma_pair_covers_the_tile_once(kind):
    pair = wmma.mma_pair(kind)
    assert pair.shape == (16, 16) and pair.elements_per_lane == 8
    lane, element = pair.inverse()          # raises unless every entry is held exactly once
    assert lane.shape == (16, 16)


def test_the_pair_is_two_m16n8k16_fragments_side_by_side():
    b = fragment_layouts.mma_layout("m16n8k16", "B", "f16", "f32")
    pair = wmma.mma_pair("f16 matrix_b col_major")
    assert np.array_equal(pair.row[:, :4], b.row) and np.array_equal(pair.col[:, :4], b.col)
    assert np.array_equal(pair.row[:, 4:], b.row) and np.array_equal(pair.col[:, 4:], b.col + 8)
    c = fragment_layouts.mma_layout("m16n8k16", "C", "f16", "f32")
    acc = wmma.mma_pair("s32 accumulator")
    assert np.array_equal(acc.col[:, 4:], c.col + 8) and acc.elements_per_register == 1
    a = wmma.mma_pair("f16 matrix_a row_major")
    assert fragment_layouts.same_positions(a, fragment_layouts.mma_layout("m16n8k16", "A", "f16", "f32"))


def test_int8_pair_is_the_k16_half_of_m16n8k32():
    """mma.m16n8k16.s8: lane l holds four adjacent k of row l/4 (and of row l/4 + 8) in each register."""
    a = wmma.mma_pair("s8 matrix_a row_major")
    assert a.elements_per_register == 4 and a.registers_per_lane == 2
    assert a.row[5].tolist() == [1, 1, 1, 1, 9, 9, 9, 9] and a.col[5].tolist() == [4, 5, 6, 7] * 2
    b = wmma.mma_pair("s8 matrix_b col_major")
    assert b.row[5].tolist() == [4, 5, 6, 7] * 2 and b.col[5].tolist() == [1] * 4 + [9] * 4


def test_fp16_operands_are_expected_twice_accumulators_and_int8_once():
    for kind in wmma.WMMA_KINDS:
        e = wmma.expected(kind)
        twice = kind.startswith("f16")
        assert e.elements_per_lane == (16 if twice else 8), kind
        assert set(wmma.copies_held(e).ravel()) == {2 if twice else 1}, kind
        assert fragment_layouts.same_positions(wmma.first_copy(e), wmma.mma_pair(kind)), kind


def test_verdicts_tell_equal_reordered_and_different_apart():
    kind = "f32 accumulator"
    pair = wmma.mma_pair(kind)
    same = wmma.WmmaVerdict(kind, wmma.observed_layout(kind, pair.row, pair.col))
    assert same.matches_expected and same.against_mma == "equal" and same.copies == "1"
    order = [1, 0, 2, 3, 4, 5, 6, 7]
    reordered = wmma.WmmaVerdict(kind, wmma.observed_layout(kind, pair.row[:, order], pair.col[:, order]))
    assert not reordered.matches_expected and reordered.against_mma == "same entries, other order"
    lanes = list(range(32))
    lanes[0], lanes[4] = 4, 0
    moved = wmma.WmmaVerdict(kind, wmma.observed_layout(kind, pair.row[lanes], pair.col[lanes]))
    assert moved.against_mma == "different" and not moved.matches_expected


def test_verdicts_of_a_doubled_fragment():
    kind = "f16 matrix_a col_major"
    e = wmma.expected(kind)
    v = wmma.WmmaVerdict(kind, e)
    assert v.matches_expected and v.copies == "2" and v.against_mma == "equal in x[0:8]"
    uneven = replace(e, row=np.hstack([e.row[:, :8], np.zeros((32, 8), dtype=int)]))
    assert wmma.WmmaVerdict(kind, uneven).copies == "uneven"
    with pytest.raises(ValueError, match="not a bijection"):
        wmma.first_copy(replace(e, row=np.zeros((32, 16), dtype=int)))


def test_verdict_table_has_a_row_per_kind():
    table = wmma.verdict_table([wmma.WmmaVerdict(k, wmma.expected(k)) for k in wmma.WMMA_KINDS])
    assert [c.name for c in table.columns] == ["Fragment", "x[i] per lane", "Copies", "vs m16n8k16", "Expected"]
    assert table.rows[0] == ("f16 matrix_a row_major", 16, "2", "equal in x[0:8]", "MATCH")
    assert table.rows[4] == ("f32 accumulator", 8, "1", "equal", "MATCH")


def test_observed_tags_must_be_lane_by_element():
    with pytest.raises(ValueError, match=r"tags must both be \(32, num_elements\)"):
        wmma.observed_layout("s32 accumulator", np.zeros((32, 8)), np.zeros((16, 8)))


def test_a_probe_observation_is_recorded():
    assert RECORDINGS, ("no recorded WMMA probe observation: run tcgemm.fragments.gpu.wmma.report('tests/data') on a "
                        "GPU; it writes tests/data/wmma_fragments_<gpu>.json")


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_recorded_observation_is_two_m16n8k16_per_step(path):
    """What the book states about the map, on the GPU that recorded it: every kind is the expected map,
    i.e. the m16n8k16 fragments of the two mma of a step (fp16 operands: twice over)."""
    recorded = json.loads(path.read_text())
    assert set(recorded["kinds"]) == set(wmma.WMMA_KINDS)
    for kind, tags in recorded["kinds"].items():
        v = wmma.WmmaVerdict(kind, wmma.observed_layout(kind, tags["row"], tags["col"]))
        assert v.matches_expected, f"{recorded['device']}: {kind} is {v.against_mma} against two m16n8k16"


def test_cases_table_marks_mma_orders_and_compile_flags():
    rows = {row[0]: row for row in wmma.cases_table().rows}
    assert rows["D = α·A·B^T + β·C"][1:] == ("row-major", "column-major", "row_major", "col_major",
                                               "-DA_COL_MAJOR=0 -DB_COL_MAJOR=1", "yes")
    assert rows["D = α·A^T·B + β·C"][-2:] == ("-DA_COL_MAJOR=1 -DB_COL_MAJOR=0", "no")
    assert [row[-1] for row in rows.values()].count("yes") == 1
