"""Kernel D1 (Kernel 4.6 for every input type of mma.sync) without a GPU: the catalog's variants per
type, the host encodings of tcgemm.numerics.elements, the operand checks, the fragment bytes the kernel relies
on, the refusal of fp8 before sm_89 (in Python and in the compiler), and its fp16 build: Kernel 4.6
line for line and instruction for instruction."""
from __future__ import annotations

import difflib
import functools
import re

import numpy as np
import pytest

from tcgemm.engine import source
from tcgemm.engine.catalog import ELEMENTS, GEMM_KERNELS, TARGET_ARCHS, configured
from tcgemm.engine.kernel_types import ITEMSIZE
from tcgemm.numerics.elements import decode, encode
from tcgemm.errors import KernelCompileError, OperandError, UnsupportedOnGPUError
from tcgemm.fragments.variants import register_bytes, register_bytes_table
from tcgemm.engine.plan import tile_named
from tcgemm.engine.operands import check_gemm_operands

D1 = GEMM_KERNELS["d1"]
VARIANTS = [e.variant for e in ELEMENTS.values()]


# ---- the catalog -------------------------------------------------------------------------------

def test_the_default_build_is_kernel_4_6_in_fp16():
    assert D1.element == "fp16" and D1.in_dtype == "float16" and (D1.a_order, D1.b_order) == ("C", "F")
    assert D1.defines == GEMM_KERNELS["k4.6"].defines + (("ELEMENT", 0),)
    assert D1.with_element("fp16") == D1


@pytest.mark.parametrize("name", list(ELEMENTS))
def test_each_type_keeps_the_tile_bytes_and_the_operand_orders(name):
    e = ELEMENTS[name]
    spec = configured("d1", "sm_90").with_element(name)
    assert (spec.in_dtype, spec.out_dtype) == (e.dtype, e.out_dtype)
    assert dict(spec.defines)["ELEMENT"] == e.code
    assert (spec.a_order, spec.b_order) == ("C", "F")       # tf32's float32 too, unlike the SGEMM kernels
    assert spec.tile_k * ITEMSIZE[e.dtype] == 128           # a tile row fills a 128-byte shared line
    assert spec.smem_bytes == configured("d1", "sm_90").smem_bytes
    planned = D1.with_element(name).with_tile(tile_named("64x128"), 3)
    assert dict(planned.defines)["BK"] * ITEMSIZE[e.dtype] == 128 and dict(planned.defines)["ELEMENT"] == e.code
    assert planned.splits == 3 and planned.element == name


def test_fp8_runs_from_sm_89_and_says_so():
    spec = D1.with_element("e4m3")
    assert spec.archs == ("sm_89", "sm_90") and D1.with_element("tf32").archs == D1.archs
    reason = spec.unsupported("sm_80")
    assert "e4m3" in reason and "sm_89 or sm_90" in reason and "sm_80" in reason
    assert spec.unsupported("sm_89") is None


def test_with_element_refuses_other_kernels_and_unknown_types():
    with pytest.raises(ValueError, match="Kernel 4.6.*float16 inputs only.*d1"):
        GEMM_KERNELS["k4.6"].with_element("bf16")
    with pytest.raises(ValueError, match="unknown input type 'fp8'.*e4m3, e5m2"):
        D1.with_element("fp8")


# ---- Kernel 4.6, line for line and in the SASS ------------------------------------------------------

TYPE_CODES = {"F16": 0, "BF16": 1, "TF32": 2, "S8": 3, "E4M3": 4, "E5M2": 5}     # the kernel's #defines
ELEMENT_TEST = re.compile(r"ELEMENT == (\w+)(?: \|\| ELEMENT == \w+)*")


def resolve_element(text: str, code: int) -> str:
    """`text` with every `#if ELEMENT == ...` / `#elif` / `#else` chain resolved for ELEMENT = `code`, and
    the `#ifndef ELEMENT` block that sets its default dropped; every other preprocessor line is kept."""
    out, stack = [], []      # per open #if: [tests ELEMENT, keep the current branch, a branch was taken]
    for line in text.splitlines():
        head, _, cond = line.strip().partition(" ")
        holds = lambda: (ELEMENT_TEST.fullmatch(cond) is not None and
                         code in [TYPE_CODES[n] for n in re.findall(r"ELEMENT == (\w+)", cond)])
        if head in ("#if", "#ifdef", "#ifndef") and "ELEMENT" in cond:
            taken = head == "#if" and holds()
            stack.append([True, taken, taken])
            continue
        if head in ("#elif", "#else", "#endif") and stack and stack[-1][0]:
            entry = stack[-1]
            if head == "#endif":
                stack.pop()
            elif head == "#else":
                entry[1:] = [not entry[2], True]
            else:
                taken = not entry[2] and holds()
                entry[1:] = [taken, entry[2] or taken]
            continue
        if head.startswith("#if"):
            stack.append([False, True, True])
        keep = all(k for _, k, _ in stack)
        if head == "#endif":
            stack.pop()
        if keep:
            out.append(line)
    assert not stack, "unbalanced #if / #endif"
    return "\n".join(out)


