"""Which CUDA wheels fit this machine's NVIDIA driver. Pure module: standard library only, no CuPy.

The driver is asked directly: cuDriverGetVersion from libcuda.so.1 (through ctypes; it needs no GPU
context) gives the newest CUDA version the driver supports, /proc/driver/nvidia/version (or
nvidia-smi) its release, such as 535.183.01. From that:
  * the Makefile picks the CUDA set of `make lab` (`python3 -m tcgemm.cuda_env [--cuda 12|13|none]`
    prints 13, 12 or none; a forced set the driver cannot run is an error naming both versions);
  * tcgemm.engine.gpu.device checks the installed CuPy wheel against the driver before importing it, so the
    reader gets "driver R535 supports CUDA 12.2, but cupy-cuda13x needs 13.0" instead of CUDA's
    "driver version is insufficient" (which CUDA also says when there is no driver at all).
"""
from __future__ import annotations

import argparse
import ctypes
import re
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

# CUDA major of a wheel set -> the oldest driver branch that runs it (minor-version compatibility:
# any CUDA 12.x runs on R525 (525.60.13) or newer, any CUDA 13.x on R580 or newer).
MIN_DRIVER = {12: 525, 13: 580}
CUPY_WHEELS = {"cupy-cuda13x": 13, "cupy-cuda12x": 12}
NO_CUDA = "none"
NEEDS = "an NVIDIA GPU of compute capability 8.0 or newer"

PROC_VERSION = Path("/proc/driver/nvidia/version")


@dataclass(frozen=True)
class Driver:
    """What the NVIDIA driver says about itself; cuda is None when libcuda.so.1 cannot be loaded."""
    cuda: tuple[int, int] | None    # newest CUDA version it supports, e.g. (12, 2)
    release: str | None             # e.g. "535.183.01"
    error: str = ""                 # why libcuda.so.1 could not be loaded or asked

    @property
    def name(self) -> str:
        """'NVIDIA driver R535 (535.183.01)', or without a release 'the NVIDIA driver'."""
        if not self.release:
            return "the NVIDIA driver"
        return f"NVIDIA driver R{self.release.split('.')[0]} ({self.release})"


def cuda_version(encoded: int) -> tuple[int, int]:
    """cuDriverGetVersion's integer (1000 * major + 10 * minor) as (major, minor): 12020 -> (12, 2)."""
    return encoded // 1000, (encoded % 1000) // 10


def libcuda_version(library: str = "libcuda.so.1") -> tuple[tuple[int, int] | None, str]:
    """(CUDA version the driver supports, "") or (None, why libcuda could not tell)."""
    try:
        libcuda = ctypes.CDLL(library)
    except OSError as exc:
        detail = "" if "cannot open shared object file" in str(exc) else f": {exc}"
        return None, f"{library} not loadable{detail}"
    version = ctypes.c_int()
    result = libcuda.cuDriverGetVersion(ctypes.byref(version))
    if result != 0:
        return None, f"cuDriverGetVersion failed with CUDA error {result}"
    return cuda_version(version.value), ""


def parse_proc_version(text: str) -> str | None:
    """The release in /proc/driver/nvidia/version ('NVRM version: NVIDIA UNIX x86_64 Kernel Module
    535.183.01 ...' or '... Open Kernel Module for x86_64  580.65.06 ...')."""
    match = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", text)
    return match.group(1) if match else None


def parse_nvidia_smi(text: str) -> tuple[str | None, tuple[int, int] | None]:
    """(release, CUDA version) from the header of plain `nvidia-smi` output:
    '| NVIDIA-SMI 535.183.01   Driver Version: 535.183.01   CUDA Version: 12.2 |'."""
    release = re.search(r"Driver Version:\s*(\d+\.\d+(?:\.\d+)?)", text)
    cuda = re.search(r"CUDA Version:\s*(\d+)\.(\d+)", text)
    return (release.group(1) if release else None,
            (int(cuda.group(1)), int(cuda.group(2))) if cuda else None)


