"""tcgemm.matmul's choice of kernel (tcgemm.engine.dispatch), its type errors, and the sweep's summary
(tcgemm.engine.sweep), without a GPU."""
import pytest

from tcgemm.engine.dispatch import (NARROWER_GAIN, TURNED_MIN_SHARE, WIDTH_RATE, dispatch, hopper_pays, output_dtype,
                                    stream_k_width, tile_width, turned_round)
from tcgemm.engine.sweep import SHAPES, TYPES, SweepRow, geometric_mean, summary, sweep_figure, sweep_table
from tcgemm.errors import OperandError


def test_the_output_is_the_inputs_type_unless_asked_otherwise():
    assert output_dtype("float16", None) == "float16" and output_dtype("bfloat16", None) == "bfloat16"
    assert output_dtype("float16", "float32") == "float32" and output_dtype("int8", None) == "int32"
    with pytest.raises(OperandError, match="float16 inputs give a float16 or float32 C, not bfloat16"):
        output_dtype("float16", "bfloat16")
    with pytest.raises(OperandError, match="takes float16, bfloat16, int8, float8_e4m3fn, float8_e5m2 inputs "
                                           r"\(float32 with allow_tf32=True\), got float32: pass allow_tf32=True"):
        output_dtype("float32", None)
    with pytest.raises(OperandError, match="got float64 \\(convert with .astype\\('float16'\\)\\)$"):
        output_dtype("float64", None, allow_tf32=True)
    with pytest.raises(OperandError, match="got uint8 .*torch.float8_e4m3fn or torch.float8_e5m2 tensors"):
        output_dtype("uint8", None)


def test_fp8_gives_fp32_by_default_and_16_bits_on_request_and_tf32_gives_fp32():
    for fp8 in ("float8_e4m3fn", "float8_e5m2"):
        assert output_dtype(fp8, None) == "float32" and output_dtype(fp8, "bfloat16") == "bfloat16"
        with pytest.raises(OperandError, match=f"{fp8} inputs give a float32 or float16 or bfloat16 C, not {fp8}"):
            output_dtype(fp8, fp8)
    assert output_dtype("float32", None, allow_tf32=True) == "float32"
    assert output_dtype("float16", None, allow_tf32=True) == "float16"      # the option touches fp32 only
    with pytest.raises(OperandError, match="float32 inputs give a float32 C, not float16"):
        output_dtype("float32", "float16", allow_tf32=True)


def test_hopper_runs_kernel_5_9_where_its_tiles_fill_the_gpu_and_4_7_elsewhere():
    big = dispatch("sm_90", 132, 4096, 4096, 4096)
    assert (big.key, big.kernel_out, big.out_dtype) == ("k5.9", "float16", "float16")
    assert "512 tiles of 128 × 256 on 132 SMs" in big.why
    decode = dispatch("sm_90", 132, 1, 4096, 14336)
    assert (decode.key, decode.kernel_out, decode.out_dtype) == ("k4.7", "float32", "float16")
    assert "rounded to fp16 in a second pass" in decode.why
    # a block per SM or more; a quarter of the SMs with M past 64 and a K not long against M and N
    assert hopper_pays(132, 128 * 12, 256 * 11, 100000) and not hopper_pays(132, 128 * 12, 256 * 10, 100000)
    assert hopper_pays(132, 1024, 1024, 1024) and not hopper_pays(132, 1024, 1024, 4096)
    assert not hopper_pays(132, 64, 256 * 40, 4096) and hopper_pays(132, 65, 256 * 40, 4096)


# (M, N, K) -> the width measured fastest of 256, 192, 128 and 64 for Kernel 5.11 on the H200 (fp16 in and
# out, % of cuBLAS, graph-timed, best of 3 interleaved rounds; 256/192/128/64, — not run): 1024³ 52/61/—/80%,
# 256×4096² 52/63/—/92%, 8192×520×8192 57/76/64/—, 3072³ 83/102/—/—, 3000³ 84/97/—/—, 4096³ 101/91/—/—,
# 2048³ 96/73/—/—, 6144³ 101/97/—/—, 256×14336×4096 102/71/—/—; earlier sweeps put 128 under 256 at 4096³
# (91/60% for 128/64) and 2048³ (95/70%).
MEASURED_BEST = {(1024, 1024, 1024): 64, (256, 4096, 4096): 64, (8192, 520, 8192): 192, (3072, 3072, 3072): 192,
                 (3000, 3000, 3000): 192, (4096, 4096, 4096): 256, (2048, 2048, 2048): 256, (6144, 6144, 6144): 256,
                 (256, 14336, 4096): 256}


