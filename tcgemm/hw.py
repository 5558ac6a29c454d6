"""Tensor Core peaks of the GPUs readers use, and the time bounds they imply. Pure module.

Peaks are dense (no 2:4 sparsity) FP16-input, FP32-accumulate Tensor Core rates in TFLOP/s, as NVIDIA
publishes them, each at the clock NVIDIA computes it with (`tensor_clock_mhz`, where stated). That is not
always the highest clock the driver reports: the H100 SXM5's 989.4 TFLOP/s is 132 SMs x 4096 FLOP per
clock x 1830 MHz, while its driver reports a boost clock of 1980 MHz. GeForce parts run FP32
accumulation at half their FP16-accumulate rate; data-centre parts run both at the same rate. `fp32` is
the CUDA-core FP32 (FFMA, non-tensor) rate, the peak of the SGEMM kernels. `by_type` holds the same
document's dense Tensor Core rates for the other input types (fp16 with fp16 accumulation, bf16, tf32,
fp8, int8 in TOP/s), where it states them; `rate` looks one up. The figures are datasheet numbers, not
measurements.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


_FP8 = ("e4m3", "e5m2")


@dataclass(frozen=True)
class Peak:
    label: str
    tflops: float
    source: str
    fp32: float | None = None
    tensor_clock_mhz: float | None = None   # the SM clock the published Tensor Core peak assumes
    by_type: tuple[tuple[str, str, float], ...] = ()   # (A/B type, accumulator type, dense rate)

    def rate(self, ab_type: str, acc_type: str) -> float | None:
        """The published dense rate of mma with these A/B and accumulator types (PTX names: f16, bf16,
        tf32, e4m3, e5m2, s8; f32, f16, s32), or None where the document states none."""
        if (ab_type, acc_type) == ("f16", "f32"):
            return self.tflops
        key = ("fp8" if ab_type in _FP8 else ab_type, acc_type)
        return next((r for ab, acc, r in self.by_type if (ab, acc) == key), None)


def _by_type(bf16: float, tf32: float, s8: float, fp8: float | None = None,
             f16_acc: float | None = None) -> tuple[tuple[str, str, float], ...]:
    """Peak.by_type from a document's dense rates: bf16 and fp8 with fp32 accumulation, tf32, int8
    (TOP/s), fp16 with fp16 accumulation; None where it gives no number."""
    rates = (("bf16", "f32", bf16), ("tf32", "f32", tf32), ("s8", "s32", s8), ("fp8", "f32", fp8),
             ("f16", "f16", f16_acc))
    return tuple(r for r in rates if r[2] is not None)


# (pattern matched against the CUDA device name, peak). First match wins: keep specific names first.
_PEAKS: tuple[tuple[str, Peak], ...] = (
    (r"RTX 4090", Peak("GeForce RTX 4090", 165.2,
                       "NVIDIA Ada Lovelace GPU architecture whitepaper: FP16 Tensor TFLOPS with FP32 accumulate, dense", fp32=82.6,
                       tensor_clock_mhz=2520,
                       by_type=_by_type(bf16=165.2, tf32=82.6, s8=660.6, fp8=330.3, f16_acc=330.3))),
    (r"RTX 3090", Peak("GeForce RTX 3090", 71.0,
                       "NVIDIA Ampere GA102 GPU architecture whitepaper: FP16 Tensor TFLOPS with FP32 accumulate, dense", fp32=35.6,
                       tensor_clock_mhz=1695, by_type=_by_type(bf16=71.0, tf32=35.6, s8=284.0, f16_acc=142.0))),
    (r"\bA100\b", Peak("A100 (SXM4 or PCIe)", 312.0,
                       "NVIDIA A100 Tensor Core GPU datasheet: FP16 Tensor Core, dense", fp32=19.5,
                       tensor_clock_mhz=1410, by_type=_by_type(bf16=312.0, tf32=156.0, s8=624.0))),
    (r"\bA10\b", Peak("A10", 125.0, "NVIDIA A10 datasheet: FP16 Tensor Core, dense", fp32=31.2,
                       by_type=_by_type(bf16=125.0, tf32=62.5, s8=250.0))),
    (r"\bL4\b", Peak("L4", 121.0, "NVIDIA L4 datasheet: FP16 Tensor Core 242 TFLOP/s with sparsity, halved", fp32=30.3,
                      by_type=_by_type(bf16=121.0, tf32=60.0, s8=242.5, fp8=242.5))),
    (r"H100.*PCIe", Peak("H100 PCIe", 756.5,
                         "NVIDIA H100 datasheet: FP16 Tensor Core 1,513 TFLOP/s with sparsity, halved", fp32=51.2,
                         by_type=_by_type(bf16=756.5, tf32=378.0, s8=1513.0, fp8=1513.0))),
    (r"H100.*NVL", Peak("H100 NVL", 835.5,
                        "NVIDIA H100 datasheet: FP16 Tensor Core 1,671 TFLOP/s with sparsity, halved", fp32=60.0,
                        by_type=_by_type(bf16=835.5, tf32=417.5, s8=1670.5, fp8=1670.5))),
    (r"H100", Peak("H100 SXM5", 989.4, "NVIDIA H100 Tensor Core GPU architecture whitepaper: FP16 Tensor, dense", fp32=66.9,
                   tensor_clock_mhz=1830,
                   by_type=_by_type(bf16=989.4, tf32=494.7, s8=1978.9, fp8=1978.9, f16_acc=989.4))),
    (r"H200", Peak("H200 SXM", 989.4,
                   "NVIDIA H200 datasheet: FP16 Tensor Core 1,979 TFLOP/s with sparsity, halved", fp32=66.9,
                   # The datasheet states no clock; the H200 is the H100 SXM5's die with more memory, and
                   # its peak is 132 SMs x 4096 FLOP x 1830 MHz to 4 digits (tests/test_hw.py), as the H100's.
                   tensor_clock_mhz=1830,
                   by_type=_by_type(bf16=989.5, tf32=494.5, s8=1979.0, fp8=1979.0))),
)


def known_peaks() -> list[Peak]:
    return [p for _, p in _PEAKS]


def peak_for(device_name: str) -> Peak | None:
    """The datasheet peak for a CUDA device name such as 'NVIDIA GeForce RTX 4090', or None if unknown."""
    for pattern, peak in _PEAKS:
        if re.search(pattern, device_name):
            return peak
    return None


def tensor_flop_per_clock_per_sm(peak: Peak, sm_count: int) -> float | None:
    """Dense fp16-in, fp32-accumulate FLOP one SM completes per clock at the published peak, or None
    where NVIDIA states no clock for it."""
    if peak.tensor_clock_mhz is None:
        return None
    return flop_per_clock_per_sm(peak.tflops, sm_count, peak.tensor_clock_mhz)


def flop_per_clock_per_sm(tflops: float, sm_count: int, clock_mhz: float) -> float:
    """FLOP one SM completes per clock when `sm_count` SMs at `clock_mhz` run at `tflops` TFLOP/s."""
    if min(tflops, sm_count, clock_mhz) <= 0:
        raise ValueError(f"tflops, sm_count and clock_mhz must be positive, got {tflops}, {sm_count}, {clock_mhz}")
    return tflops * 1e12 / (sm_count * clock_mhz * 1e6)


def gemm_flops(M: int, N: int, K: int) -> int:
    """Floating-point operations of C = A @ B, counting one multiply-add as two."""
    return 2 * M * N * K


MMA_FLOP = gemm_flops(16, 8, 16)   # one mma.sync m16n8k16, the instruction of the book's kernels


def lower_bound_seconds(M: int, N: int, K: int, peak_tflops: float) -> float:
    """The shortest time the GEMM can take at the given peak rate."""
    if peak_tflops <= 0:
        raise ValueError(f"peak_tflops must be positive, got {peak_tflops}")
    return gemm_flops(M, N, K) / (peak_tflops * 1e12)


def tflops(M: int, N: int, K: int, seconds: float) -> float:
    if seconds <= 0:
        raise ValueError(f"a time must be positive, got {seconds}")
    return gemm_flops(M, N, K) / seconds / 1e12


def mma_count(M: int, N: int, K: int, m: int = 16, n: int = 8, k: int = 16) -> int:
    """How many m16n8k16 (by default) mma instructions cover the problem."""
    for total, tile, name in ((M, m, "M"), (N, n, "N"), (K, k, "K")):
        if total % tile:
            raise ValueError(f"{name}={total} is not a multiple of the mma tile {tile}")
    return (M // m) * (N // n) * (K // k)


def mma_cycles_text(gpu: str, sm_count: int, sm_clock_mhz: float, peak: Peak | None,
                    median_seconds: dict[str, float], M: int = 4096, N: int = 4096, K: int = 4096) -> str:
    """How many m16n8k16 each Tensor Core (4 per SM) runs in an M x N x K product, the datasheet's
    cycles per mma (where the peak states a clock), and each timed kernel's cycles per mma: its
    median seconds x sm_clock_mhz over that count."""
    per_core = mma_count(M, N, K) / (4 * sm_count)
    lines = [f"{gpu}: {per_core:,.0f} mma per Tensor Core"]
    per_clock = tensor_flop_per_clock_per_sm(peak, sm_count) if peak else None
    if per_clock:
        lines.append(f"datasheet rate: {per_clock:.0f} FLOP per clock per SM, so one m16n8k16 takes "
                     f"{MMA_FLOP / (per_clock / 4):.1f} cycles")
    lines.append(f"below: median time x {sm_clock_mhz:.0f} MHz, the driver's highest clock")
    clock_hz = sm_clock_mhz * 1e6
    lines += [f"{name:<52} {seconds * clock_hz / per_core:6.1f} cycles per mma"
              for name, seconds in median_seconds.items()]
    return "\n".join(lines)

