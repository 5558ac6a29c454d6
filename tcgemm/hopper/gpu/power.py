"""Run a kernel back to back for a while and read NVML beside it (tcgemm.hopper.power): the SM clock, the
board's power and limit, the clock event reasons. NVML is libnvidia-ml, installed with the NVIDIA
driver; it is loaded through ctypes, so nothing else needs installing."""
from __future__ import annotations

import ctypes
import sys
import threading
import time
from functools import lru_cache

import numpy as np

from tcgemm.engine import ceiling as ceiling_model
from tcgemm.errors import TcgemmError
from tcgemm.hopper.power import Sample, Sustained
from tcgemm.engine.gpu.bench import on_random_operands, runner
from tcgemm.engine.gpu.ceiling import prepare as prepare_ceiling
from tcgemm.engine.gpu.device import require_gpu
from tcgemm.engine.gpu.timing import L2Flush

LIBRARY = "nvml.dll" if sys.platform == "win32" else "libnvidia-ml.so.1"
SAMPLE_EVERY_S = 0.02
CHUNK_S = 0.01
NVML_CLOCK_SM, NVML_TEMPERATURE_GPU, NVML_FI_DEV_POWER_INSTANT = 1, 0, 186
NVML_ERROR_NOT_SUPPORTED = 3


class NvmlError(TcgemmError, RuntimeError):
    """NVML could not be loaded, or refused a reading this module needs."""


class _Value(ctypes.Union):
    _fields_ = [("d", ctypes.c_double), ("ui", ctypes.c_uint), ("ul", ctypes.c_ulong),
                ("ull", ctypes.c_ulonglong), ("sll", ctypes.c_longlong)]


class _FieldValue(ctypes.Structure):            # nvmlFieldValue_t
    _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint), ("timestamp", ctypes.c_longlong),
                ("latencyUsec", ctypes.c_longlong), ("valueType", ctypes.c_int), ("nvmlReturn", ctypes.c_int),
                ("value", _Value)]


class Nvml:
    """The NVML device of a PCI bus id ("0000:00:06.0", as CUDA names it)."""

    def __init__(self, pci_bus_id: str, library: str = LIBRARY):
        try:
            self.lib = ctypes.CDLL(library)
        except OSError as e:
            raise NvmlError(f"NVML ({library}, installed with the NVIDIA driver) could not be loaded: {e}") from None
        self._call("nvmlInit_v2")
        self.device = ctypes.c_void_p()
        self._call("nvmlDeviceGetHandleByPciBusId_v2", pci_bus_id.encode(), ctypes.byref(self.device))
        reasons = "nvmlDeviceGetCurrentClocksEventReasons"
        self._reasons = reasons if hasattr(self.lib, reasons) else "nvmlDeviceGetCurrentClocksThrottleReasons"

    def _call(self, name: str, *args, optional: bool = False) -> bool:
        code = getattr(self.lib, name)(*args)
        if code == 0:
            return True
        if optional and code == NVML_ERROR_NOT_SUPPORTED:
            return False
        self.lib.nvmlErrorString.restype = ctypes.c_char_p
        raise NvmlError(f"NVML {name} failed: {self.lib.nvmlErrorString(code).decode()} (code {code})")

    def _uint(self, name: str, *args, optional: bool = False) -> int | None:
        out = ctypes.c_uint()
        return out.value if self._call(name, self.device, *args, ctypes.byref(out), optional=optional) else None

    def limit_w(self) -> float | None:
        mw = self._uint("nvmlDeviceGetEnforcedPowerLimit", optional=True)
        return None if mw is None else mw / 1000

    def power_w(self) -> float | None:
        """The board's power now where NVML has an instantaneous reading, else its own average."""
        field = _FieldValue(fieldId=NVML_FI_DEV_POWER_INSTANT)
        if (hasattr(self.lib, "nvmlDeviceGetFieldValues")
                and self.lib.nvmlDeviceGetFieldValues(self.device, 1, ctypes.byref(field)) == 0
                and field.nvmlReturn == 0):
            return field.value.ui / 1000
        mw = self._uint("nvmlDeviceGetPowerUsage", optional=True)
        return None if mw is None else mw / 1000

    def sample(self, t_s: float) -> Sample:
        reasons = ctypes.c_ulonglong()
        self._call(self._reasons, self.device, ctypes.byref(reasons))
        return Sample(t_s, float(self._uint("nvmlDeviceGetClockInfo", NVML_CLOCK_SM)), self.power_w(),
                      self._uint("nvmlDeviceGetTemperature", NVML_TEMPERATURE_GPU, optional=True), reasons.value)


