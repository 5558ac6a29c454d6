"""tcgemm.pipelines.occupancy: hand-computed occupancy cases, its errors, the -res-usage parser, and (with
nvcc and cuobjdump) the resources nvcc really gives Kernel 2.1."""
from __future__ import annotations

import subprocess

import pytest

from tcgemm import KERNEL_DIR
from tcgemm.arch import ARCH_LIMITS
from tcgemm.engine.catalog import GEMM_KERNELS, defines_for
from tcgemm.pipelines.occupancy import occupancy, parse_res_usage
from required import require_cuda_tool


def test_arch_limits():
    assert {a: (l.max_warps_per_sm, l.max_blocks_per_sm, l.smem_per_sm, l.max_smem_per_block)
            for a, l in ARCH_LIMITS.items()} == {
        "sm_80": (64, 32, 167936, 166912),
        "sm_86": (48, 16, 102400, 101376),
        "sm_89": (48, 24, 102400, 101376),
        "sm_90": (64, 32, 233472, 232448),
    }
    for lim in ARCH_LIMITS.values():
        assert (lim.registers_per_sm, lim.reg_alloc_unit, lim.max_regs_per_thread) == (65536, 256, 255)
        assert (lim.smem_reserved_per_block, lim.smem_alloc_unit) == (1024, 128)
        # the opt-in maximum plus the reserve is exactly what an SM has
        assert lim.max_smem_per_block + lim.smem_reserved_per_block == lim.smem_per_sm


def test_registers_bind_on_sm_90():
    # 232 * 32 = 7424 registers per warp (already a multiple of 256); 65536 // 7424 = 8 warps = 1
    # block of 8 warps; shared: 233472 // (98304 + 1024) = 2; warps: 64 // 8 = 8
    occ = occupancy("sm_90", 256, 232, 98304)
    assert (occ.blocks_by_warps, occ.blocks_by_regs, occ.blocks_by_smem, occ.blocks_by_limit) == (8, 1, 2, 32)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limiter) == (1, 8, "registers")
    assert str(occ) == ("sm_90: 256 threads, 232 registers, 96.0 KB shared -> 1 block per SM "
                        "(8 warps), limited by registers")


def test_tie_names_both_on_sm_86():
    # 128 * 32 = 4096 per warp -> 16 warps -> 2 blocks; 102400 // 50176 = 2; 48 // 8 = 6
    occ = occupancy("sm_86", 256, 128, 48 * 1024)
    assert (occ.blocks_by_warps, occ.blocks_by_regs, occ.blocks_by_smem, occ.blocks_by_limit) == (6, 2, 2, 16)
    assert (occ.blocks_per_sm, occ.warps_per_sm) == (2, 16)
    assert occ.limiter == "registers and shared memory"
    assert str(occ).endswith("-> 2 blocks per SM (16 warps), limited by registers and shared memory")


def test_register_rounding_is_per_warp():
    # 40 * 32 = 1280 = 5 * 256 -> 51 warps -> 12 blocks of 4 warps (not 16 by warps)
    occ = occupancy("sm_80", 128, 40, 0)
    assert (occ.blocks_by_warps, occ.blocks_by_regs) == (16, 12)
    assert (occ.blocks_per_sm, occ.limiter) == (12, "registers")
    # 33 * 32 = 1056 rounds up to 1280 too
    assert occupancy("sm_80", 128, 33, 0).blocks_by_regs == 12
    # 32 * 32 = 1024 -> 64 warps -> 16 blocks, tying with the warp limit
    assert occupancy("sm_80", 128, 32, 0).limiter == "warps and registers"


def test_warps_bind():
    # 24 * 32 = 768 per warp -> 85 warps -> 21 blocks; 64 // 4 = 16; shared 167936 // 1024 = 164
    occ = occupancy("sm_80", 128, 24, 0)
    assert (occ.blocks_by_warps, occ.blocks_by_regs, occ.blocks_by_smem) == (16, 21, 164)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limiter) == (16, 64, "warps")


def test_block_limit_binds_and_reserve_applies_to_zero_smem():
    occ = occupancy("sm_89", 32, 24, 0)
    assert occ.blocks_by_smem == 102400 // 1024
    assert (occ.blocks_by_warps, occ.blocks_per_sm, occ.limiter) == (48, 24, "blocks")


def test_shared_memory_rounds_to_128_after_the_reserve():
    # 1 + 1024 -> 1152; 102400 // 1152 = 88 (without rounding it would be 99)
    assert occupancy("sm_86", 32, 16, 1).blocks_by_smem == 88
    # the largest opt-in allocation fills the SM exactly once
    for arch, lim in ARCH_LIMITS.items():
        occ = occupancy(arch, 128, 32, lim.max_smem_per_block)
        assert (occ.blocks_by_smem, occ.blocks_per_sm, occ.limiter) == (1, 1, "shared memory")


def test_zero_blocks_when_registers_cannot_fit():
    # 255 regs -> 8192 per warp -> 8 warps, fewer than one 32-warp block
    occ = occupancy("sm_90", 1024, 255, 0)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.limiter) == (0, 0, "registers")
    assert "-> 0 blocks per SM (0 warps)" in str(occ)


