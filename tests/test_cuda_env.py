"""Which CUDA set fits the driver (tcgemm.cuda_env), and the errors a reader gets when the installed
wheels do not fit it (tcgemm.engine.gpu.device), with the driver's answers mocked: no GPU needed."""
import re
import sys

import pytest

from tcgemm import cuda_env
from tcgemm.cuda_env import CudaSetError, Driver, mismatch, pick_set
from tcgemm.errors import NoGPUError
from tcgemm.engine.gpu import device

SMI_535 = """Mon Nov 23 06:00:00 2026
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.183.01             Driver Version: 535.183.01   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
|   0  NVIDIA A100-SXM4-80GB          On  | 00000000:07:00.0 Off |                    0 |
"""
SMI_580 = "| NVIDIA-SMI 580.65.06              Driver Version: 580.65.06      CUDA Version: 13.0     |\n"
PROC_535 = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024\nGCC version:  gcc 12\n"
PROC_580_OPEN = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  (dvs-builder@U16)\n"

R535 = Driver((12, 2), "535.183.01")
R580 = Driver((13, 0), "580.65.06")
R470 = Driver((11, 4), "470.256.02")
NONE = Driver(None, None, "libcuda.so.1 not loadable")


def test_parse_nvidia_smi():
    assert cuda_env.parse_nvidia_smi(SMI_535) == ("535.183.01", (12, 2))
    assert cuda_env.parse_nvidia_smi(SMI_580) == ("580.65.06", (13, 0))
    assert cuda_env.parse_nvidia_smi("") == (None, None)


def test_parse_proc_version():
    assert cuda_env.parse_proc_version(PROC_535) == "535.183.01"
    assert cuda_env.parse_proc_version(PROC_580_OPEN) == "580.65.06"
    assert cuda_env.parse_proc_version("no module here") is None


def test_cuda_version_decodes_the_driver_api_integer():
    assert cuda_env.cuda_version(12020) == (12, 2)
    assert cuda_env.cuda_version(13000) == (13, 0)
    assert cuda_env.cuda_version(12090) == (12, 9)


def test_missing_libcuda_is_reported_not_raised():
    assert cuda_env.libcuda_version("libcuda_not_here.so.1") == (None, "libcuda_not_here.so.1 not loadable")


def test_detect_reads_proc_then_falls_back_to_nvidia_smi(monkeypatch, tmp_path):
    proc = tmp_path / "version"
    proc.write_text(PROC_535)
    monkeypatch.setattr(cuda_env, "PROC_VERSION", proc)
    monkeypatch.setattr(cuda_env, "libcuda_version", lambda: ((12, 2), ""))
    monkeypatch.setattr(cuda_env, "_nvidia_smi", lambda: pytest.fail("nvidia-smi asked although /proc told"))
    assert cuda_env.detect() == R535
    # No /proc (WSL, some containers) and no libcuda: nvidia-smi's header answers both.
    monkeypatch.setattr(cuda_env, "PROC_VERSION", tmp_path / "missing")
    monkeypatch.setattr(cuda_env, "libcuda_version", lambda: (None, "libcuda.so.1 not loadable"))
    monkeypatch.setattr(cuda_env, "_nvidia_smi", lambda: SMI_580)
    assert cuda_env.detect() == R580
    monkeypatch.setattr(cuda_env, "_nvidia_smi", lambda: "")
    assert cuda_env.detect() == NONE


def test_pick_set_follows_the_driver():
    assert pick_set(R580) == "13"
    assert pick_set(Driver((13, 1), "590.10")) == "13"
    assert pick_set(R535) == "12"
    assert pick_set(NONE) == "none"


def test_pick_set_override():
    assert pick_set(R580, "12") == "12"       # a CUDA 13 driver runs CUDA 12 wheels
    assert pick_set(R535, "none") == "none"
    assert pick_set(NONE, "13") == "13"       # no driver to check against: install what was asked
    with pytest.raises(CudaSetError) as info:
        pick_set(R535, "13")
    assert str(info.value) == (
        "NVIDIA driver R535 (535.183.01) supports CUDA 12.2, but these wheels (the CUDA 13 set) need "
        "CUDA 13.0 (driver R580 or newer): install the CUDA 12 set with `make CUDA=12 lab` "
        "(requirements-cuda12.txt)")
    with pytest.raises(CudaSetError, match="the sets are 12, 13 and none"):
        pick_set(R580, "11")


