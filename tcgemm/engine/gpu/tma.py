"""Tensor maps from the driver, and launches of kernels that take them by value.

cuTensorMapEncodeTiled fills the 128 bytes of a map (tcgemm.engine.tma says what is asked for). It is called
through cuda-python's binding (cuda.bindings.driver) where that is installed, else straight from the
driver's libcuda.so.1 through ctypes, with the same arguments. A kernel takes a map as a
`const __grid_constant__ TensorMap` parameter, i.e. 128 bytes by value, which CuPy's RawKernel call
does not pass: tcgemm.engine.gpu.launch.StructLaunch does. This module registers the
launcher's builder of the tensor-map signatures (tcgemm.engine.kernel_types.Signature): importing it is
what lets tcgemm.engine.gpu.gemm launch a TMA kernel, and the launcher imports it when it first needs to.
"""
from __future__ import annotations

import ctypes
from functools import lru_cache

import numpy as np

from tcgemm.errors import NoGPUError, OperandError
from tcgemm.engine.kernel_types import Signature
from tcgemm.engine.tma import MAP_BYTES, TileMap, c_map, gemm_maps
from tcgemm.engine.operands import leading_dimension
from tcgemm.engine.gpu.gemm import LaunchParts, register_builder
from tcgemm.engine.gpu.launch import StructLaunch
from tcgemm.engine.gpu.device import device_info, require_gpu
from tcgemm.engine.stream_k import split


@lru_cache(maxsize=None)
def _bindings():
    """cuda.bindings.driver, or None where cuda-python is not installed."""
    try:
        from cuda.bindings import driver
    except ImportError:
        return None
    return driver


def binding() -> str:
    """Which binding encodes the maps here: 'cuda.bindings' or 'ctypes (libcuda.so.1)'."""
    return "cuda.bindings" if _bindings() is not None else "ctypes (libcuda.so.1)"


@lru_cache(maxsize=None)
def _libcuda():
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        raise NoGPUError(f"libcuda.so.1 could not be loaded ({exc}): tensor maps need the NVIDIA driver") from exc
    u64, u32, ptr = ctypes.c_uint64, ctypes.c_uint32, ctypes.c_void_p
    lib.cuTensorMapEncodeTiled.argtypes = [ptr, ctypes.c_int, u32, ptr, ctypes.POINTER(u64), ctypes.POINTER(u64),
                                           ctypes.POINTER(u32), ctypes.POINTER(u32), ctypes.c_int, ctypes.c_int,
                                           ctypes.c_int, ctypes.c_int]
    lib.cuGetErrorString.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    return lib


def _encode_ctypes(args: tuple) -> np.ndarray:
    data_type, rank, address, dims, strides, box, steps, interleave, swizzle, l2, oob = args
    lib = _libcuda()
    storage = np.zeros(MAP_BYTES + 64, dtype=np.uint8)      # the driver wants the map 64-byte aligned
    start = -storage.ctypes.data % 64
    out = storage[start:start + MAP_BYTES]
    u64, u32 = ctypes.c_uint64, ctypes.c_uint32
    result = lib.cuTensorMapEncodeTiled(
        out.ctypes.data, data_type, rank, address, (u64 * rank)(*dims), (u64 * (rank - 1))(*strides),
        (u32 * rank)(*box), (u32 * rank)(*steps), interleave, swizzle, l2, oob)
    if result != 0:
        text = ctypes.c_char_p()
        lib.cuGetErrorString(result, ctypes.byref(text))
        raise OperandError(f"cuTensorMapEncodeTiled refused the map (CUresult {result}: "
                           f"{(text.value or b'?').decode()})")
    return out.copy()


def _encode_bindings(driver, args: tuple) -> np.ndarray:
    data_type, rank, address, dims, strides, box, steps, interleave, swizzle, l2, oob = args
    u64, u32 = (lambda xs: [driver.cuuint64_t(x) for x in xs]), (lambda xs: [driver.cuuint32_t(x) for x in xs])
    result, tensor_map = driver.cuTensorMapEncodeTiled(
        driver.CUtensorMapDataType(data_type), rank, address, u64(dims), u64(strides), u32(box),
        u32(steps), driver.CUtensorMapInterleave(interleave), driver.CUtensorMapSwizzle(swizzle),
        driver.CUtensorMapL2promotion(l2), driver.CUtensorMapFloatOOBfill(oob))
    if result != driver.CUresult.CUDA_SUCCESS:
        raise OperandError(f"cuTensorMapEncodeTiled refused the map ({result.name})")
    return np.array([int(word) for word in tensor_map.opaque], dtype=np.uint64).view(np.uint8)


