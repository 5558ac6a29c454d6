"""tcgemm.matmul's choice of kernel (tcgemm.engine.dispatch) and the sweep's summary (tcgemm.engine.sweep),
without a GPU."""
import pytest

from tcgemm.engine.dispatch import dispatch, hopper_pays, output_dtype
from tcgemm.engine.sweep import SHAPES, TYPES, SweepRow, geometric_mean, summary, sweep_figure, sweep_table
from tcgemm.errors import OperandError


def test_the_output_is_the_inputs_type_unless_asked_otherwise():
    assert output_dtype("float16", None) == "float16" and output_dtype("bfloat16", None) == "bfloat16"
    assert output_dtype("float16", "float32") == "float32" and output_dtype("int8", None) == "int32"
    with pytest.raises(OperandError, match="float16 inputs give a float16 or float32 C, not bfloat16"):
        output_dtype("float16", "bfloat16")
    with pytest.raises(OperandError, match="takes float16, bfloat16, int8 inputs, got float32"):
        output_dtype("float32", None)


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
    assert dispatch("sm_80", 108, 5, 7, 9, "int8").key == "w1.1"


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
