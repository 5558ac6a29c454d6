"""wgmma's single-bit type b1 (m64nNk256, .and.popc) in tcgemm.hopper.wgmma, and ptxas taking the
listed b1 shapes only (needs an NVRTC with its headers, as tests/test_wgmma_sass.py)."""
import pytest

from tcgemm.errors import KernelCompileError
from tcgemm.hopper.wgmma import WGMMA_TYPES, shapes_table, wgmma_instruction, wgmma_shape
from tcgemm.engine.gpu.nvrtc_offline import compile_source_text, find_toolkit
from required import skip_or_fail


def test_b1_shapes_follow_the_ptx_isa():
    assert wgmma_shape(8, "b1") == "m64n8k256" and wgmma_shape(256, "b1") == "m64n256k256"
    assert WGMMA_TYPES["b1"].n_values == WGMMA_TYPES["s8"].n_values
    assert wgmma_instruction(48, "b1") == "wgmma.mma_async.sync.aligned.m64n48k256.s32.b1.b1.and.popc"
    with pytest.raises(ValueError, match="got 40"):
        wgmma_shape(40, "b1")
    row = shapes_table().rows[-1]
    assert row[0] == "b1" and row[1] == 256 and row[-1] == "m64n256k256"


def _b1_kernel(n: int) -> str:
    registers = n // 2
    outs = ", ".join(f'"+r"(d[{i}])' for i in range(registers))
    regs = ", ".join(f"%{i}" for i in range(registers))
    return f"""extern "C" __global__ void k(int *out, unsigned long long a, unsigned long long b) {{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    int d[{registers}] = {{}};
    asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{registers + 2}, 0;\\n"
                 "{wgmma_instruction(8, "b1").replace("n8k", f"n{n}k")} "
                 "{{{regs}}}, %{registers}, %{registers + 1}, p;\\n}}\\n"
                 : {outs} : "l"(a), "l"(b), "r"(1));
    for (int i = 0; i < {registers}; ++i) out[i] = d[i];
#endif
}}"""


@pytest.mark.parametrize("n, accepted", [(8, True), (48, True), (256, True), (40, False), (264, False)])
def test_ptxas_takes_the_listed_b1_shapes_only(n, accepted):
    kit = find_toolkit(13)
    if kit is None:
        skip_or_fail("TCGEMM_REQUIRE_NVRTC", "no NVRTC with its headers for CUDA 13")
    assert (n in WGMMA_TYPES["b1"].n_values) == accepted
    try:
        compile_source_text(_b1_kernel(n), "b1.cu", "sm_90a", (), kit)
        compiled = True
    except KernelCompileError as exc:
        assert "shape" in str(exc) or "modifier" in str(exc), str(exc)
        compiled = False
    assert compiled == accepted