def encode(tile_map: TileMap, address: int, via: str | None = None) -> np.ndarray:
    """The 128 bytes of `tile_map` for the matrix at device address `address` (checked first: see
    tcgemm.engine.tma.TileMap.check). `via` 'ctypes' forces the ctypes path (None: `binding()`'s). The
    bytes depend on the map and the address only, so the last few are kept: a launch prepared again for
    a new C encodes C's map alone (read-only arrays: copy one before changing it)."""
    if via not in (None, "ctypes"):
        raise ValueError(f"via must be None (the binding found) or 'ctypes', got {via!r}")
    return _encoded(tile_map, address, via)


@lru_cache(maxsize=64)
def _encoded(tile_map: TileMap, address: int, via: str | None) -> np.ndarray:
    args = tile_map.encode_args(address)
    driver = None if via == "ctypes" else _bindings()
    out = _encode_bindings(driver, args) if driver is not None else _encode_ctypes(args)
    out.flags.writeable = False
    return out


def tensor_map_launch(parts: LaunchParts) -> StructLaunch:
    """The launch of a kernel that takes tensor maps: (a_map, b_map, C, M, N, K), with c_map after b_map
    where it stores C by TMA. The maps span A and B as the kernel reads them (padded where staged), each
    in the memory order it was compiled for; K the columns of A as the kernel reads it. Where TMA
    cannot address C, c_map's bytes are zero and the kernel stores C itself."""
    return StructLaunch(parts.fn, parts.grid, parts.spec.block, _map_args(parts), parts.spec.smem_bytes)


def stream_k_launch(parts: LaunchParts) -> StructLaunch:
    """Kernel 5.12's launch: tensor_map_launch's arguments, then the stream-K split of the problem on this
    GPU (tcgemm.engine.stream_k.split, one cluster per two SMs) and a workspace of its own: the slots of
    the pieces' sums and the tiles' counters, zero (each tile's last piece sets its counter back to zero,
    so the launch may be repeated; launches of one PreparedGemm must not run at once on two streams)."""
    spec, cupy = parts.spec, require_gpu()
    clusters = device_info().sm_count // spec.cluster
    sk = split(spec.cluster_tiles(parts.M, parts.N), -(-parts.A.shape[1] // spec.tile_k), clusters)
    partials = cupy.empty(max(1, sk.partial_floats(spec.tile_n)), dtype=cupy.float32)
    counts = cupy.zeros(max(1, sk.counters), dtype=cupy.uint32)
    args = _map_args(parts) + (partials, counts, np.int32(sk.sk_tiles), np.int32(sk.runs))
    return StructLaunch(parts.fn, (sk.grid_clusters * spec.cluster, 1, 1), spec.block, args, spec.smem_bytes)


def _map_args(parts: LaunchParts) -> tuple:
    spec = parts.spec
    tile_maps = gemm_maps(spec, parts.M, parts.N, parts.K, leading_dimension(parts.A, spec.a_order),
                          leading_dimension(parts.B, spec.b_order))
    maps = tuple(encode(m, x.data.ptr) for m, x in zip(tile_maps, (parts.A, parts.B)))
    if spec.signature.stores_c_by_tma:
        output = c_map(spec, parts.M, parts.N)
        maps += (np.zeros(MAP_BYTES, np.uint8) if output is None else encode(output, parts.out.data.ptr),)
    return maps + (parts.out, np.int32(parts.M), np.int32(parts.N), np.int32(parts.A.shape[1]))


register_builder(Signature.TENSOR_MAPS, tensor_map_launch)
register_builder(Signature.TENSOR_MAPS_AND_C, tensor_map_launch)
register_builder(Signature.STREAM_K, stream_k_launch)