@lru_cache(maxsize=None)
def nvml_for(device: int) -> Nvml:
    cupy = require_gpu()
    return Nvml(cupy.cuda.runtime.deviceGetPCIBusId(device))


def sustain(label: str, fn, seconds: float = 1.5, settle_s: float = 0.5, flush: bool = True,
            flop: float | None = None) -> Sustained:
    """Run `fn` (which enqueues one launch on the current stream) back to back for about `seconds`,
    each launch between two CUDA events (after an L2 flush with `flush`, not timed), while a thread
    reads NVML every SAMPLE_EVERY_S. Launches are queued in chunks of about CHUNK_S, at most two chunks
    ahead of the GPU, so the host never blocks inside CUDA with a full queue."""
    cupy = require_gpu()
    nvml = nvml_for(cupy.cuda.runtime.getDevice())
    flusher = L2Flush() if flush else (lambda: None)
    per_chunk = max(1, round(CHUNK_S / _one_run_s(cupy, fn, flusher)))
    chunks = max(2, round(seconds / CHUNK_S))
    starts = [cupy.cuda.Event() for _ in range(chunks * per_chunk)]
    ends = [cupy.cuda.Event() for _ in range(chunks * per_chunk)]
    samples, stop = [], threading.Event()
    t0 = time.perf_counter()

    def read():
        while not stop.is_set():
            samples.append(nvml.sample(time.perf_counter() - t0))
            time.sleep(SAMPLE_EVERY_S)

    sampler = threading.Thread(target=read, daemon=True)
    sampler.start()
    try:
        for c in range(chunks):
            while c >= 2 and not ends[(c - 1) * per_chunk - 1].done:
                time.sleep(0.001)
            for i in range(c * per_chunk, (c + 1) * per_chunk):
                flusher()
                starts[i].record()
                fn()
                ends[i].record()
        ends[-1].synchronize()
    finally:
        stop.set()
        sampler.join()
    elapsed = lambda a, b: cupy.cuda.get_elapsed_time(a, b) / 1e3
    launch_s = np.array([elapsed(s, e) for s, e in zip(starts, ends)])
    end_s = np.array([elapsed(starts[0], e) for e in ends])
    return Sustained(label, launch_s, end_s, tuple(samples), settle_s, nvml.limit_w(), flop, flush)


def _one_run_s(cupy, fn, flusher) -> float:
    """The GPU time of one run (flush and launch), the median of five after one to load and warm it."""
    times = []
    for _ in range(6):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        flusher()
        fn()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return float(np.median(times[1:]))


def sustained_gemms(keys=("cublas", "k5.6"), M: int = 4096, N: int = 4096, K: int = 4096,
                    seconds: float = 1.5, settle_s: float = 0.5) -> list[Sustained]:
    """Each kernel of `keys` (bench keys, "cublas" for cuBLAS) run back to back on fresh random
    operands, each launch after an L2 flush, in turn."""
    out = []
    for key in keys:
        r = runner(key)
        label = "cuBLAS" if r.spec is None else r.spec.short_title     # any cuBLAS baseline's key
        out.append(sustain(label, on_random_operands(r, M, N, K), seconds, settle_s, flop=2.0 * M * N * K))
    return out


def sustained_ceiling(warps_per_sm: int = 32, rounds: int = 1024, seconds: float = 1.5,
                      settle_s: float = 0.5) -> Sustained:
    """The mma.sync ceiling probe (tcgemm.engine.gpu.ceiling) run back to back, without L2 flushes, as the
    ceiling is measured."""
    launch, warps, _ = prepare_ceiling(warps_per_sm, rounds)
    flop = ceiling_model.flops(ceiling_model.DEFAULT_VARIANT, warps, rounds)
    return sustain("mma.sync ceiling probe", launch, seconds, settle_s, flush=False, flop=flop)
