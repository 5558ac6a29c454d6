"""Arrays from other libraries, for tcgemm.matmul: a CuPy view of each (no copy) and the way back.

CuPy arrays are taken as they are. PyTorch tensors (CUDA, on the current device) are viewed through
DLPack, bf16 and fp8 ones as their bits (torch has them, CuPy does not: a bf16 tensor viewed as int16,
then as uint16, the engine's "bfloat16"; a float8_e4m3fn or float8_e5m2 tensor as uint8, named by its
torch dtype); the result is a tensor from torch's allocator (new_result), and the kernels run on torch's
current stream. Anything else with `__cuda_array_interface__` (Numba, CuPy-like
arrays) or `__dlpack__` (JAX) is viewed by cupy.asarray / cupy.from_dlpack and the result stays a CuPy
array. Inputs that cannot be GEMM operands get an OperandError that names them.
"""
from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from tcgemm.errors import OperandError
from tcgemm.engine.dispatch import INPUT_DTYPES
from tcgemm.engine.kernel_types import storage_dtype
from tcgemm.engine.operands import check_device
from tcgemm.engine.gpu.device import checked_cupy

ACCEPTED = "a CuPy array, a CUDA PyTorch tensor, or an array with __cuda_array_interface__ or __dlpack__"
# PyTorch dtypes CuPy has none of, viewed as their bits: the torch dtype of the same size to view the tensor
# as, and the CuPy dtype the engine holds the bits in.
BIT_VIEWS = {"bfloat16": ("int16", np.uint16), "float8_e4m3fn": ("uint8", np.uint8), "float8_e5m2": ("uint8", np.uint8)}


@dataclass(frozen=True)
class Viewed:
    """An operand as a CuPy array, its dtype as the engine names it (bf16: "bfloat16")."""
    array: Any
    dtype: str


def is_torch(x) -> bool:
    return type(x).__module__.startswith("torch")


def _torch_view(name: str, x, device: int) -> Viewed:
    import torch

    cupy = checked_cupy()
    if not x.is_cuda:
        raise OperandError(f"{name} is a PyTorch tensor in host memory ({x.device}); tcgemm.matmul reads GPU "
                           f"memory: pass {name}.cuda()")
    if x.device.index != device:
        raise OperandError(f"{name} is a PyTorch tensor on GPU {x.device.index}, but the current device is GPU "
                           f"{device}: move it with {name}.to('cuda:{device}') or change the current device")
    if x.dtype == torch.bool:
        raise OperandError(f"{name} is a bool tensor; tcgemm.matmul multiplies {', '.join(INPUT_DTYPES)} matrices "
                           "(float32 with allow_tf32=True)")
    dtype = str(x.dtype).removeprefix("torch.")
    if dtype in BIT_VIEWS:
        same_size, held = BIT_VIEWS[dtype]
        return Viewed(cupy.from_dlpack(x.view(getattr(torch, same_size))).view(held), dtype)
    try:
        return Viewed(cupy.from_dlpack(x), dtype)
    except (TypeError, ValueError, BufferError) as exc:
        raise OperandError(f"{name}: a {x.dtype} tensor cannot be viewed by CuPy ({exc})") from exc


def view(name: str, x, device: int) -> Viewed:
    """x as a CuPy array on GPU `device`, without a copy (see the module's docstring)."""
    cupy = checked_cupy()
    if isinstance(x, cupy.ndarray):
        check_device(name, x, device)
        return Viewed(x, str(x.dtype))
    if x is None or isinstance(x, (np.ndarray, list, tuple, int, float)):
        what = "a numpy array in host memory" if isinstance(x, np.ndarray) else f"a {type(x).__name__}"
        raise OperandError(f"{name} is {what}; the kernels read GPU memory: pass cupy.asarray({name})")
    if is_torch(x):
        return _torch_view(name, x, device)
    try:
        if hasattr(x, "__cuda_array_interface__"):
            array = cupy.asarray(x)
        elif hasattr(x, "__dlpack__"):
            array = cupy.from_dlpack(x)
        else:
            raise OperandError(f"{name} is a {type(x).__name__}; tcgemm.matmul takes {ACCEPTED}")
    except (TypeError, ValueError, BufferError) as exc:
        raise OperandError(f"{name}: a {type(x).__name__} that CuPy cannot view without a copy ({exc})") from exc
    check_device(name, array, device)
    return Viewed(array, str(array.dtype))


def signature(x) -> tuple | None:
    """What a repeated call must match of operand x to reuse a launch: its address, shape, strides and
    dtype, read without a view (a CuPy array or a PyTorch tensor); None for any other kind of array."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and type(x) is cupy.ndarray:
        return x.data.ptr, x.shape, x.strides, x.dtype.char
    if is_torch(x) and x.is_cuda:
        return x.data_ptr(), x.shape, x.stride(), x.dtype
    return None


def new_result(A, M: int, N: int, dtype: str, device: int) -> tuple[Any, Any]:
    """A new (M, N) row-major D of `dtype` in the kind of array A is, and its CuPy view: a torch tensor
    for torch inputs (from torch's allocator, so that the next call's D lands where this one's did once
    the caller drops it), a CuPy array otherwise."""
    D = result_maker(A, (M, N), dtype)()
    return D, (view("out", D, device).array if is_torch(A) else D)


def stream_of(A) -> int:
    """The handle of the stream a call on A runs on: torch's current one for a tensor, else CuPy's."""
    if not is_torch(A):
        return checked_cupy().cuda.get_current_stream().ptr
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)     # what torch.cuda.current_stream() reads
    return raw(A.get_device()) if raw is not None else torch.cuda.current_stream().cuda_stream


def result_maker(A, shape: tuple[int, int], dtype: str):
    """A function of no arguments that allocates an empty row-major D of `shape` and `dtype` (its engine
    name) as new_result does for A's kind of array, its lookups done here once."""
    if not is_torch(A):
        return partial(checked_cupy().empty, shape, dtype=storage_dtype(dtype))
    import torch

    return partial(torch.empty, shape, dtype=getattr(torch, dtype), device=A.device)


def torch_stream():
    """torch's current stream as a CuPy stream (made once per stream)."""
    import torch

    return _cupy_stream(checked_cupy(), torch.cuda.current_stream())


_STREAMS: dict = {}


def _cupy_stream(cupy, stream):
    """torch's stream as a CuPy stream, made once per stream: through the CUDA stream protocol where both
    sides have it, else by its handle (CuPy's ExternalStream, which CuPy 14 deprecates for the protocol)."""
    key = (stream.cuda_stream, stream.device_index)
    if key not in _STREAMS:
        try:
            _STREAMS[key] = cupy.cuda.Stream.from_external(stream)
        except (AttributeError, TypeError, ValueError):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                _STREAMS[key] = cupy.cuda.ExternalStream(stream.cuda_stream, stream.device_index)
    return _STREAMS[key]
