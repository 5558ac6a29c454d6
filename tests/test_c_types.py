"""Kernel 5.9's tables by pair of types (tcgemm.hopper.gpu.c_types), the parts that need no GPU: the
rounds tables of each pair merged into one, each row against its own cuBLAS."""
import pytest

from tcgemm.engine.rounds import rounds_table, summarize_rounds
from tcgemm.hopper.gpu.c_types import merge_rounds, spread_bounds, types_label


def _rounds(baseline, times):
    results = summarize_rounds({baseline: [100e-6, 100e-6, 100e-6], **times}, baseline)
    return rounds_table(results, baseline, "4096³", 3)


def test_each_pair_keeps_its_own_baseline_and_the_spread_becomes_two_numbers():
    fp32_c = _rounds("cuBLAS (cublasGemmEx)", {"k57": [99e-6, 101e-6, 100e-6], "k59": [95e-6, 96e-6, 97e-6]})
    fp16_c = _rounds("cuBLAS (cublasGemmEx, fp16 C)", {"k59 fp16": [104e-6, 110e-6, 105e-6]})
    table = merge_rounds([(fp32_c, {"k57": ("Kernel 5.7", "fp16 -> fp32"), "k59": ("Kernel 5.9", "fp16 -> fp32")}),
                          (fp16_c, {"k59 fp16": ("Kernel 5.9", "fp16 -> fp16")})], "at 4096³")
    rows = table.records()
    assert [(r["Kernel"], r["A, B -> C"], r["verdict"]) for r in rows] == [
        ("Kernel 5.7", "fp16 -> fp32", "level"), ("Kernel 5.9", "fp16 -> fp32", "ahead"),
        ("Kernel 5.9", "fp16 -> fp16", "behind")]
    assert rows[2]["% of cuBLAS"] == pytest.approx(100 / 1.05)
    assert (rows[2]["lowest"], rows[2]["highest"]) == (90.9, 96.2)       # 100/110 and 100/104, as printed
    assert rows[1]["median µs"] == pytest.approx(96)
    assert "cuBLAS (cublasGemmEx); cuBLAS (cublasGemmEx, fp16 C)" in str(table)
    with pytest.raises(ValueError, match="no label for 'k59 fp16'"):
        merge_rounds([(fp16_c, {"k59": ("Kernel 5.9", "fp16 -> fp16")})], "at 4096³")


def test_labels_and_spreads_read_back_and_anything_else_is_refused():
    assert types_label("bfloat16", "bfloat16") == "bf16 -> bf16"
    assert spread_bounds("95.8 to 102.4%") == (95.8, 102.4)
    with pytest.raises(ValueError, match="LOW to HIGH"):
        spread_bounds("95.8%")