def code_lines(text: str) -> list[str]:
    """The lines after the header comment, without comments and blank lines."""
    lines = text.splitlines()
    lines = (re.sub(r"\s*//.*", "", line).rstrip()
             for line in lines[next(i for i, line in enumerate(lines) if not line.startswith("//")):])
    return [line for line in lines if line]


def d1_as(name: str) -> list[str]:
    """Kernel D1's code for input type `name`: its ELEMENT resolved, the type codes' #defines dropped, and
    the names the type gives (Element, Acc, Acc2, MMA) replaced by what they stand for."""
    aliases, kept = {}, []
    for line in code_lines(resolve_element(source.kernel_text("d1"), ELEMENTS[name].code)):
        alias = re.fullmatch(r"using (\w+) = ([^;]+);|#define (MMA) (\w+)", line)
        if alias:
            aliases[alias.group(1) or alias.group(3)] = alias.group(2) or alias.group(4)
        elif not re.fullmatch(rf"#define (?:{'|'.join(TYPE_CODES)}) \d+", line):
            kept.append(line)
    assert set(aliases) == {"Element", "Acc", "Acc2", "MMA"}, aliases
    names = re.compile(rf"\b(?:{'|'.join(aliases)})\b")
    return [names.sub(lambda m: aliases[m.group(0)], line) for line in kept]


# Kernel 4.6's lines that D1 in fp16 spells otherwise, each the same value for a 2-byte __half, and the entry name.
FP16_SPELLINGS = [
    (["#define BK 64"], ["#define BK (128 / sizeof(__half))"]),
    (['static_assert(BK == 32 || BK == 64, "a tile row is half or all of a 128-byte shared line");'],
     ["static_assert(BK * sizeof(__half) == 64 || BK * sizeof(__half) == 128,",
      '              "a tile row is half or all of a 128-byte shared line");']),
    (["constexpr int MMA_K = 16;"], ["constexpr int MMA_K = 32 / sizeof(__half);"]),
    (["constexpr int CHUNK = 8;"], ["constexpr int CHUNK = 16 / sizeof(__half);"]),
    (["tile_plans(const __half *A, const __half *B, float *C, int M, int N, int K) {"],
     ["data_types(const __half *A, const __half *B, float *C, int M, int N, int K) {"]),
    (["                    *reinterpret_cast<float2 *>(&C[at]) = make_float2(v0, v1);"],
     ["                    *reinterpret_cast<float2 *>(&C[at]) = float2{v0, v1};"]),
    (["        float sum = 0.f;"], ["        float sum = 0;"]),
]


