import pytest

from tcgemm import source


def test_show_kernel_prints_the_kernel_and_its_wrappers(capsys):
    source.show_kernel("k1.0")
    out = capsys.readouterr().out
    assert "kernels/k1.0_naive_mma.cu" in out and "naive_mma(" in out
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in out


def test_wrapper_text_is_one_balanced_function():
    text = source.wrapper_text("ldmatrix_x4")
    assert text.count("{") == text.count("}") and "ldmatrix" in text and "ldmatrix_x2(" not in text
    with pytest.raises(KeyError):
        source.wrapper_text("no_such_function")


def test_hgemm_uses_ldmatrix_and_f16_mma():
    used = source.wrappers_used("hgemm")
    assert {"ldmatrix_x4", "ldmatrix_x2", "mma_m16n8k16_f16"} <= set(used)
    assert "mma_m16n8k16_f32" not in used


def test_diff_shows_only_changed_lines(capsys):
    source.diff_kernels("k1.0", "k1.1")
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("--- kernels/k1.0_naive_mma.cu") and out[1].startswith("+++ kernels/k1.1_warp_tile_2x2.cu")
    changed = [l for l in out[2:] if l[:1] in "+-"]
    assert changed and len(changed) < len(source.kernel_text("k1.1").splitlines())
