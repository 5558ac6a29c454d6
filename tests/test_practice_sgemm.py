"""The Maxas SGEMM chapter's exercises (tcgemm.practice.sgemm): the book's solutions pass, typical wrong
answers fail with their own hint and the first wrong case named, and a numbering is scored as a whole loop."""
from functools import lru_cache

import pytest

from tcgemm.practice import check, exercise, exercises
from tcgemm.practice.sgemm import CHAPTER, EXERCISES

KEYS = [e.key for e in EXERCISES]


def test_the_model_numbering_has_no_conflict_in_the_loop():
    e = exercise("sgemm.c_register")
    assert all(e.model(*args).extra_cycles == 0 for args, _ in e.cases())


def test_a_numbering_report_names_the_first_conflicting_ffma_and_its_registers():
    report = check("sgemm.c_register", lambda i, j: 8 * i + (j + 1) % 8)
    assert report.wrong == 4 and report.checked == 64
    assert report.text.splitlines()[1] == (
        "  FFMA 0 of the loop, c[0][7]: expected FFMA R21, R64, R79, R21 (banks of a, b, c: 0 3 1): 0 extra "
        "cycles, got FFMA R0, R64, R79, R0 (banks of a, b, c: 0 3 0): 1 extra cycle")
    cached = check("sgemm.c_register", lambda i, j: 8 * i + j).text.splitlines()[2]
    assert cached.endswith("(banks of a, b, c: 0 2 2, a from the reuse cache): 1 extra cycle")


def test_a_numbering_that_is_not_one_is_an_error():
    twice = check("sgemm.c_register", lambda i, j: 8 * i + j % 4)
    assert not twice.passed and "registers used twice" in twice.text
    on_a = check("sgemm.c_register", lambda i, j: 64 + i if j == 0 else 100 + 8 * i + j)
    assert "registers used twice: [64, 65" in on_a.text and "a_0..a_7 are R64..R71" in on_a.text
    too_high = check("sgemm.c_register", lambda i, j: 200 + 8 * i + j)
    assert "register numbers 0..254" in too_high.text
    raised = check("sgemm.c_register", lambda i, j: 1 // (i - 3))
    assert "c[3][0]: the answer raised ZeroDivisionError" in raised.text
    assert "must be a function" in check("sgemm.c_register", [0] * 64).text


def test_a_report_names_the_first_wrong_thread():
    report = check("sgemm.thread_origin", lambda tid, tile: (0, 0))
    assert report.text.splitlines()[1] == "  64x64 tile, thread 1: expected (0, 4), got (0, 0)"
    assert not report.hint
    broken = check("sgemm.global_load", lambda tid, j, tile: ("A", 0, [0, 1][tid]))
    assert "64x64 tile, thread 2, copy 0: the answer raised IndexError" in broken.text


def test_the_chapter_has_its_exercises():
    assert [e.key for e in exercises(CHAPTER)] == KEYS and len(KEYS) >= 3


# The hardware check (tcgemm.practice.gpu.sgemm), on the CPU: a run made up from the layout model must give
# the model's answers, and Kernels S1 and S2 must still take the tracing edits.
A_AT, B_AT = 1 << 32, 1 << 33      # made-up device addresses of A and B


@lru_cache(maxsize=None)
def _run_of_the_model(tile):
    import numpy as np

    from tcgemm.practice.gpu import sgemm as on_gpu
    from tcgemm.sgemm import sgemm_layout as layout

    threads = layout.thread_count(tile)
    owner = np.full((tile, tile), np.nan)
    slots = np.full((threads, on_gpu.SLOTS), on_gpu.UNSET, dtype=np.uint64)
    for tid in range(threads):
        owner[np.ix_(layout.thread_rows(tid, tile), layout.thread_cols(tid, tile))] = tid
        warp, lane = layout.warp_of(tid, tile), layout.lane_of(tid, tile)
        for k in range(layout.BK):
            for m, matrix in enumerate(layout.MATRICES):
                for load in (0, 1):
                    slots[tid, (2 * k + m) * 2 + load] = layout.shared_read_addresses(tile, warp, k, matrix, load)[lane]
        for j, piece in enumerate(layout.load_map(tile)[tid]):
            start = A_AT if piece.matrix == "A" else B_AT
            slots[tid, on_gpu.GLOBAL_SLOTS + j] = start + 4 * (piece.k * tile + 4 * piece.col4)
    return on_gpu.Observed(tile, owner, slots, (A_AT, tile), (B_AT, tile), layout.BK)


@pytest.fixture
def model_run(monkeypatch):
    from tcgemm.practice.gpu import sgemm as on_gpu

    monkeypatch.setattr(on_gpu, "trace", _run_of_the_model)
    monkeypatch.setattr(on_gpu, "_against", lambda: "the model's run")


def test_every_hardware_truth_is_an_exercise_of_the_chapter():
    from tcgemm.practice.gpu.sgemm import TRUTHS

    assert set(TRUTHS) <= set(KEYS) and len(TRUTHS) >= 1
    assert not {"sgemm.extra_cycles", "sgemm.c_register"} & set(TRUTHS)


@pytest.mark.parametrize("key", ["sgemm.thread_origin", "sgemm.lds_address", "sgemm.global_load"])
def test_the_hardware_check_reads_the_model_off_the_models_run(model_run, key):
    from tcgemm.practice.gpu.hardware import on_the_gpu

    e = exercise(key)
    assert on_the_gpu(key).text.endswith("agree with the model's run")
    typical, what = e.hints[0]
    wrong = on_the_gpu(key, typical)
    assert not wrong.passed and wrong.first and wrong.hint == what and wrong.against == "the model's run"


def test_an_address_outside_a_and_b_is_no_load():
    from tcgemm.practice.gpu.sgemm import GLOBAL_SLOTS, UNSET, load_found, lds_found

    run = _run_of_the_model.__wrapped__(64)
    run.slots[0, GLOBAL_SLOTS] = B_AT + 4 * 64 * 8
    run.slots[1, 0] = UNSET
    assert load_found(run, 0, 0) is None and load_found(run, 0, 1) == ("A", 2, 0)
    assert lds_found(run, 1, 0, "A", 0) is None


def test_kernels_s1_and_s2_take_the_tracing_edits_and_compile():
    from tcgemm.engine.gpu.nvrtc_offline import compile_source_text, cuobjdump_sass
    from tcgemm.engine.gpu.sass import sass_tools_missing
    from tcgemm.practice.gpu.sgemm import EDITS, KERNELS, PRELUDE
    from tcgemm.practice.gpu.traced import traced_source

    sources = {key: traced_source(key, PRELUDE, EDITS) for key in KERNELS.values()}
    assert all(s.count("lds_traced(") == 5 and "acc[i][j] = float(tid);" in s for s in sources.values())
    if missing := sass_tools_missing():
        pytest.skip(missing)
    for key, source in sources.items():
        sass = cuobjdump_sass(compile_source_text(source, f"{key} traced", "sm_80"))
        assert sass.count("FFMA") >= 512 and "LDS.128" in sass


def test_a_skeleton_that_returns_none_is_not_answered_yet():
    for key in KEYS:
        assert "not answered yet" in check(key, lambda *args: None).text, key