def test_a_driver_older_than_cuda_12_is_told_to_update():
    with pytest.raises(CudaSetError, match=r"R470 \(470.256.02\) supports CUDA 11.4.*update the driver to R525"):
        pick_set(R470)


def test_mismatch_names_the_missing_driver():
    assert mismatch(R580, 13, "cupy-cuda13x") is None
    assert mismatch(R580, 12, "cupy-cuda12x") is None
    assert mismatch(NONE, 13, "cupy-cuda13x").startswith("no NVIDIA driver found (libcuda.so.1 not loadable)")


def test_cli_prints_the_set_or_fails_clearly(monkeypatch, capsys):
    monkeypatch.setattr(cuda_env, "detect", lambda: R535)
    assert cuda_env.main([]) == 0
    out, err = capsys.readouterr()
    assert out == "12\n" and "R535 (535.183.01), CUDA 12.2 -> the CUDA 12 set" in err
    assert cuda_env.main(["--cuda", "13"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "supports CUDA 12.2, but these wheels (the CUDA 13 set) need CUDA 13.0" in err


# --- the errors of tcgemm.engine.gpu.device, checked before CuPy is imported ------------------------------

@pytest.fixture
def driver(monkeypatch):
    """Set the driver the device module sees; CuPy made unimportable, so only the driver check speaks."""
    def use(found: Driver, wheel=("cupy-cuda13x", 13)):
        monkeypatch.setattr(cuda_env, "detect", lambda: found)
        monkeypatch.setattr(cuda_env, "installed_cupy", lambda: wheel)
        monkeypatch.setitem(sys.modules, "cupy", None)
        device.driver_problem.cache_clear()
        device.gpu_unavailable_reason.cache_clear()
    yield use
    device.driver_problem.cache_clear()
    device.gpu_unavailable_reason.cache_clear()


def test_no_driver_is_named_as_such(driver):
    driver(NONE)
    with pytest.raises(NoGPUError) as info:
        device.require_gpu()
    assert str(info.value).startswith("no NVIDIA driver found (libcuda.so.1 not loadable)")
    assert "insufficient" not in str(info.value)
    assert device.gpu_unavailable_reason() == str(info.value)
    assert not device.gpu_available()


def test_cuda12_driver_with_cuda13_wheels_names_both_and_the_fix(driver):
    driver(R535)
    with pytest.raises(NoGPUError) as info:
        device.require_gpu()
    assert str(info.value) == (
        "NVIDIA driver R535 (535.183.01) supports CUDA 12.2, but these wheels (cupy-cuda13x) need "
        "CUDA 13.0 (driver R580 or newer): install the CUDA 12 set with `make CUDA=12 lab` "
        "(requirements-cuda12.txt)")


def test_fitting_driver_goes_on_to_import_cupy(driver):
    driver(R535, wheel=("cupy-cuda12x", 12))
    assert device.driver_problem() is None
    with pytest.raises(NoGPUError, match="CuPy could not be imported"):
        device.require_gpu()


def test_without_cupy_or_driver_the_driver_is_named(driver):
    driver(NONE, wheel=None)
    with pytest.raises(NoGPUError, match=r"^no NVIDIA driver found \(libcuda.so.1 not loadable\)"):
        device.require_gpu()


def test_without_cupy_the_import_error_says_what_to_install(driver):
    driver(R580, wheel=None)
    with pytest.raises(NoGPUError, match="install the CUDA set for this machine's driver"):
        device.require_gpu()


def test_makefile_has_a_lab_set_for_every_choice_and_its_files_exist():
    from tcgemm import ROOT
    from tcgemm.engine.gpu.nvrtc_offline import WHEEL_LAYOUT

    sets = dict(re.findall(r"^LAB_SET_(\w+)\s*:=\s*(.+)$", (ROOT / "Makefile").read_text(), re.M))
    assert set(sets) == {str(m) for m in cuda_env.MIN_DRIVER} | {cuda_env.NO_CUDA}
    assert set(WHEEL_LAYOUT) == set(cuda_env.MIN_DRIVER)
    for files in sets.values():
        for name in files.split():
            assert (ROOT / name).is_file(), name
    cupy_pins = {m: (ROOT / f"requirements-cuda{m}.txt").read_text() for m in cuda_env.MIN_DRIVER}
    for wheel, major in cuda_env.CUPY_WHEELS.items():
        assert f"\n{wheel}==" in cupy_pins[major], f"requirements-cuda{major}.txt does not pin {wheel}"