def differences(old: list[str], new: list[str]) -> list[tuple[list[str], list[str]]]:
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [(old[i1:i2], new[j1:j2]) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal"]


def test_in_fp16_kernel_d1_is_kernel_4_6_line_for_line():
    """Resolved for ELEMENT = F16, D1's code is 4.6's but for the lines of FP16_SPELLINGS (comments aside):
    D1 cannot drift from the kernel it generalises. The SASS test below holds the compiled code to it."""
    assert differences(code_lines(source.kernel_text("k4.6")), d1_as("fp16")) == FP16_SPELLINGS


def test_resolving_the_element_can_fail():
    """Resolved for tf32 the text is not 4.6's (the rounding block, tf32's mma); an unbalanced block is refused."""
    tf32 = d1_as("tf32")
    assert "mma_m16n8k8_tf32_f32(acc[tm][tn], a[cur][tm], b[cur][tn], acc[tm][tn]);" in "\n".join(tf32)
    assert any("round_to_tf32" in line for line in tf32) and not any("round_to_tf32" in line for line in d1_as("fp16"))
    assert len(differences(code_lines(source.kernel_text("k4.6")), tf32)) > len(FP16_SPELLINGS)
    with pytest.raises(AssertionError, match="unbalanced"):
        resolve_element("#if ELEMENT == F16\nx\n", 0)


@functools.lru_cache(maxsize=None)
def _instructions(spec, arch: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The instructions of a build's GEMM entry and of its reduce_splits, compiled by NVRTC (no GPU)."""
    from tcgemm.engine.gpu.nvrtc_offline import compile_cubin, cuobjdump_sass
    from tcgemm.engine.gpu.sass import sass_tools_missing
    from tcgemm.engine.sass_loop import function_listing, instructions

    if missing := sass_tools_missing():
        pytest.skip(missing)
    listing = cuobjdump_sass(compile_cubin(spec.source, arch, spec.defines))
    return tuple(tuple(i.text for i in instructions(function_listing(listing, entry)))
                 for entry in (spec.entry, "reduce_splits"))


@pytest.mark.slow     # compiles both kernels for every target
@pytest.mark.parametrize("arch, tile", [*((a, None) for a in TARGET_ARCHS), ("sm_90", "64x128")])
def test_in_fp16_kernel_d1_compiles_to_kernel_4_6_s_machine_code(arch, tile):
    """Kernel D1 built for fp16 is Kernel 4.6's machine code, instruction for instruction, the kernel and
    reduce_splits, as each launcher builds it per GPU (and for a planned tile, split three ways)."""
    k46, d1 = configured("k4.6", arch), configured("d1", arch)
    if tile:
        k46, d1 = (k.with_tile(tile_named(tile), 3) for k in (k46, d1))
    assert d1.defines == k46.defines + (("ELEMENT", 0),)
    gemm, reduce = _instructions(k46, arch)
    assert len(gemm) > 1000 and (gemm, reduce) == _instructions(d1, arch)


# ---- host encodings ----------------------------------------------------------------------------

EXACT = np.array([[0.0, 1.0, -0.5, 0.375], [0.875, -1.0, 0.0625, -0.25]])


@pytest.mark.parametrize("name", list(ELEMENTS))
def test_encode_then_decode_gives_back_exact_values(name):
    values = EXACT * (64 if name == "int8" else 1)
    x = encode(values, name)
    assert x.dtype == np.dtype(ELEMENTS[name].dtype) and x.shape == values.shape
    assert np.array_equal(decode(x, name), values)


@pytest.mark.parametrize("name, value, rounded", [
    ("bf16", 1 + 2**-8, 1.0), ("bf16", 1 + 3 * 2**-8, 1 + 2**-6),     # ties to even
    ("tf32", 1 + 2**-11, 1.0), ("fp16", 1 + 2**-11, 1.0),
    ("e4m3", 1 + 2**-4, 1.0), ("e4m3", 1 + 3 * 2**-4, 1.25), ("e5m2", 1 + 2**-3, 1.0),
    ("e4m3", 2**-10, 0.0), ("e4m3", 3 * 2**-10, 2**-8), ("int8", 2.5, 2), ("int8", -3.5, -4),
])
def test_encode_rounds_to_nearest_ties_to_even(name, value, rounded):
    assert decode(encode([value], name), name)[0] == rounded


def test_the_kernel_rounds_fp32_to_tf32_with_ties_away_from_zero():
    """decode of a tf32 operand is what cvt.rna makes of it: a tie goes away from zero."""
    x = np.array([1 + 2**-11, -(1 + 2**-11), 1 + 2**-12, 1 + 3 * 2**-11], dtype=np.float32)
    assert list(decode(x, "tf32")) == [1 + 2**-10, -(1 + 2**-10), 1.0, 1 + 2**-9]


@pytest.mark.parametrize("name, value, message", [
    ("e4m3", 470.0, "outside e4m3's range -448 to 448"), ("e5m2", -6.2e4, "outside e5m2's range"),
    ("fp16", 65520.0, "outside fp16's range"), ("int8", 127.6, "outside int8's range -128 to 127"),
    ("bf16", np.inf, "NaN or infinite"),
])
def test_encode_refuses_what_the_type_cannot_hold(name, value, message):
    with pytest.raises(OperandError, match=message):
        encode([1.0, value], name)


def test_decode_wants_the_type_s_own_arrays():
    with pytest.raises(OperandError, match="bf16 operands are uint16 arrays, got float16"):
        decode(np.zeros(2, np.float16), "bf16")
    with pytest.raises(ValueError, match="unknown input type 'fp4'"):
        encode([1.0], "fp4")


# ---- operand checks (tcgemm.engine.operands on numpy arrays) -----------------------------------------

def _operands(name, M=32, N=24, K=64):
    return encode(np.zeros((M, K)), name), np.asfortranarray(encode(np.zeros((K, N)), name))


def test_bit_pattern_types_name_the_encoding_when_the_dtype_is_wrong():
    A, B = _operands("fp16")
    with pytest.raises(OperandError, match=r"A has dtype float16; .*\(bf16 inputs\) takes bf16 inputs as their "
                                           r"bit patterns, uint16 .*tcgemm.numerics.elements.encode\(values, 'bf16'\)"):
        check_gemm_operands(D1.with_element("bf16"), A, B)


def test_tf32_wants_fp32_operands_in_the_tensor_core_orders():
    A, B = _operands("tf32")
    assert check_gemm_operands(D1.with_element("tf32"), A, B) == (32, 24, 64)
    with pytest.raises(OperandError, match=r"B is row-major .*\(tf32 inputs\) needs it column-major"):
        check_gemm_operands(D1.with_element("tf32"), A, np.ascontiguousarray(B))
    with pytest.raises(OperandError, match=r"A has dtype float16; .*\(tf32 inputs\) takes float32 inputs"):
        check_gemm_operands(D1.with_element("tf32"), A.astype(np.float16), B)


def test_int8_output_must_be_int32():
    A, B = _operands("int8")
    with pytest.raises(OperandError, match="C has dtype float32; .* writes int32"):
        check_gemm_operands(D1.with_element("int8"), A, B, np.zeros((32, 24), np.float32))


# ---- the bytes each fragment register holds ------------------------------------------------------

@pytest.mark.parametrize("operand", "AB")
def test_every_type_s_fragment_registers_hold_the_same_bytes(operand):
    """The reason one kernel serves every type: with A row-major and B column-major, register r of lane l
    holds the same 4 bytes of the tile (row, byte offset along K) in fp16's m16n8k16, bf16's m16n8k16,
    tf32's m16n8k8 and the 8-bit types' m16n8k32, so one ldmatrix.x4 fills it for every type."""
    first = register_bytes(VARIANTS[0], operand)
    g, t = np.arange(32)[:, None] // 4, np.arange(32)[:, None] % 4
    n_regs = 4 if operand == "A" else 2
    rows = np.where(np.arange(n_regs) % 2 == 1, g + 8, g) if operand == "A" else np.broadcast_to(g, (32, 2))
    byte = 4 * t + 16 * (np.arange(n_regs) >= n_regs // 2)
    assert np.array_equal(first, np.stack(np.broadcast_arrays(rows, byte), axis=-1))
    for v in VARIANTS[1:]:
        assert np.array_equal(register_bytes(v, operand), first), v


def test_fp16_m16n8k8_is_another_layout():
    """The check can fail: fp16's m16n8k8 has 2 A registers, not 4, and different B bytes."""
    assert register_bytes("m16n8k8.f32", "A").shape == (32, 2, 2)
    table = register_bytes_table(VARIANTS + ["m16n8k8.f32"])
    assert table.column("A as f16") == ["yes"] * 6 + ["no"]
    assert table.column("Lane 5: A (row, byte)")[0] == "(1,4) (9,4) (1,20) (9,20)"


# ---- fp8 before sm_89 --------------------------------------------------------------------------

def test_python_refuses_fp8_on_an_older_gpu_before_compiling(monkeypatch):
    import tcgemm.numerics.gpu.data_types as data_types
    monkeypatch.setattr(data_types, "current_arch", lambda: "sm_86")
    with pytest.raises(UnsupportedOnGPUError, match=r"this GPU \(sm_86\) has no .e4m3 mma.sync \(sm_89 and later\)"):
        data_types.spec("e4m3")
    assert data_types.skipped("bf16") is None


@pytest.mark.parametrize("name", ["e4m3", "e5m2"])
def test_an_fp8_build_for_sm_80_fails_with_a_clear_message(name):
    from tcgemm.engine.gpu.nvrtc_offline import compile_cubin, toolkit
    try:
        kit = toolkit(13)
    except KernelCompileError as exc:
        pytest.skip(str(exc))
    spec = configured("d1", "sm_80").with_element(name)
    with pytest.raises(KernelCompileError, match="fp8 \\(e4m3, e5m2\\) mma.sync needs sm_89 or later"):
        compile_cubin(spec.source, "sm_80", spec.defines, kit)
    assert compile_cubin(spec.source, "sm_89", spec.defines, kit)


def test_the_plan_keeps_fp8_on_sm_90_to_small_warp_tiles():
    from tcgemm.engine.plan import H100_SXM, plan
    assert plan(4096, 4096, 2048, H100_SXM).tile.warp_tile > 32 * 32       # fp16 of fp8's bytes at 4096^3
    limited = plan(4096, 4096, 2048, H100_SXM, ELEMENTS["e4m3"].max_warp_tile("sm_90"))
    assert limited.tile.warp_tile <= 32 * 32 and all(e.tile.warp_tile <= 32 * 32 for e in limited.candidates)
    assert all(ELEMENTS[n].max_warp_tile(a) is None for n in ELEMENTS for a in ELEMENTS[n].archs if a != "sm_90")
