"""Kernel launches with their arguments bound once: StructLaunch hands cuLaunchKernel (CuPy's binding of it)
the array of pointers to each argument's bytes that the driver API takes, built when the launch is made.
It passes arguments of any size by value (the 128-byte tensor maps of tcgemm.engine.gpu.tma), and a call
does nothing but launch: what a repeated tcgemm.matmul call runs (tcgemm.engine.gpu.matmul._Repeat).
"""
from __future__ import annotations

import ctypes
from functools import lru_cache

import numpy as np

from tcgemm.engine.gpu.device import require_gpu


class _LaunchConfig(ctypes.Structure):
    """The driver's CUlaunchConfig."""
    _fields_ = [*((name, ctypes.c_uint) for name in ("grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
                                                      "shared_mem")),
                ("stream", ctypes.c_void_p), ("attrs", ctypes.c_void_p), ("attr_count", ctypes.c_uint)]


def active_clusters(kernel, cluster: int, threads: int, shared_mem: int) -> int | None:
    """How many clusters of `cluster` blocks of the kernel (compiled with __cluster_dims__) the GPU runs at
    once, as the driver's cuOccupancyMaxActiveClusters counts them (a cluster's blocks share one GPC, so
    132 SMs hold 32 clusters of 4, not 33); None where the driver does not say."""
    return _active_clusters(kernel.kernel.ptr, cluster, threads, shared_mem)


@lru_cache(maxsize=None)
def _active_clusters(function: int, cluster: int, threads: int, shared_mem: int) -> int | None:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    count = ctypes.c_int()
    config = _LaunchConfig(cluster, 1, 1, threads, 1, 1, shared_mem, None, None, 0)
    result = lib.cuOccupancyMaxActiveClusters(ctypes.byref(count), ctypes.c_void_p(function), ctypes.byref(config))
    return count.value if result == 0 and count.value > 0 else None


def _param(value) -> np.ndarray:
    """The bytes of one kernel argument: a map's 128 bytes, a cupy array's device pointer, or a numpy scalar."""
    if isinstance(value, np.ndarray) and value.dtype == np.uint8:
        return value
    ptr = getattr(getattr(value, "data", None), "ptr", None)
    if ptr is not None:
        return np.array([ptr], dtype=np.uint64)
    if isinstance(value, np.generic):
        return np.array([value])
    raise TypeError(f"a kernel argument must be a tensor map, a cupy array or a numpy scalar, got {type(value).__name__}")


class StructLaunch:
    """A kernel launch whose arguments may be passed by value whatever their size (tensor maps), through
    cuLaunchKernel's array of pointers to argument bytes. Holds the arguments (and so the arrays)."""

    __slots__ = ("_cupy", "_fn", "_dims", "_smem", "_args", "_bytes", "_pointers")

    def __init__(self, kernel, grid, block, args, shared_mem: int = 0):
        self._cupy = require_gpu()
        self._fn = kernel.kernel.ptr          # the CUfunction of a cupy.RawKernel (or compile.LoadedKernel)
        self._dims = tuple(grid) + (1,) * (3 - len(grid)) + tuple(block) + (1,) * (3 - len(block))
        self._smem = shared_mem
        self._args = args                     # held, so that the arrays stay alive
        self._bytes = [_param(a) for a in args]
        self._pointers = np.array([b.ctypes.data for b in self._bytes], dtype=np.uint64)

    def forget(self, x) -> None:
        """Stop holding the array x: its address is in the argument bytes already."""
        self._args = tuple(None if a is x else a for a in self._args)

    def __call__(self) -> None:
        self.on(self._cupy.cuda.get_current_stream().ptr)

    def on(self, stream: int) -> None:
        """Launch on the stream whose handle is `stream`."""
        self._cupy.cuda.driver.launchKernel(self._fn, *self._dims, self._smem, stream, self._pointers.ctypes.data, 0)


def bound(launch) -> StructLaunch:
    """A launch of tcgemm.engine.gpu.gemm's kind, partial(kernel, grid, block, args, shared_mem=...), or a
    StructLaunch already, as a StructLaunch."""
    if isinstance(launch, StructLaunch):
        return launch
    grid, block, args = launch.args
    return StructLaunch(launch.func, grid, block, args, launch.keywords.get("shared_mem", 0))
