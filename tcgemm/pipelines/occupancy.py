"""How many blocks of a kernel fit on one SM, the way the CUDA occupancy calculator counts them,
and the per-kernel resources that `cuobjdump -res-usage` reports. Pure: no GPU, no tools. The
per-SM limits are tcgemm.arch's."""
from __future__ import annotations

import re
from dataclasses import dataclass

from tcgemm.arch import arch_limits

WARP = 32


@dataclass(frozen=True)
class Occupancy:
    """Blocks per SM allowed by each resource, the minimum of them, and which one binds."""

    arch: str
    threads_per_block: int
    regs_per_thread: int
    smem_per_block: int
    blocks_by_warps: int
    blocks_by_regs: int
    blocks_by_smem: int
    blocks_by_limit: int
    blocks_per_sm: int
    warps_per_sm: int
    limiter: str

    def __str__(self) -> str:
        blocks = "block" if self.blocks_per_sm == 1 else "blocks"
        return (f"{self.arch}: {self.threads_per_block} threads, {self.regs_per_thread} registers, "
                f"{self.smem_per_block / 1024:.1f} KB shared -> {self.blocks_per_sm} {blocks} per SM "
                f"({self.warps_per_sm} warps), limited by {self.limiter}")


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def occupancy(arch: str, threads_per_block: int, regs_per_thread: int,
              smem_per_block: int) -> Occupancy:
    """Resident blocks per SM of a kernel with these resources on `arch`.
    `smem_per_block` is static plus dynamic shared memory in bytes, without the system reserve."""
    lim = arch_limits(arch)
    for name, value in (("threads_per_block", threads_per_block),
                        ("regs_per_thread", regs_per_thread), ("smem_per_block", smem_per_block)):
        if value < 0:
            raise ValueError(f"{name} is negative ({value})")
    if threads_per_block == 0 or threads_per_block % WARP or threads_per_block > lim.max_threads_per_block:
        raise ValueError(f"threads_per_block must be a positive multiple of {WARP} and at most "
                         f"{lim.max_threads_per_block}, got {threads_per_block}")
    if not 1 <= regs_per_thread <= lim.max_regs_per_thread:
        raise ValueError(f"regs_per_thread must be 1 to {lim.max_regs_per_thread}, got {regs_per_thread}")
    if smem_per_block > lim.max_smem_per_block:
        raise ValueError(f"smem_per_block {smem_per_block} bytes exceeds {arch}'s limit of "
                         f"{lim.max_smem_per_block // 1024} KB per block")

    warps_per_block = threads_per_block // WARP
    regs_per_warp = _round_up(regs_per_thread * WARP, lim.reg_alloc_unit)
    smem_alloc = _round_up(smem_per_block + lim.smem_reserved_per_block, lim.smem_alloc_unit)
    by = {
        "warps": lim.max_warps_per_sm // warps_per_block,
        "registers": lim.registers_per_sm // regs_per_warp // warps_per_block,
        "shared memory": lim.smem_per_sm // smem_alloc,
        "blocks": lim.max_blocks_per_sm,
    }
    blocks = min(by.values())
    return Occupancy(
        arch=arch, threads_per_block=threads_per_block, regs_per_thread=regs_per_thread,
        smem_per_block=smem_per_block, blocks_by_warps=by["warps"], blocks_by_regs=by["registers"],
        blocks_by_smem=by["shared memory"], blocks_by_limit=by["blocks"], blocks_per_sm=blocks,
        warps_per_sm=blocks * warps_per_block,
        limiter=" and ".join(name for name, n in by.items() if n == blocks),
    )


_FUNCTION = re.compile(r"^\s*Function\s+(\S+?):(?=\s|$)", re.MULTILINE)
_FIELDS = {"registers": "REG", "shared": "SHARED", "local": "LOCAL", "stack": "STACK"}


def parse_res_usage(text: str) -> dict[str, dict]:
    """{entry: {"registers", "shared", "local", "stack"}} from `cuobjdump -res-usage` output.
    SHARED is the static shared memory as the cubin records it (for sm_90, nvcc 13 counts the
    1 KB system reserve in it)."""
    headers = list(_FUNCTION.finditer(text))
    usage: dict[str, dict] = {}
    for i, header in enumerate(headers):
        name = header.group(1)
        end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
        body = text[header.end():end]
        entry = {}
        for key, label in _FIELDS.items():
            found = re.search(rf"\b{label}:(\d+)", body)
            if found is None and key != "stack":
                raise ValueError(f"no {label}: value after 'Function {name}:'")
            entry[key] = int(found.group(1)) if found else 0
        if name in usage:
            raise ValueError(f"function {name!r} appears twice (several cubins in one listing?)")
        usage[name] = entry
    return usage
