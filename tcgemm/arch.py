"""The GPU architectures the book targets and their per-SM limits. Pure module.

The one table of these numbers: the catalog reads the shared memory a block may use to pick a
kernel's configuration, the occupancy model reads all of them, the shared-memory model and the SASS
tests iterate over the architectures. Values from the CUDA C Programming Guide (compute
capabilities); tests/gpu checks the shared memory against the driver of the GPU it runs on.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ArchLimits:
    """Per-SM limits of one architecture."""

    max_warps_per_sm: int
    max_blocks_per_sm: int
    smem_per_sm: int                     # usable by blocks, reserve included
    max_smem_per_block: int              # opt-in maximum, reserve excluded
    registers_per_sm: int = 65536
    reg_alloc_unit: int = 256            # registers, allocated per warp
    max_regs_per_thread: int = 255
    smem_reserved_per_block: int = 1024  # taken by the system from every block
    smem_alloc_unit: int = 128
    max_threads_per_block: int = 1024


ARCH_LIMITS: dict[str, ArchLimits] = {
    "sm_80": ArchLimits(64, 32, 164 * 1024, 163 * 1024),
    "sm_86": ArchLimits(48, 16, 100 * 1024, 99 * 1024),
    "sm_89": ArchLimits(48, 24, 100 * 1024, 99 * 1024),
    "sm_90": ArchLimits(64, 32, 228 * 1024, 227 * 1024),
}

TARGET_ARCHS = tuple(ARCH_LIMITS)


def arch_limits(arch: str) -> ArchLimits:
    """The limits of `arch` (e.g. "sm_90"); ValueError naming the known ones otherwise."""
    try:
        return ARCH_LIMITS[arch]
    except KeyError:
        raise ValueError(f"unknown arch {arch!r}; the book targets {', '.join(TARGET_ARCHS)}") from None


def arch_specific_target(arch: str) -> str:
    """The architecture-specific target of a GPU: sm_90 -> sm_90a. Its PTX features (wgmma,
    setmaxnreg) exist on that one architecture only, and NVRTC emits them only for the "a" target."""
    if arch != "sm_90":
        raise ValueError(f"the book's architecture-specific kernels target sm_90a (Hopper), not {arch}")
    return arch + "a"
