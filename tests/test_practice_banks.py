"""The bank chapter's exercises (tcgemm.practice.banks): the book's solutions pass, typical wrong answers fail
with their own hint, and the layout exercise, scored by the bank model, names the first phase with a conflict
or the first two elements that collide. Their hardware truths (tcgemm.practice.gpu.banks) without a GPU: the
keys, the addresses checked before a launch, and the reading of timings, on a stand-in for the GPU."""
import numpy as np
import pytest

from tcgemm.practice import check, exercise, exercises
from tcgemm.practice.banks import CHAPTER, EXERCISES, PhaseScore

KEYS = [e.key for e in EXERCISES]
LAYOUT = "banks.conflict_free_layout"


def test_the_models_give_the_chapters_numbers():
    wavefronts = exercise("banks.ldmatrix_wavefronts").model
    assert wavefronts(32, 0) == 16 and wavefronts(32, 16) == 4      # row-major 4-way, padded by 16 B clean
    model = exercise(LAYOUT).model
    cases = list(exercise(LAYOUT).cases())
    assert len(cases) == 129
    assert all(model(*args) == PhaseScore(1) for args, _ in cases[1:])


def test_any_conflict_free_permutation_passes():
    assert check(LAYOUT, lambda r, c: 128 * r + 16 * ((c // 8) ^ (7 - r % 8)) + 2 * (c % 8)).passed
    assert check(LAYOUT, lambda r, c: (r * 128 + 2 * c) ^ ((r % 8) << 4)).passed       # Swizzle<3,4,3> on bytes


def test_the_layout_report_names_the_first_conflict_or_collision():
    chunk_major = check(LAYOUT, lambda r, c: 16 * (64 * (c // 8) + r) + 2 * (c % 8))
    assert chunk_major.text.splitlines()[1] == ("  16-byte stores of rows 0-3, phase 0 (row 0): expected 1 wavefront, "
                                                 "got 8 wavefronts (bank groups 0 0 0 0 0 0 0 0)")
    assert chunk_major.wrong == 64 and not chunk_major.hint
    folded = check(LAYOUT, lambda r, c: 2 * c + 128 * (r % 32))
    assert str(folded.first[0]) == ("the layout of the 64 x 64 tile: expected every 16-byte chunk whole, aligned, "
                                    "in its own slot of the 8 KiB, got elements (0, 0) and (32, 0) both at byte 0")


def test_a_layout_that_is_not_a_byte_offset_is_refused_with_its_element():
    assert "offset(0, 1) is -2, not a byte offset" in check(LAYOUT, lambda r, c: 128 * r - 2 * c).text
    assert "offset(0, 1) is 1.5" in check(LAYOUT, lambda r, c: 1.5 * c).text
    raised = check(LAYOUT, lambda r, c: 128 * r + 2 * c + 0 // (r - 5))
    assert "offset(5, 0) raised ZeroDivisionError" in raised.text and raised.error
    assert "must be a function" in check(LAYOUT, 0).text


def test_a_report_names_the_first_wrong_element():
    report = check("banks.xor_bank", lambda row, col: (row * 64 + col * 2) // 4 % 32)
    assert str(report.first[0]) == "element (2, 0): expected 4, got 0"


def test_the_chapter_has_its_exercises():
    assert [e.key for e in exercises(CHAPTER)] == KEYS and len(KEYS) >= 3


def test_the_hardware_checks_are_this_chapters_exercises():
    """tcgemm.practice.gpu.banks imports without a GPU; its truths are three of the chapter's exercises (the layout
    exercise has no truth per case for a GPU to give)."""
    from tcgemm.practice.gpu.banks import TRUTHS
    assert list(TRUTHS) == ["banks.padded_bank", "banks.xor_bank", "banks.ldmatrix_wavefronts"]
    assert all(exercise(key).chapter == CHAPTER and key in KEYS for key in TRUTHS)


def test_the_timed_ldmatrix_reads_the_models_row_addresses():
    from tcgemm import layouts
    from tcgemm.practice.gpu.banks import checked_offsets, ldmatrix_x4_offsets
    from tcgemm.smem import banks

    for (row_elems, pad), _ in exercise("banks.ldmatrix_wavefronts").cases():
        offsets = ldmatrix_x4_offsets(row_elems, pad)
        model = banks.ldmatrix_tile(layouts.padded(row_elems, 2, pad), 0, 0, num=4).addresses
        assert offsets.tolist() == list(model), (row_elems, pad)
        assert checked_offsets("ldmatrix_x4", [offsets]).shape == (1, 32)


def test_no_address_reaches_the_gpu_unchecked():
    from tcgemm.practice.gpu.banks import TILE_BYTES, checked_offsets

    lanes = 4 * np.arange(32)
    assert checked_offsets("lds32", [lanes, lanes + 4]).dtype == np.int32
    with pytest.raises(ValueError, match=f"experiment 1, lane 31: byte offset {TILE_BYTES} is not a 4-byte"):
        checked_offsets("lds32", [lanes, lanes + TILE_BYTES - 124])
    with pytest.raises(ValueError, match="experiment 0, lane 1: byte offset 4 is not a 16-byte aligned"):
        checked_offsets("ldmatrix_x4", [lanes])
    with pytest.raises(ValueError, match="lane 0: byte offset -4"):
        checked_offsets("lds32", [lanes - 4])
    with pytest.raises(ValueError, match="one row of 32 per experiment"):
        checked_offsets("lds32", [lanes[:16]])
    with pytest.raises(ValueError, match="one row of 32 per experiment"):
        checked_offsets("lds32", [lanes * 1.0])
    with pytest.raises(ValueError, match="kind must be one of lds32, ldmatrix_x4"):
        checked_offsets("stmatrix", [lanes])


def _timer(per_instruction: int = 0, seed: int = 0):
    """A stand-in for the GPU's access_cost: each access's wavefronts, a cycle each, for a block's accesses, with 1%
    noise, and at least `per_instruction` cycles an access (an issue limit). LDS.32 wavefronts are counted here
    (the most distinct words one bank serves), ldmatrix.x4's by the bank model."""
    from tcgemm.practice.gpu import banks as gpu_banks
    from tcgemm.smem import banks

    rng = np.random.default_rng(seed)

    def lds32_wavefronts(table):
        words = np.sort(table // 4 % 32 * 2**20 + table // 4, axis=1)         # by bank, then word
        new = np.ones(words.shape, bool)
        new[:, 1:] = words[:, 1:] != words[:, :-1]
        per_bank = np.zeros((len(table), 32), int)
        np.add.at(per_bank, (np.repeat(np.arange(len(table)), 32), (words // 2**20).ravel()), new.ravel())
        return per_bank.max(axis=1)

    def access_cost(kind, offsets):
        table = gpu_banks.checked_offsets(kind, offsets)
        wavefronts = lds32_wavefronts(table) if kind == "lds32" else \
            np.array([banks.analyze(banks.Access(row, 16, "ldmatrix", 4)).wavefronts for row in table])
        cycles = np.maximum(wavefronts, per_instruction) * gpu_banks.WARPS * gpu_banks.UNROLL
        return cycles * rng.uniform(0.99, 1.01, len(table))
    return access_cost


@pytest.fixture
def timed(monkeypatch):
    """tcgemm.practice.gpu.banks with a stand-in for the GPU (see _timer), its caches emptied before and after."""
    from tcgemm.practice.gpu import banks as gpu_banks

    class Device:
        name = "stand-in GPU"

    monkeypatch.setattr(gpu_banks, "device_info", lambda: Device)
    for cached in (gpu_banks.word_banks, gpu_banks._measured_wavefronts):
        cached.cache_clear()
    yield gpu_banks
    for cached in (gpu_banks.word_banks, gpu_banks._measured_wavefronts):
        cached.cache_clear()


def test_the_truths_read_banks_and_wavefronts_from_the_timings(timed, monkeypatch):
    """Timings as the bank model would make them, with noise: every solution agrees with the truth read from them,
    and a typical mistake does not."""
    monkeypatch.setattr(timed, "access_cost", _timer())
    for key, hardware in timed.TRUTHS.items():
        truth, against = hardware()
        assert against.startswith("the stand-in GPU's timings")
        e = exercise(key)
        assert e.check(e.solution, truth=truth, against=against).passed, key
        assert not e.check(e.hints[0][0], truth=truth, against=against).passed, key


def test_timings_that_do_not_resolve_conflicts_give_no_answer(timed, monkeypatch):
    """A GPU on which every access took at least 2 cycles would hide a 2-way conflict: the calibration says so."""
    monkeypatch.setattr(timed, "access_cost", _timer(per_instruction=2))
    with pytest.raises(RuntimeError, match=r"do not resolve bank conflicts .*2-way conflict (0\.9|1\.0)"):
        timed.word_banks()
    monkeypatch.setattr(timed, "access_cost", _timer(per_instruction=6))
    with pytest.raises(RuntimeError, match=r"a contiguous ldmatrix.x4 costs (0\.9\d|1\.0\d) broadcast loads"):
        timed.ldmatrix_wavefronts()


def test_a_layout_not_written_yet_is_named_so():
    report = check(LAYOUT, lambda row, col: None)
    assert report.error == "not answered yet: the function returns None on every case" and not report.hint