@pytest.mark.parametrize("args, message", [
    (("sm_75", 128, 32, 0), "unknown arch 'sm_75'; the book targets sm_80, sm_86, sm_89, sm_90"),
    (("sm_80", 0, 32, 0), "positive multiple of 32 and at most 1024, got 0"),
    (("sm_80", 100, 32, 0), "positive multiple of 32 and at most 1024, got 100"),
    (("sm_80", 1056, 32, 0), "positive multiple of 32 and at most 1024, got 1056"),
    (("sm_80", -32, 32, 0), "threads_per_block is negative (-32)"),
    (("sm_80", 128, 256, 0), "regs_per_thread must be 1 to 255, got 256"),
    (("sm_80", 128, 0, 0), "regs_per_thread must be 1 to 255, got 0"),
    (("sm_80", 128, -1, 0), "regs_per_thread is negative (-1)"),
    (("sm_80", 128, 32, -1), "smem_per_block is negative (-1)"),
    (("sm_86", 128, 32, 101377), "smem_per_block 101377 bytes exceeds sm_86's limit of 99 KB per block"),
    (("sm_80", 128, 32, 166913), "exceeds sm_80's limit of 163 KB per block"),
    (("sm_90", 128, 32, 232449), "exceeds sm_90's limit of 227 KB per block"),
])
def test_errors(args, message):
    with pytest.raises(ValueError) as err:
        occupancy(*args)
    assert message in str(err.value)


SAME_LINE = """
Resource usage:
 Common:
  GLOBAL:0
 Function permuted_smem: REG:40 STACK:0 SHARED:8192 LOCAL:0 CONSTANT[0]:920 TEXTURE:0 SURFACE:0 SAMPLER:0
"""

NEXT_LINE = """
Resource usage:
 Common:
  GLOBAL:0
 Function _Z5naivePK6__halfS1_Pfiii:
  REG:255 STACK:16 SHARED:0 LOCAL:24 CONSTANT[0]:388 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function permuted_smem_a_once:
  REG:63 STACK:0 SHARED:9216 LOCAL:0 CONSTANT[0]:564 TEXTURE:0 SURFACE:0 SAMPLER:0
"""


def test_parse_res_usage_same_line():
    assert parse_res_usage(SAME_LINE) == {
        "permuted_smem": {"registers": 40, "shared": 8192, "local": 0, "stack": 0}}


def test_parse_res_usage_next_line_two_functions():
    assert parse_res_usage(NEXT_LINE) == {
        "_Z5naivePK6__halfS1_Pfiii": {"registers": 255, "shared": 0, "local": 24, "stack": 16},
        "permuted_smem_a_once": {"registers": 63, "shared": 9216, "local": 0, "stack": 0},
    }


def test_parse_res_usage_does_not_borrow_from_the_next_function():
    text = " Function broken:\n Function fine:\n  REG:8 STACK:0 SHARED:0 LOCAL:0\n"
    with pytest.raises(ValueError, match="no REG: value after 'Function broken:'"):
        parse_res_usage(text)


def test_parse_res_usage_rejects_duplicates_and_accepts_no_functions():
    with pytest.raises(ValueError, match="'permuted_smem' appears twice"):
        parse_res_usage(SAME_LINE + SAME_LINE)
    assert parse_res_usage("Resource usage:\n Common:\n  GLOBAL:0\n") == {}


# Kernel 2.1 declares two static tiles of 64 * 4 uint4 = 4 KB each. For sm_90 nvcc (13.0) also
# counts the 1 KB system reserve in SHARED (the cubin's .nv.shared.reserved.0 section).
KERNEL_SMEM = 2 * 64 * 4 * 16
RESERVE_IN_SHARED = {"sm_80": 0, "sm_90": 1024}


def resources(tmp_path, spec, arch):
    """`cuobjdump -res-usage` of a catalog kernel compiled by nvcc for `arch` as its launcher configures
    it there, parsed: (usage of its entry, the listing)."""
    nvcc, cuobjdump = require_cuda_tool("nvcc"), require_cuda_tool("cuobjdump")
    cubin = tmp_path / f"{spec.key}.{arch}.cubin"
    defines = [f"-D{name}={value}" for name, value in defines_for(spec.source, arch)]
    done = subprocess.run([nvcc, "-cubin", f"-arch={arch}", "-I", str(KERNEL_DIR), *defines, "-o", str(cubin),
                           str(KERNEL_DIR / spec.source)], capture_output=True, text=True)
    assert done.returncode == 0, f"nvcc failed on {spec.source} for {arch}:\n{done.stderr}"
    listing = subprocess.run([cuobjdump, "-res-usage", str(cubin)], check=True, capture_output=True,
                             text=True).stdout
    return parse_res_usage(listing)[spec.entry], listing


@pytest.mark.parametrize("arch", list(RESERVE_IN_SHARED))
def test_kernel_2_1_resources(tmp_path, arch):
    usage, listing = resources(tmp_path, GEMM_KERNELS["k2.1"], arch)
    assert usage["shared"] == KERNEL_SMEM + RESERVE_IN_SHARED[arch], listing
    assert 0 < usage["registers"] <= 255 and usage["local"] == 0, listing
    assert occupancy(arch, 256, usage["registers"], KERNEL_SMEM).blocks_per_sm >= 1


@pytest.mark.slow     # nvcc on every kernel up to 4.0
@pytest.mark.parametrize("arch", list(RESERVE_IN_SHARED))
def test_registers_allow_two_blocks_per_sm_until_kernel_4_0(tmp_path, arch):
    """Kernels 3.1 to 3.6 keep within 128 registers per thread, so registers leave room for two blocks
    of 256 threads per SM (3.1 and 3.4 on by __launch_bounds__(256, 2), 3.2 and 3.3 by ptxas's choice);
    the 64 x 64 warp tiles of 4.0 need more: one block."""
    for key in ("k3.1", "k3.2", "k3.3", "k3.4", "k3.5", "k3.6", "k4.0"):
        spec = GEMM_KERNELS[key]
        usage, _ = resources(tmp_path, spec, arch)
        blocks = occupancy(arch, spec.threads, usage["registers"], 0).blocks_by_regs
        assert (blocks, usage["local"]) == (1 if key == "k4.0" else 2, 0), (key, usage)
