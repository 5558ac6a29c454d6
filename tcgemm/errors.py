"""Exceptions raised by tcgemm. Each message names the problem and what would be accepted."""


class TcgemmError(Exception):
    """Base class of every error tcgemm raises on purpose."""


class NoGPUError(TcgemmError, RuntimeError):
    """No usable CUDA GPU (or no CuPy, or no driver) was found."""


class KernelCompileError(TcgemmError, RuntimeError):
    """NVRTC rejected a kernel; the message carries NVRTC's log."""


class OperandError(TcgemmError, ValueError):
    """An input array has the wrong dtype, layout, shape or location."""


class UnsupportedOnGPUError(TcgemmError, RuntimeError):
    """This GPU lacks the instruction asked for (e.g. fp8 mma.sync before sm_89)."""