def test_kernel_5_11_s_width_is_the_one_measured_fastest():
    for (M, N, K), width in MEASURED_BEST.items():
        d = dispatch("sm_90", 132, M, N, K)
        assert tile_width(132, M, N) == width, (M, N, K)
        if d.key not in ("k5.12", "k5.14", "k5.15"):     # 5.14, 5.15: row_cluster, row_tiles
            assert (d.key, d.tile_n) == (("k5.9", 256) if width == 256 else ("k5.11", width)), (M, N, K)
        assert f"tiles of 128 × {width} on 132 SMs" in d.why or d.key == "k5.15"


def test_another_width_must_gain_enough_and_m_of_128_or_less_keeps_the_old_rule():
    # 4096³: 192-wide tiles fill 6 waves of 196 against 4 of 256, 128-wide 8 of 141: neither gains
    waves = {256: 4, 192: 6, 128: 8}
    for width in (192, 128):
        assert waves[width] * width / WIDTH_RATE[width] > NARROWER_GAIN * waves[256] * 256 / WIDTH_RATE[256]
    assert tile_width(132, 4096, 4096) == 256 and dispatch("sm_90", 132, 4096, 4096, 4096).key == "k5.9"
    # the widths are Kernel 5.11's builds, 256 first (the catalog's default)
    from tcgemm.engine.catalog import GEMM_KERNELS
    assert tuple(WIDTH_RATE) == tuple(w for w, _ in GEMM_KERNELS["k5.11"].tile_widths)
    for M in (1, 64, 128):        # K longer than N: Kernel 4.7 splits it (Kernel 5.15 runs K <= N)
        assert dispatch("sm_90", 132, M, 4096, 14336).key == "k4.7"
    assert dispatch("sm_90", 132, 128, 14336, 4096, scaled=True).key == "k5.9"    # hopper_pays, as before
    assert dispatch("sm_90", 132, 129, 4096, 4096).key == "k5.11"    # two tile rows' worth: 5.11


def test_scaled_calls_and_other_gpus():
    scaled = dispatch("sm_90", 132, 4096, 4096, 4096, scaled=True)
    assert (scaled.key, scaled.kernel_out, scaled.out_dtype) == ("k5.9", "float32", "float16")
    ada = dispatch("sm_89", 128, 4096, 4096, 4096, out_dtype="float32")
    assert (ada.key, ada.kernel_out, ada.out_dtype) == ("k4.7", "float32", "float32") and "no wgmma" in ada.why
    # Kernel 4.7 has no bf16 build: Kernel D1's, in mma.sync's memory orders, else 5.9 (sm_90) or an error
    thin = dispatch("sm_90", 132, 1, 4096, 4096, "bfloat16")
    assert (thin.key, thin.in_dtype, thin.kernel_out, thin.out_dtype) == ("d1", "bfloat16", "float32", "bfloat16")
    assert dispatch("sm_90", 132, 1, 4096, 4096, "bfloat16", mma_orders=False).key == "k5.9"
    assert dispatch("sm_90", 132, 4096, 4096, 4096, "bfloat16").key == "k5.9"
    assert dispatch("sm_80", 108, 4096, 4096, 4096, "bfloat16").key == "d1"
    with pytest.raises(OperandError, match="on sm_80 tcgemm.matmul takes bf16 A row-major and B column-major only"):
        dispatch("sm_80", 108, 4096, 4096, 4096, "bfloat16", mma_orders=False)
    assert dispatch("sm_80", 108, 5, 7, 9, "int8").key == "d1"


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90"])
def test_int8_runs_kernel_d1_exact_in_every_order(arch):
    native = dispatch(arch, 108, 129, 257, 75, "int8")
    assert (native.key, native.element, native.kernel_out, native.out_dtype) == ("d1", "int8", "int32", "int32")
    assert "m16n8k32 IMMA, exact int32" in native.why and "as D1 reads them" in native.why
    assert "second pass" not in native.why
    copied = dispatch(arch, 108, 129, 257, 75, "int8", scaled=True, mma_orders=False)
    assert (copied.key, copied.element, copied.kernel_out) == ("d1", "int8", "int32")
    assert "then alpha A B + beta C in a second pass" in copied.why
    assert "A or B first copied into the orders D1 reads (A row-major, B column-major)" in copied.why
    with pytest.raises(OperandError, match="int8 inputs give a int32 C, not float32"):
        dispatch(arch, 108, 8, 8, 8, "int8", "float32")