def _nvidia_smi() -> str:
    try:
        return subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def detect() -> Driver:
    """Ask this machine's driver: libcuda for the CUDA version, /proc or nvidia-smi for the release."""
    cuda, error = libcuda_version()
    try:
        release = parse_proc_version(PROC_VERSION.read_text())
    except OSError:
        release = None
    if release is None or cuda is None:
        smi_release, smi_cuda = parse_nvidia_smi(_nvidia_smi())
        release = release or smi_release
        if cuda is None and smi_cuda is not None:
            cuda, error = smi_cuda, ""
    return Driver(cuda, release, error)


def missing_driver(driver: Driver) -> str | None:
    """'no NVIDIA driver found (why)...' when libcuda could not be asked; None when it could."""
    if driver.cuda is not None:
        return None
    why = driver.error or "libcuda.so.1 not loadable"
    return f"no NVIDIA driver found ({why}): the kernels need {NEEDS} and its driver"


def mismatch(driver: Driver, wheel_major: int, wheels: str) -> str | None:
    """Why `wheels` (built for CUDA `wheel_major`) cannot run on `driver`; None when they can."""
    if driver.cuda is None:
        return missing_driver(driver)
    have = driver.cuda
    if have[0] >= wheel_major:
        return None
    fix = (f"install the CUDA {have[0]} set with `make CUDA={have[0]} lab` (requirements-cuda{have[0]}.txt)"
           if have[0] in MIN_DRIVER else
           f"update the driver to R{MIN_DRIVER[min(MIN_DRIVER)]} or newer")
    return (f"{driver.name} supports CUDA {have[0]}.{have[1]}, but these wheels ({wheels}) need "
            f"CUDA {wheel_major}.0 (driver R{MIN_DRIVER[wheel_major]} or newer): {fix}")


def installed_cupy() -> tuple[str, int] | None:
    """(wheel name, CUDA major) of the CuPy wheel installed in this Python, or None."""
    for name, major in CUPY_WHEELS.items():
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        return name, major
    return None


class CudaSetError(RuntimeError):
    """The CUDA set asked for cannot run on this machine's driver."""


def pick_set(driver: Driver, forced: str = "") -> str:
    """The CUDA set ('13', '12' or 'none') for `make lab`: `forced` if given and the driver can run it,
    else the newest set the driver runs ('none' without a driver)."""
    if forced:
        if forced == NO_CUDA:
            return NO_CUDA
        if forced not in {str(m) for m in MIN_DRIVER}:
            sets = ", ".join(map(str, sorted(MIN_DRIVER)))
            raise CudaSetError(f"CUDA={forced}: the sets are {sets} and {NO_CUDA}")
        problem = driver.cuda is not None and mismatch(driver, int(forced), f"the CUDA {forced} set")
        if problem:
            raise CudaSetError(problem)
        return forced
    if driver.cuda is None:
        return NO_CUDA
    fitting = [m for m in MIN_DRIVER if m <= driver.cuda[0]]
    if not fitting:
        raise CudaSetError(mismatch(driver, min(MIN_DRIVER), f"the CUDA {min(MIN_DRIVER)} set"))
    return str(max(fitting))


def describe(driver: Driver, chosen: str) -> str:
    """One line for the Makefile to show: what was found and what gets installed."""
    if driver.cuda is None:
        found = f"no NVIDIA driver ({driver.error})"
    else:
        found = f"{driver.name}, CUDA {driver.cuda[0]}.{driver.cuda[1]}"
    what = ("no CUDA runtime wheels (the GPU cells will say so; NVRTC 13 and the SASS tools are installed "
            "for the cells that compile without a GPU)" if chosen == NO_CUDA else f"the CUDA {chosen} set")
    return f"cuda_env: {found} -> {what}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m tcgemm.cuda_env",
        description="Print the CUDA set (13, 12 or none) for this machine's driver.")
    parser.add_argument("--cuda", default="",
                        help="force a set: 13, 12 or none (empty: pick from the driver)")
    args = parser.parse_args(argv)
    driver = detect()
    try:
        chosen = pick_set(driver, args.cuda.strip())
    except CudaSetError as exc:
        print(f"cuda_env: {exc}", file=sys.stderr)
        return 2
    print(describe(driver, chosen), file=sys.stderr)
    print(chosen)
    return 0


if __name__ == "__main__":
    sys.exit(main())
