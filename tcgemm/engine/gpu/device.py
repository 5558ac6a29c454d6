"""Find the GPU and describe it."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, asdict
from functools import lru_cache
from pathlib import Path

from tcgemm import cuda_env
from tcgemm.errors import NoGPUError

NEEDS = cuda_env.NEEDS


@lru_cache(maxsize=None)
def driver_problem() -> str | None:
    """Why the installed CuPy wheel cannot run on this machine's driver (no driver, or a driver of an
    older CUDA major than the wheel's), asked of libcuda before CuPy is imported; None when it can.
    Without CuPy only a missing driver is named here (_import_cupy then says what to install)."""
    driver = cuda_env.detect()
    wheel = cuda_env.installed_cupy()
    if wheel is None:
        return cuda_env.missing_driver(driver)
    return cuda_env.mismatch(driver, wheel[1], wheel[0])


def _import_cupy():
    problem = driver_problem()
    if problem:
        raise NoGPUError(problem)
    try:
        import cupy
    except Exception as exc:  # ImportError, or a broken CUDA install
        raise NoGPUError(
            f"CuPy could not be imported ({type(exc).__name__}: {exc}): install the CUDA set for this "
            "machine's driver (`make lab` picks it, or pip install -r requirements-cuda13.txt / -cuda12.txt)"
        ) from exc
    return cupy


@lru_cache(maxsize=None)
def gpu_unavailable_reason() -> str | None:
    """None when a GPU is usable here; else the one-line reason (what is missing, what to do)."""
    try:
        require_gpu()
    except NoGPUError as exc:
        return str(exc)
    except Exception as exc:  # a CUDA error past the checks of require_gpu
        return f"the GPU could not be queried ({type(exc).__name__}: {exc})"
    return None


def gpu_available() -> bool:
    """True when CuPy imports and sees a CUDA device of compute capability 8.0 or newer. Never raises."""
    return gpu_unavailable_reason() is None


def require_gpu():
    """Return the cupy module, or raise NoGPUError saying why there is no GPU to use."""
    cupy = _import_cupy()
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        raise NoGPUError(f"no CUDA GPU is usable here ({exc}); the kernels need {NEEDS}") from exc
    if count == 0:
        raise NoGPUError(f"the CUDA driver reports no GPU on this machine; the kernels need {NEEDS}")
    major = cupy.cuda.Device().compute_capability
    if int(major) < 80:
        raise NoGPUError(
            f"this GPU has compute capability {major[:-1]}.{major[-1]}; the mma.sync kernels of this "
            "book need 8.0 or newer (Ampere, Ada, Hopper)"
        )
    return cupy


@lru_cache(maxsize=None)
def checked_cupy():
    """require_gpu()'s answer, its checks done once per process: what a call that must be quick uses."""
    return require_gpu()


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    compute_capability: str      # e.g. "90"
    arch: str                    # e.g. "sm_90"
    sm_count: int
    sm_clock_mhz: float          # maximum (boost) SM clock reported by the driver
    memory_clock_mhz: float
    shared_mem_per_block: int    # default limit, bytes
    shared_mem_per_block_optin: int
    l2_bytes: int
    memory_bytes: int
    cuda_runtime: str
    cuda_driver: str
    cupy_version: str

    def as_dict(self) -> dict:
        return asdict(self)


def _version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


@lru_cache(maxsize=None)
def device_info() -> DeviceInfo:
    cupy = require_gpu()
    rt = cupy.cuda.runtime
    dev = cupy.cuda.Device()
    props = rt.getDeviceProperties(dev.id)
    attrs = dev.attributes
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else name
    cc = dev.compute_capability
    return DeviceInfo(
        name=name,
        compute_capability=cc,
        arch=f"sm_{cc}",
        sm_count=attrs["MultiProcessorCount"],
        sm_clock_mhz=attrs["ClockRate"] / 1000.0,
        memory_clock_mhz=attrs["MemoryClockRate"] / 1000.0,
        shared_mem_per_block=attrs["MaxSharedMemoryPerBlock"],
        shared_mem_per_block_optin=attrs["MaxSharedMemoryPerBlockOptin"],
        l2_bytes=attrs["L2CacheSize"],
        memory_bytes=dev.mem_info[1],
        cuda_runtime=_version(rt.runtimeGetVersion()),
        cuda_driver=_version(rt.driverGetVersion()),
        cupy_version=cupy.__version__,
    )


def observation_path(prefix: str, out_dir: str | Path | None = None) -> Path:
    """Where a probe writes what it saw on this GPU: <out_dir>/<prefix>_<gpu name>.json, out_dir by
    default $OUT, else the current folder (tests/data keeps the recorded ones)."""
    device = re.sub(r"[^a-z0-9]+", "_", device_info().name.lower()).strip("_")
    return Path(out_dir or os.environ.get("OUT") or ".") / f"{prefix}_{device}.json"
