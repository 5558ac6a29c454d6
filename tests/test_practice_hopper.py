"""The Hopper chapter's exercises (tcgemm.practice.hopper): the book's solutions pass, typical wrong answers
fail with their own hint and the first wrong case named, and a wrong descriptor names its first wrong field."""
from tcgemm import ROOT
from tcgemm.practice import check, exercise, exercises
from tcgemm.practice.hopper import CHAPTER, EXERCISES, descriptor_word, empty_parity, full_parity

KEYS = [e.key for e in EXERCISES]


def test_a_wrong_descriptor_names_its_first_wrong_field():
    def sbo_of_one_row(mode, major, mn, k, address):      # SBO one 128-byte row instead of one 8-row atom
        word = descriptor_word(mode, major, mn, k, address)
        return word & ~(0x3FFF << 32) | 8 << 32 if (mode, major) == ("128B", "K") else word

    report = check("hopper.descriptor", sbo_of_one_row)
    assert report.wrong == 9 and not report.hint
    assert str(report.first[0]) == ("128B K-major, 64 of M/N x 16 of K at 0x0: stride_byte_offset "
                                    "(bits 32-45, as stored): expected 64, got 8")
    stray = check("hopper.descriptor", lambda *case: descriptor_word(*case) | 1 << 15)
    assert "bits outside every field: expected '0x" in str(stray.first[0])


def test_bad_answers_are_reported_not_raised():
    assert "not a 64-bit unsigned integer" in check("hopper.descriptor", lambda *case: -1).text
    broken = check("hopper.d_owner", lambda row, col: 1 // (row - 5))
    assert not broken.passed and "D[5][0]: the answer raised ZeroDivisionError" in broken.text
    assert "must be a function" in check("hopper.full_parity", (0, 1)).text


def test_the_ring_model_is_the_kernels_parity():
    # kernels/k5.7_operand_orders.cu: the consumer waits (step / N) % 2 on full, the producer (step / N - 1) % 2
    # on empty; the model derives both from the phases a run of the ring completes.
    for e, kernel in ((exercise("hopper.full_parity"), full_parity), (exercise("hopper.empty_parity"), empty_parity)):
        cases = list(e.cases())
        assert {args[1] for args, _ in cases} == set(range(2, 7))
        assert all(e.model(*args) == kernel(*args) for args, _ in cases)
    assert min(step - n for (step, n), _ in exercise("hopper.empty_parity").cases()) == 0   # the producer's first wait


def test_the_tma_tile_cases_cover_every_byte_once():
    e = exercise("hopper.tma_offset")
    offsets = sorted(e.model(*args) for args, _ in e.cases())
    assert offsets == list(range(0, 2 * 64 * 128, 2))


def test_the_chapter_has_its_exercises():
    assert (ROOT / "book" / f"{CHAPTER}.ipynb").exists()
    assert [e.key for e in exercises(CHAPTER)] == KEYS and len(KEYS) >= 4
    assert all(key.startswith("hopper.") for key in KEYS)


def test_the_hardware_checks_are_exercises_of_the_chapter():
    from tcgemm.practice.gpu.hopper import TRUTHS
    assert list(TRUTHS) == ["hopper.descriptor"] and set(TRUTHS) <= set(KEYS)


def _read_by_the_model(reading, desc):
    """D of the probe's wgmma through `desc` on the images it is given, as the model says wgmma reads."""
    import numpy as np
    from tcgemm.practice.gpu.hopper import _operands
    a, b, _, expected = _operands(reading)
    values = (a if reading.operand == "A" else b).view(np.float16)[reading.read_offsets(desc) // 2]
    if reading.operand == "A":
        return (values if reading.major == "K" else values.T).astype(np.float32), expected
    d = np.zeros_like(expected)
    d[:len(values)] = values
    return d, expected


def test_the_probe_images_read_through_the_books_descriptor_are_the_expected_d():
    import numpy as np
    from dataclasses import replace
    from tcgemm.practice.gpu.hopper import descriptor_readings
    readings = descriptor_readings()
    assert len(readings) == 23 and {r.operand for r in readings} == {"A", "B"}
    for reading in readings:
        d, expected = _read_by_the_model(reading, reading.model)
        assert np.array_equal(d, expected), reading
        wrong = replace(reading.model, stride_byte_offset=reading.model.stride_byte_offset // 2)
        assert not np.array_equal(_read_by_the_model(reading, wrong)[0], expected), reading


def test_no_candidate_descriptor_reads_outside_the_probes_image():
    from dataclasses import replace
    from tcgemm.practice.gpu.hopper import Reading, descriptor_readings, image_bytes
    for reading in descriptor_readings():
        size = image_bytes(reading.operand, reading.n)
        for pairs in reading.candidates().values():
            for _, desc in pairs:
                for exchanged in (False, True):
                    assert reading.read_offsets(desc, exchanged=exchanged).max() < size, (reading, desc)
    k_major = Reading("128B", "K", 64, 64)       # 8 groups of 8 rows in 8192 bytes: SBO 2048 would leave them
    assert not k_major.stays_inside(replace(k_major.model, stride_byte_offset=2048))
    unused = [v for v, _ in k_major.candidates()["leading_byte_offset"]]     # bounded as if it were used
    assert 16 in unused and max(unused) < 8192