def test_fp8_runs_kernel_d1_from_sm_89_and_is_refused_before():
    from tcgemm.errors import UnsupportedOnGPUError
    for fp8, element in (("float8_e4m3fn", "e4m3"), ("float8_e5m2", "e5m2")):
        ada = dispatch("sm_89", 128, 4096, 4096, 4096, fp8)
        assert (ada.key, ada.element, ada.kernel_out, ada.out_dtype) == ("d1", element, "float32", "float32")
        assert "emulated" not in ada.why and "second pass" not in ada.why
        hopper = dispatch("sm_90", 132, 4096, 4096, 4096, fp8, "float16", mma_orders=False)
        assert (hopper.key, hopper.element, hopper.kernel_out, hopper.out_dtype) == ("d1", element, "float32", "float16")
        assert "emulated by ptxas on sm_90 with fp16 HMMA, warp tiles of at most 32 × 32" in hopper.why
        assert "rounded to fp16 in a second pass" in hopper.why and "first copied" in hopper.why
        for arch in ("sm_80", "sm_86"):
            with pytest.raises(UnsupportedOnGPUError, match=rf"^{fp8} inputs need fp8 mma.sync, on sm_89 \(Ada\) and "
                                                            rf"later; this GPU is {arch}: convert A and B to float16"):
                dispatch(arch, 108, 64, 64, 64, fp8)


def test_fp32_runs_as_tf32_only_when_allowed():
    tf32 = dispatch("sm_90", 132, 4096, 4096, 4096, "float32", allow_tf32=True)
    assert (tf32.key, tf32.element, tf32.kernel_out, tf32.out_dtype) == ("d1", "tf32", "float32", "float32")
    assert tf32.why.startswith("4096×4096×4096 tf32 in, fp32 C: Kernel D1's tf32 build (mma.sync m16n8k8, each "
                               "fp32 input rounded to tf32")
    with pytest.raises(OperandError, match="pass allow_tf32=True"):
        dispatch("sm_80", 108, 64, 64, 64, "float32")
    # the other types' choices do not depend on the option
    assert dispatch("sm_90", 132, 4096, 4096, 4096, allow_tf32=True) == dispatch("sm_90", 132, 4096, 4096, 4096)


def test_kernel_d1_builds_exist_for_every_type_dispatched_to_it():
    from tcgemm.engine.catalog import ELEMENTS
    from tcgemm.engine.dispatch import D1_ELEMENTS, D1_ONLY, INPUT_DTYPES, OUTPUT_DTYPES
    assert set(D1_ELEMENTS.values()) <= set(ELEMENTS) and set(D1_ONLY) | set(INPUT_DTYPES) <= set(D1_ELEMENTS)
    assert set(OUTPUT_DTYPES) == set(INPUT_DTYPES) | {"float32"}
    for in_dtype in D1_ONLY:
        assert OUTPUT_DTYPES[in_dtype][0] == ELEMENTS[D1_ELEMENTS[in_dtype]].out_dtype   # no pass by default


def test_int8_alpha_and_beta_are_int32_scalars_for_the_epilogue_pass():
    import numpy as np
    from tcgemm.engine.gpu.matmul import _scalars
    assert _scalars("int32", 3, np.int64(-2)) == (3, -2) and type(_scalars("int32", 3, -2)[0]) is np.int32
    assert type(_scalars("float16", 0.5, 2)[1]) is np.float32
    for bad, message in ((0.5, "alpha=0.5"), (True, "alpha=True"), (2**31, "alpha=2147483648")):
        with pytest.raises(OperandError, match=f"{message}: int8 inputs take integer alpha and beta in int32's range"):
            _scalars("int32", bad, 0)


def _row(M, pct, types=("float16", "float16"), call=None):
    return SweepRow(M, 4096, 4096, *types, "k5.9", 100.0, pct, 120.0, call, "PASS")


def test_the_summary_is_the_geometric_mean_and_the_lowest_per_type():
    rows = [_row(1, 50, call=60.0), _row(2, 200, call=240.0), _row(3, 81, ("float16", "float32"))]
    s = summary(rows)
    assert s["fp16 → fp16"]["gmean_pct_cublas"] == pytest.approx(100) and s["fp16 → fp16"]["min_pct_cublas"] == 50
    assert s["fp16 → fp16"]["gmean_pct_call"] == pytest.approx(100 * (0.5 * 2) ** 0.5)
    assert s["fp16 → fp32"]["gmean_pct_call"] is None
    assert geometric_mean([1, 4, 16]) == pytest.approx(4)
    assert "geometric mean 100% of cuBLAS, lowest 50%" in "\n".join(sweep_table(rows, "GPU").notes)
    fig = sweep_figure(rows, "GPU")
    assert fig.axes[0].get_xlim()[1] >= 200


