"""The catalog's per-architecture configuration (one function, read by the launchers' compile flags,
the shared-memory model and the pipelines chapter) and its per-kernel arithmetic."""
import pytest

from tcgemm import KERNEL_DIR
from tcgemm.arch import TARGET_ARCHS, arch_limits
from tcgemm.engine.catalog import GEMM_KERNELS, PROBES, WMMA_CASES, WMMA_KERNELS, configured, defines_for
from tcgemm.engine.kernel_types import MMA_ORDERS
from tcgemm.fragment_layouts import warp_tile_step


def test_each_target_gets_the_fastest_configuration_that_fits():
    # the pipelines chapter's table: BK = 64 and 4 stages (192 KB) fit sm_90 only, 3 stages (144 KB) sm_80
    chosen = {arch: configured("k4.0", arch) for arch in TARGET_ARCHS}
    assert {arch: (k.tile_k, k.stages, k.smem_bytes // 1024) for arch, k in chosen.items()} == {
        "sm_80": (64, 3, 144), "sm_86": (32, 4, 96), "sm_89": (32, 4, 96), "sm_90": (64, 4, 192)}
    for arch, k in chosen.items():
        assert k.smem_bytes <= arch_limits(arch).max_smem_per_block
    assert configured("k4.0") == chosen["sm_90"]          # None: the target that allows the most
    assert configured("k2.1", "sm_86") is GEMM_KERNELS["k2.1"]   # nothing to configure


def test_compile_flags_are_the_configurations():
    k = GEMM_KERNELS["k4.1"]
    assert defines_for(k.source, "sm_80") == configured("k4.1", "sm_80").defines == (("BK", 64), ("N_STAGES", 3))
    assert defines_for(PROBES["mma"].source, "sm_90") == ()


def test_unknown_kernel_or_arch_is_named():
    with pytest.raises(KeyError, match="unknown kernel 'k9'.*k1.0"):
        configured("k9", "sm_90")
    with pytest.raises(ValueError, match="unknown arch 'sm_75'; the book targets sm_80, sm_86, sm_89, sm_90"):
        configured("k4.0", "sm_75")


def test_intensity_and_warp_tile_arithmetic_of_the_first_kernels():
    # mma_fragments: 1.0's 16 x 8 warp tile needs 12 fp16 loads per lane per mma, 1.1's 32 x 16 needs 6
    assert warp_tile_step("m16n8k16.f32", 16, 8) == (1, 12.0)
    assert warp_tile_step("m16n8k16.f32", 32, 16) == (4, 6.0)
    assert warp_tile_step("m16n8k16.f32", 64, 64) == (32, 2.0)   # Kernel 4.0
    with pytest.raises(ValueError, match="multiple of 16 x 8, got 24 x 8"):
        warp_tile_step("m16n8k16.f32", 24, 8)
    assert GEMM_KERNELS["k1.0"].flop_per_global_byte == 16 and GEMM_KERNELS["k1.1"].flop_per_global_byte == 32
    assert GEMM_KERNELS["s1"].flop_per_global_byte == 16      # fp32: 4 bytes per element


def test_one_name_per_kernel():
    """The key is the kernel's one name: its file, its entry point's file and the book's title follow it."""
    label = {"k": lambda k: f"Kernel {k[1:]}", "s": lambda k: f"Kernel {k.upper()}", "h": lambda k: "HGEMM",
             "a": lambda k: "Ablation",
             "d": lambda k: f"Kernel {k.upper()}"}
    for key, spec in GEMM_KERNELS.items():
        assert spec.source == f"{key}_{spec.entry}.cu", key
        assert (KERNEL_DIR / spec.source).is_file(), spec.source
        assert spec.title.startswith(label[key[0]](key) + ": "), (key, spec.title)
    for key, spec in WMMA_KERNELS.items():
        assert spec.source == f"{key}_{spec.entry}.cu" and (KERNEL_DIR / spec.source).is_file(), key
        assert spec.title.startswith(f"Kernel {key.upper()}: "), (key, spec.title)
    cu_files = {p.name for p in KERNEL_DIR.glob("*.cu")}
    assert cu_files == {s.source for s in GEMM_KERNELS.values()} | {p.source for p in PROBES.values()} | \
        {w.source for w in WMMA_KERNELS.values()}


def test_wmma_cases_are_the_four_memory_order_pairs_compiled_in():
    assert sorted(WMMA_CASES.values()) == [("C", "C"), ("C", "F"), ("F", "C"), ("F", "F")]
    w = WMMA_KERNELS["w1.0"]
    assert w.defines(*WMMA_CASES["A^T B"]) == (("A_COL_MAJOR", 1), ("B_COL_MAJOR", 0))
    assert w.claims(*MMA_ORDERS) == w.sass and w.claims("F", "F") == w.sass + w.repack_sass
    assert w.block == (256, 1, 1) and w.grid(48, 80) == (3, 1, 1)   # 8 warps cover 64 x 32 of D
    with pytest.raises(ValueError, match="A's memory order must be 'C' .* got 'K'"):
        w.defines("K", "C")

