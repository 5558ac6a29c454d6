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
    assert "not a 64-bit unsigned integer" in str(check("hopper.descriptor", lambda *case: -1))
    broken = check("hopper.d_owner", lambda row, col: 1 // (row - 5))
    assert not broken.passed and "D[5][0]: the answer raised ZeroDivisionError" in str(broken)
    assert "must be a function" in str(check("hopper.full_parity", (0, 1)))


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
