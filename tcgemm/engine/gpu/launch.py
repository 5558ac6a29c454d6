"""Kernel launches with their arguments bound once: StructLaunch hands cuLaunchKernel (CuPy's binding of it)
the array of pointers to each argument's bytes that the driver API takes, built when the launch is made.
It passes arguments of any size by value (the 128-byte tensor maps of tcgemm.engine.gpu.tma), and a call
does nothing but launch: what a repeated tcgemm.matmul call runs (tcgemm.engine.gpu.matmul._Repeat).
"""
from __future__ import annotations

import numpy as np

from tcgemm.engine.gpu.device import require_gpu


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
