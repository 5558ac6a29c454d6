import pytest

from tcgemm.engine import source


def test_show_kernel_lists_the_kernel_and_its_wrappers():
    listing = source.show_kernel("k1.0")
    text = str(listing)
    assert "kernels/k1.0_naive_mma.cu" in text and "naive_mma(" in text
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in text
    assert listing.title.startswith("kernels/k1.0_naive_mma.cu and ")
    assert listing.lines == len(text.splitlines())
    bare = source.show_kernel("k1.0", with_wrappers=False)
    assert bare.title == "kernels/k1.0_naive_mma.cu" and "mma.sync.aligned" not in str(bare)


def test_listing_is_collapsed_and_escaped_in_html():
    listing = source.Listing("kernels/x.cu", "for (int i = 0; i < n && ok; ++i) {}\nx = \"<b>\";")
    html = listing._repr_html_()
    assert '<details class="tcgemm-listing">' in html and " open" not in html
    assert "<summary" in html and "kernels/x.cu, 2 lines <span" in html and "(click to show)</span></summary>" in html
    # Open, it says "click to hide" instead (a style beside it, for JupyterLab and the book).
    assert html.startswith("<style>") and '[open] > summary::after { content: "(click to hide)"; }' in html
    assert listing.summary == "kernels/x.cu, 2 lines"
    assert "i &lt; n &amp;&amp; ok" in html and "&lt;b&gt;" in html and "<b>" not in html
    assert str(listing) == repr(listing) == listing.text


def test_wrapper_text_is_one_balanced_function():
    text = source.wrapper_text("ldmatrix_x4")
    assert text.count("{") == text.count("}") and "ldmatrix" in text and "ldmatrix_x2(" not in text
    with pytest.raises(KeyError):
        source.wrapper_text("no_such_function")


def test_templated_wrappers_are_found_with_their_template_line():
    # k3.0 calls cp_async_wait<N_STAGES - 2>(): a call with template arguments
    assert "cp_async_wait" in source.wrappers_used("k3.0")
    assert "cp_async_wait" not in source.wrappers_used("k2.1")
    text = source.wrapper_text("cp_async_wait")
    assert text.startswith("template <int N>\n__device__") and "cp.async.wait_group" in text
    assert "template <int N>\n__device__ __forceinline__ void cp_async_wait()" in str(source.show_kernel("k3.0"))


def test_hgemm_uses_ldmatrix_and_f16_mma():
    used = source.wrappers_used("h1")
    assert {"ldmatrix_x4", "ldmatrix_x2", "mma_m16n8k16_f16"} <= set(used)
    assert "mma_m16n8k16_f32" not in used


def test_diff_shows_only_changed_lines():
    diff = source.diff_kernels("k1.0", "k1.1")
    out = str(diff).splitlines()
    assert out[0].startswith("--- kernels/k1.0_naive_mma.cu") and out[1].startswith("+++ kernels/k1.1_warp_tile_2x2.cu")
    changed = [l for l in out[2:] if l[:1] in "+-"]
    assert changed and len(changed) < len(source.kernel_text("k1.1").splitlines())
    added = sum(l.startswith("+") for l in out[2:])
    assert diff.title == (f"diff kernels/k1.0_naive_mma.cu → kernels/k1.1_warp_tile_2x2.cu: {added} lines added, "
                          f"{len(changed) - added} removed")


def test_copies_with_cp_async_reads_the_kernel_source():
    # Kernel 2.0 copies through registers (a uint4 load, then STS.128); Kernels 3.0+ and s3 use cp.async
    assert not source.copies_with_cp_async("k2.0") and not source.copies_with_cp_async("k1.1")
    assert source.copies_with_cp_async("k3.0") and source.copies_with_cp_async("k4.5")
    assert source.copies_with_cp_async("s3")


def test_bank_case_labels_kernel_2_stores_by_what_it_compiles_to():
    from tcgemm.smem import bank_cases
    label = bank_cases.ACCESSES["store-16"]
    assert label.startswith("16-byte stores (STS.128): ") and "cp.async" not in label


@pytest.mark.parametrize("key", ["k1.0", "k1.1"])
def test_strided_copy_loops_rewrites_both_copy_loops_and_nothing_else(key):
    text = source.kernel_text(key)
    strided = source.strided_copy_loops(text)
    assert "for (int i = tid; i < BM * BK; i += THREADS) {" in strided
    assert "for (int i = tid; i < BN * BK; i += THREADS) {" in strided
    assert "THREADS; ++r)" not in strided and "const int i = tid + r * THREADS;" not in strided
    removed = [line for line in text.splitlines() if line not in strided.splitlines()]
    assert len(removed) == 4, removed     # two loop headers and their two index lines
    with pytest.raises(ValueError, match="no copy loop"):
        source.strided_copy_loops(source.kernel_text("k2.0"))
