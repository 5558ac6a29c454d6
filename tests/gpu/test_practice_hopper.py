"""The Hopper chapter's exercises against the hardware (tcgemm.practice.gpu.hopper), on an sm_90 GPU: wgmma
reads each tile of the descriptor exercise through the book's descriptor, decides every field a tile uses,
and a typical wrong descriptor disagrees with it."""
import pytest

from tcgemm.practice import exercise

pytestmark = pytest.mark.gpu

KEY = "hopper.descriptor"


@pytest.fixture(scope="module")
def hardware():
    from tcgemm.hopper.gpu.wgmma import skipped
    if reason := skipped():
        pytest.skip(reason)
    from tcgemm.practice.gpu import hardware
    return hardware


def test_the_books_descriptors_agree_with_wgmma_on_every_case(hardware):
    report = hardware.on_the_gpu(KEY)
    assert report.passed and report.checked == len(list(exercise(KEY).cases())), str(report)
    assert "wgmma (kernels/probe_wgmma.cu) on the" in report.text


def test_wgmma_decides_each_field_a_tile_uses(hardware):
    from tcgemm.practice.gpu.hopper import Reading, search_fields
    wide = search_fields(Reading("128B", "MN", 128, 64))      # B two atoms wide: LBO steps from one to the next
    assert wide.passed == {"swizzle": (1,), "leading_byte_offset": (8192,), "stride_byte_offset": (1024,)}
    k_major = search_fields(Reading("64B", "K", 64, 32))
    assert k_major.passed["swizzle"] == (2,) and k_major.passed["stride_byte_offset"] == (512,)
    assert len(k_major.passed["leading_byte_offset"]) > 1 and k_major.value("leading_byte_offset") == 16  # unused


@pytest.mark.parametrize("hint", range(len(exercise(KEY).hints)))
def test_a_typical_wrong_descriptor_disagrees_with_wgmma(hardware, hint):
    typical, what = exercise(KEY).hints[hint]
    report = hardware.on_the_gpu(KEY, typical)
    assert not report.passed and report.first and report.hint == what, str(report)
    assert "on the" in report.against


def test_exercises_without_a_hardware_check_are_refused():
    from tcgemm.practice.gpu import hardware
    assert hardware.checked_on_the_gpu("hopper") == [KEY]
    with pytest.raises(KeyError, match="no hardware check"):
        hardware.on_the_gpu("hopper.full_parity")
    with pytest.raises(KeyError, match="no exercise"):
        hardware.on_the_gpu("hopper.no_such_exercise")
