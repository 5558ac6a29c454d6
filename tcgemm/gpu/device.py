"""Find the GPU and describe it."""
from __future__ import annotations

from dataclasses import dataclass, asdict
from functools import lru_cache

from tcgemm.errors import NoGPUError


def _import_cupy():
    try:
        import cupy
    except Exception as exc:  # ImportError, or a broken CUDA install
        raise NoGPUError(
            f"CuPy could not be imported ({type(exc).__name__}: {exc}). "
            "Install the packages of requirements.txt (cupy-cuda13x) on a machine with an NVIDIA driver."
        ) from exc
    return cupy


@lru_cache(maxsize=None)
def gpu_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device. Never raises."""
    try:
        cupy = _import_cupy()
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def require_gpu():
    """Return the cupy module, or raise NoGPUError saying why there is no GPU to use."""
    cupy = _import_cupy()
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        raise NoGPUError(
            f"No CUDA GPU is usable here ({exc}). The kernels of this book need an NVIDIA GPU of "
            "compute capability 8.0 or newer (A100, RTX 30xx/40xx, H100) and its driver."
        ) from exc
    if count == 0:
        raise NoGPUError("The CUDA driver reports no GPU on this machine.")
    major = cupy.cuda.Device().compute_capability
    if int(major) < 80:
        raise NoGPUError(
            f"This GPU has compute capability {major[:-1]}.{major[-1]}; the mma.sync kernels of this "
            "book need 8.0 or newer (Ampere, Ada, Hopper)."
        )
    return cupy


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