def test_the_sweep_has_the_shapes_and_types_the_issue_names():
    assert len(SHAPES) >= 20 and (1000, 1000, 1000) in SHAPES and (8192, 520, 8192) in SHAPES
    assert {m for m, n, k in SHAPES if (n, k) == (14336, 4096)} == {1, 16, 64, 128, 256, 4096}
    assert TYPES == (("float16", "float16"), ("bfloat16", "bfloat16"), ("float16", "float32"))


# (M, N, K) -> the width at which Kernel 5.12's split measured faster than the best of 5.9 and 5.11 on the
# H200, 0 where none did (fp16 in and out, µs, graph-timed, best of 3 interleaved rounds; split / whole
# tiles, each at its best width): 256×4096×14336 61.4 (192) / 70.1 (64); 8192×520×8192 141.8 (192) /
# 144.3 (192); 3072³ 90.1 / 87.6 (both 192), 3000³ 97.8 / 96.1 (both 192), 2048³ 29.8 / 28.9, 4096×4096×512
# 34.1 / 32.9, 256×4096² 31.0 / 25.1 (64), 6144³ 720.0 / 691.5, 1000³ 16.1 / 14.1 (64), 512³ 11.5 / 8.6 (64).
MEASURED_SPLIT = {(256, 4096, 14336): 192, (8192, 520, 8192): 192, (3072, 3072, 3072): 0, (3000, 3000, 3000): 0,
                  (2048, 2048, 2048): 0, (4096, 4096, 512): 0, (256, 4096, 4096): 0, (6144, 6144, 6144): 0,
                  (1000, 1000, 1000): 0, (512, 512, 512): 0}


def test_kernel_5_12_runs_where_its_split_measured_faster():
    for (M, N, K), width in MEASURED_SPLIT.items():
        d = dispatch("sm_90", 132, M, N, K)
        assert stream_k_width(132, M, N, K) == width and (d.key == "k5.12") == bool(width), (M, N, K, d.key)
        if width:
            assert d.tile_n == width and "the last wave's split along K" in d.why
    assert dispatch("sm_90", 132, 256, 4096, 14336, scaled=True).key == "k5.12"    # into fp32, then the pass
    assert not stream_k_width(132, 4096, 4096, 4096)    # whole waves but for 8 of 66 clusters: nothing to gain


def test_the_label_names_the_width_of_kernels_5_11_and_5_12():
    assert dispatch("sm_90", 132, 256, 4096, 4096).label == "k5.11/64"
    assert dispatch("sm_90", 132, 512, 512, 512).label == "k5.14/64/1x2"
    assert dispatch("sm_90", 132, 1024, 1024, 1024).label == "k5.15/128/2x1"
    assert dispatch("sm_90", 132, 3072, 3072, 3072).label == "k5.11/192"
    assert dispatch("sm_90", 132, 256, 4096, 14336).label == "k5.12/192"
    assert dispatch("sm_90", 132, 4096, 4096, 4096).label == "k5.9"


# (M, N, K) -> whether Kernel 5.13 on C^T = B^T A^T measured faster than the kernel the dispatch ran before, on
# the H200 (fp16 in and out, % of cuBLAS, turned / before): 128×14336×4096 94/81% (5.9), 64×14336×4096 97/84%
# (4.7); 16×14336×4096 88/89%, 128×4096² 65/79%, 64×4096² 72/80%, 128×4096×14336 83/84%, 64×4096×14336 88/96%.
MEASURED_TURNED = {(128, 14336, 4096): True, (64, 14336, 4096): True, (16, 14336, 4096): False,
                   (128, 4096, 4096): False, (64, 4096, 4096): False, (128, 4096, 14336): False,
                   (64, 4096, 14336): False}


def test_kernel_5_13_runs_the_product_turned_round_where_it_measured_faster():
    for (M, N, K), faster in MEASURED_TURNED.items():
        d = dispatch("sm_90", 132, M, N, K)
        assert turned_round(132, M, N) == faster and (d.key == "k5.13") == faster, (M, N, K, d.key)
        if faster:
            assert d.tile_n == (64 if M <= 64 else 128) and d.label == f"k5.13/{d.tile_n}"
            assert "C^T = B^T A^T" in d.why and (d.kernel_out, d.out_dtype) == ("float16", "float16")
    # 56 tile pairs of N = 14336 against 66 clusters; 50 would still do, 49 would not
    assert 56 >= TURNED_MIN_SHARE * 66 and turned_round(132, 128, 50 * 256) and not turned_round(132, 128, 49 * 256)
    assert dispatch("sm_90", 132, 128, 14336, 4096, scaled=True).key != "k5.13"    # alpha and beta: not turned
    assert dispatch("sm_89", 128, 128, 14336, 4096).key == "k4.7" and not turned_round(132, 129, 14336)
