import math
import re

import pytest

from tcgemm.table import CSS_CLASS, Column, Table


def sample():
    return Table([Column("Kernel"), Column("µs", ".0f"), Column("% cuBLAS", ".1f"), Column("Check")],
                 [["Kernel 1.0: <naive> & slow", 4680.4, 19.123, "PASS"],
                  ["cuBLAS", 895.0, None, "PASS"],
                  ["k", 12.0, math.nan, "FAIL"]],
                 caption="RTX 4090, 4096³", notes=["% cuBLAS: of cuBLAS's TFLOP/s"])


def test_plain_text_is_aligned_columns_under_a_caption_with_notes_below():
    lines = str(sample()).splitlines()
    assert lines[0] == "RTX 4090, 4096³" and lines[-1] == "% cuBLAS: of cuBLAS's TFLOP/s"
    header, rule, *body = lines[1:-1]
    assert rule.split() == ["-" * len("Kernel 1.0: <naive> & slow"), "----", "--------", "-----"]
    # each column as wide as its widest cell, two spaces apart; numbers right-aligned, text left
    starts = [m.start() for m in re.finditer(r"-+", rule)]
    ends = [m.end() for m in re.finditer(r"-+", rule)]
    assert header[starts[0]:].startswith("Kernel") and header[starts[3]:].startswith("Check")
    assert body[0][:ends[1]].endswith("4680") and body[1][:ends[1]].endswith(" 895")
    assert body[0][:ends[2]].endswith("19.1") and body[1][:ends[2]].endswith("n/a")
    assert body[2][:ends[2]].endswith("n/a") and body[2][starts[3]:] == "FAIL"
    assert body[1][starts[0]:starts[1]].rstrip() == "cuBLAS"


def test_repr_and_pretty_are_the_plain_text():
    t = sample()
    assert repr(t) == str(t)

    class Printer:
        def text(self, s):
            self.out = s
    p = Printer()
    t._repr_pretty_(p, False)
    assert p.out == str(t)


def test_html_is_an_escaped_table_with_a_class_and_aligned_cells():
    html = sample()._repr_html_()
    assert f'<table class="{CSS_CLASS}"' in html and html.count("<tr>") == 4
    assert "&lt;naive&gt; &amp; slow" in html and "<naive>" not in html
    assert "cuBLAS&#x27;s" in html or "cuBLAS&#39;s" in html
    cells = re.findall(r'<(t[hd]) style="[^"]*text-align:(\w+)[^"]*">([^<]*)</t[hd]>', html)
    assert [(tag, a) for tag, a, text in cells[:4]] == [("th", "left"), ("th", "right"), ("th", "right"),
                                                        ("th", "left")]
    assert ("td", "right", "4680") in cells and ("td", "right", "n/a") in cells
    assert ("td", "left", "Kernel 1.0: &lt;naive&gt; &amp; slow") in cells
    assert "<caption" in html and "RTX 4090, 4096³" in html
    # no fixed colours: the table inherits the page's (light and dark themes)
    assert not re.search(r"#[0-9a-fA-F]{3,6}\b|rgb\(|(?<!-)color:(?!inherit)", html)


def test_numbers_never_wrap_but_names_may():
    html = sample()._repr_html_()
    number_cells = re.findall(r'<td style="([^"]*)">4680</td>', html)
    name_cells = re.findall(r'<td style="([^"]*)">cuBLAS</td>', html)
    assert "white-space:nowrap" in number_cells[0] and "nowrap" not in name_cells[0]
    assert "overflow-wrap" not in name_cells[0]      # words stay whole: a name column stays readable


def shown_text(fragment: str) -> str:
    """What a cell's HTML reads as: its text without tags."""
    import html
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def test_no_word_is_ever_broken_inside():
    # A browser breaks a word anywhere under overflow-wrap:anywhere / word-break, and after a hyphen or
    # a slash on its own: the table keeps every word whole, and wraps a long one (an ncu metric, a PTX
    # instruction) only after its '.' and '_' separators.
    metric = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum"
    ptx = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
    t = Table(["ncu metric", "Inputs", "A", "Check", Column("% of K-major", ".0f", unit="%")],
              [[metric, "fp16 -> fp32", "column-major", "PASS/FAIL", 95.0], [ptx, "int8 -> int32", "row-major",
                                                                           "PASS", 100.0]],
              caption="fp16 -> fp32", notes=[f"{metric}: counted by ncu"])
    html = t._repr_html_()
    assert not re.search(r"overflow-wrap|word-break|hyphens", html)
    cells = re.findall(r"<td [^>]*>(.*?)</td>", html)
    assert [shown_text(c) for c in cells[:5]] == ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
                                                 "fp16 -> fp32", "column-major", "PASS/FAIL", "95%"]
    # the long words: break opportunities only after a separator, each piece one unbroken word
    assert cells[0].split("<wbr>") == ["l1tex__", "data_", "bank_", "conflicts_", "pipe_", "lsu_", "mem_",
                                       "shared_", "op_", "ldsm.", "sum"]
    assert [p[-1] for p in cells[5].split("<wbr>")[:-1]] == ["."] * 9
    # hyphens, arrows and slashes inside a word never break it; spaces still do, and so does the hyphen
    # of a compound of words ("column-major", not "K-major")
    nowrap = '<span style="white-space:nowrap">'
    assert cells[1] == f"fp16 {nowrap}-&gt;</span> fp32" and cells[2] == f"{nowrap}column-</span><wbr>major"
    assert cells[3] == f"{nowrap}PASS/FAIL</span>"
    assert f'{nowrap}%</span>' not in html and f"{nowrap}K-major</span>" in html    # headers too
    # short words stay plain, and the notes' long words wrap at separators too
    assert re.search(r"<td [^>]*>cuBLAS</td>", sample()._repr_html_()) and "ldsm.<wbr>sum: counted" in html


def test_a_table_narrower_than_the_text_column_with_long_words():
    # The book's text column is 688 px at a 1280 px window; a table can shrink to the sum of its columns'
    # longest unbreakable pieces (at most ~8 px per character at 14 px, plus 0.8 em of padding).
    metrics = ["sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum",
               "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
    t = Table([Column("ncu metric"), Column("Predicted", ","), Column("Measured", ","), Column("Excess", ",")],
              [[m, 123456789, 123456789, 0] for m in metrics])
    html = t._repr_html_()
    pieces = [re.split(r"<wbr>|\s+", shown_text(c.replace("<wbr>", "\x00")).replace("\x00", "<wbr>"))
              for c in re.findall(r"<t[hd] [^>]*>(.*?)</t[hd]>", html)]
    assert max(len(p) for cell in pieces for p in cell) <= 40
    widest = [max(len(p) for p in cell) for cell in pieces]
    columns = [max(widest[i::4]) for i in range(4)]
    assert sum(8 * w + 12 for w in columns) <= 688, columns


def test_bench_table_fits_the_text_column():
    # The book's text column is 688 CSS px at a 1280 px window. A table can shrink to the sum of its
    # columns' longest unbreakable words: at 14 px (0.875 of the theme's 16 px) at most ~8 px per
    # character, plus 0.8 em of padding per cell, the bench table must fit.
    from tcgemm.engine.report import BenchResult, bench_table, summarize
    results = [BenchResult(name, 4096, 4096, 4096, summarize([t] * 3), True) for name, t in
               [("cuBLAS (cublasGemmEx)", 1.9e-4), ("Kernel 4.5: any shape (BK=32, 4 stages)", 2.2e-4)]]
    t = bench_table(results, "cuBLAS (cublasGemmEx)", 989.4, 660.0, "mma.sync", "cuBLAS")
    words = lambda s: max((len(w) for w in s.split()), default=0)
    min_width = sum(8 * max(words(c.name), *(words(row[i]) for row in t.text_rows())) + 12
                    for i, c in enumerate(t.columns))
    assert min_width <= 688, min_width


def test_explicit_alignment_and_bad_rows():
    t = Table([Column("shape", align="right"), "n"], [["4096×4096", 3], ["1×2", None]])
    assert t.alignments() == ["right", "right"]
    assert t.column("n") == [3, None]
    assert str(t).splitlines()[2:] == ["4096×4096    3", "      1×2  n/a"]
    with pytest.raises(ValueError, match="row 0 has 1 cells for 2 columns"):
        Table(["a", "b"], [[1]])
    with pytest.raises(ValueError, match="align"):
        Column("x", align="centre")
    with pytest.raises(KeyError, match="no column 'z'"):
        t.column("z")


def test_records_are_rows_by_column_name():
    t = Table([Column("Kernel"), Column("µs", ".1f")], [("4.6", 359.2), ("4.7", 340.1)])
    assert t.records() == [{"Kernel": "4.6", "µs": 359.2}, {"Kernel": "4.7", "µs": 340.1}]


def checks_sample(fail=False):
    from tcgemm.table import Verdict
    good = [Verdict("PASS (rel. error 1.1e-07)", 1.1e-07, 1e-4), Verdict("PASS (rel. error 5.0e-06)", 5e-06, 1e-4)]
    bad = Verdict("FAIL: worst element at (3, 4)", 0.5, 1e-4) if fail else Verdict("PASS (rel. error 2.0e-06)",
                                                                                      2e-06, 1e-5)
    return [["Kernel W1.0", "A B", "48×80×32", 1, 0, good[0]], ["Kernel W1.0", "A B", "48×80×32", 2, -3, bad],
            ["Kernel W1.1", "A B", "1024×1024×1024", 1, 0, Verdict("PASS: bit-exact, max |ref| 107,395", exact=True)],
            ["Kernel W1.0", "A^T B", "1024×1024×1024", 1, 0, good[1]]]


def test_a_detail_column_is_folded_under_one_verdict_line():
    rows = [[1, "Kernel 4.7", "row-major", 340.0, "PASS (rel. error 5.0e-06)"],
            [1, "cuBLAS (cublasGemmEx)", "row-major", 214.0, "PASS (rel. error 4.9e-06)"]]
    columns = ["Run", "Kernel", "A", Column("µs", ".0f"), Column("Check", detail=True, verdict=True)]
    t = Table(columns, rows, caption="H100", notes=["µs: median"])
    html = t._repr_html_()
    main, rest = html.split("</table>", 1)
    assert "Check" not in main and "PASS" not in main and "340" in main
    # one line, then the checks row by row in a block closed until opened, each beside its row's labels
    assert re.search(r'<p class="tcgemm-table-verdict"[^>]*>All 2 checks PASS\.</p>', rest)
    details = re.search(r"<details (.*?)</details>", rest, re.S).group(0)
    assert "<details open" not in html and "<summary" in details and "Check, row by row (2 rows)" in details
    assert re.findall(r"<th [^>]*>([^<]*)</th>", details) == ["Run", "Kernel", "A", "Check"]
    assert ">340<" not in details and "PASS (rel. error 4.9e-06)" in shown_text(details)
    assert html.index("µs: median") > html.index("</details>")
    # nothing is lost outside HTML: the plain text, records() and column() hold every column
    assert "PASS (rel. error 5.0e-06)" in str(t) and str(t).splitlines()[1].endswith("Check")
    assert t.column("Check") == [r[-1] for r in rows] and t.records()[0]["Check"] == "PASS (rel. error 5.0e-06)"


def test_a_collapsed_table_of_checks_shows_one_line_of_verdict():
    t = Table(["Kernel", "Case", Column("M×N×K", align="right"), "α", "β", Column("Check", verdict=True)],
              checks_sample(), caption="WMMA checks", notes=["tolerance note", "tolerance note"], collapse=True)
    assert t.verdict() == ("All 4 checks PASS; largest relative error 5.0e-06 (tolerance 1e-04); nearest its "
                           "tolerance: 2.0e-06 (tolerance 1e-05); 1 bit-exact.")
    html = t._repr_html_()
    assert html.index("WMMA checks") < html.index("All 4 checks PASS") < html.index("<details")
    details = re.search(r"<details (.*?)</details>", html, re.S).group(0)
    assert "The table (4 rows)" in details and details.count("<tr>") == 5 and "<details open" not in html
    assert "<table" not in html.replace(details, "")
    # notes that repeat show once, in both forms
    assert t.notes == ("tolerance note",) and html.count("tolerance note") == 1 and str(t).endswith("tolerance note")


def test_a_failed_check_is_named_in_the_verdict_line():
    t = Table(["Kernel", "Case", Column("M×N×K", align="right"), "α", "β", Column("Check", verdict=True)],
              checks_sample(fail=True), collapse=True)
    assert t.verdict() == ("1 of 4 checks FAIL: Kernel W1.0, A B, 48×80×32, α 2, β -3: FAIL: worst element at "
                           "(3, 4). The other 3 PASS.")
    assert "<strong>FAIL</strong>" in t._repr_html_()
    # anything that neither passes nor was skipped counts as a failure; skipped ones are counted apart
    many = Table(["Case", Column("offset 0", verdict=True), Column("offset 3", verdict=True)],
                 [[f"c{i}", "PASS (1e-06)", "PASS (exact)"] for i in range(5)] +
                 [["c5", "FAIL: NaN", "garbled"], ["c6", "FAIL: x", "skipped: too big"], ["c7", "FAIL: y", None]],
                 collapse=True)
    line = many.verdict()
    assert line == ("4 of 15 checks FAIL: c5 (offset 0): FAIL: NaN; c5 (offset 3): garbled; c6 (offset 0): FAIL: x; "
                    "and 1 more. The other 10 PASS and 1 skipped.")
    assert Table([Column("Check", verdict=True)], [["PASS"], ["skipped: no GPU"]], collapse=True).verdict() == \
        "1 of 2 checks PASS, 1 skipped."
    assert Table([Column("Check", verdict=True)], [], collapse=True).verdict() == "No checks."


def test_a_verdict_is_the_text_it_shows():
    import pickle
    import numpy as np
    from tcgemm.engine.accuracy import compare_outputs, compare_exact
    from tcgemm.table import Verdict
    ref = np.linspace(1, 2, 64).reshape(8, 8)
    v = Verdict.of(compare_outputs(ref + 1e-7, ref), "PASS")
    assert v == "PASS" and isinstance(v, str) and v.startswith("PASS") and f"{v}" == "PASS"
    assert v.error == pytest.approx(1e-7 / np.sqrt((ref ** 2).mean()), rel=0.1) and v.tolerance == 1e-4
    assert pickle.loads(pickle.dumps(v)).tolerance == 1e-4
    exact = Verdict.of(compare_exact(np.arange(4), np.arange(4)))
    assert exact.exact and exact.startswith("PASS: bit-exact") and exact.error is None
    one = Table([Column("Check", verdict=True)], [[exact]], collapse=True)
    assert one.verdict() == "The one check: PASS, bit-exact."


def test_the_gpu_check_tables_fold_their_checks(monkeypatch):
    """The check tables of the gpu subpackages (WMMA, tcgemm.matmul, Kernel 5.7's orders, the transposed-operand
    timings), with the GPU parts replaced: each folds its verdicts under one line, keeps its columns."""
    from types import SimpleNamespace
    import numpy as np
    from tcgemm.engine.accuracy import compare_outputs, compare_exact
    from tcgemm.engine.gpu import device, matmul, timing
    from tcgemm.hopper.gpu import operand_orders
    from tcgemm.fragments.gpu import wmma

    ref = np.linspace(1, 2, 64).reshape(8, 8)
    fp = lambda *args, **kw: compare_outputs(ref + 1e-7, ref)
    monkeypatch.setattr(wmma, "check_wmma_case", lambda key, *args, **kw: (compare_exact(np.arange(4), np.arange(4))
                                                                if key == "w1.1" else fp()))
    t = wmma.check_wmma_cases(keys=("w1.0", "w1.1"))
    assert t.collapse and len(t.rows) == 32 and t.columns[-1].verdict and len(t.notes) == 1
    assert t.verdict().startswith("All 32 checks PASS; largest relative error") and "16 bit-exact" in t.verdict()
    assert t.column("Check")[0].startswith("PASS (rel. error ") and t.records()[-1]["Check"].startswith("PASS: bit")
    monkeypatch.setattr(matmul, "check_matmul_order", lambda *args, **kw: fp())
    t = matmul.check_matmul_orders(shapes=((129, 257, 75),))
    assert t.collapse and [c.name for c in t.columns] == ["Inputs", "Case", "M×N×K", "offset 0", "offset 3"]
    assert t.verdict().startswith("All 16 checks PASS") and t.column("offset 3")[0] == "PASS (7e-08)"
    monkeypatch.setattr(operand_orders, "check_kernel_order", lambda *args, **kw: compare_outputs(ref + 1, ref))
    t = operand_orders.check_kernel_orders(shapes=((129, 257, 75),), offsets=(0,))
    assert t.collapse and t.verdict().startswith("4 of 4 checks FAIL: row-major, column-major, 129×257×75: FAIL")
    # the timing table: its Check column folded away, its other columns as they were
    monkeypatch.setattr(matmul, "reference", lambda *args: "ref")
    monkeypatch.setattr(matmul, "check_output", lambda out, ref: out)
    monkeypatch.setattr(timing, "median_rounds", lambda fns, repeats: [[2e-3, 1e-3]] * repeats)
    monkeypatch.setattr(device, "device_info", lambda: SimpleNamespace(name="GPU"))
    runs = [(("one",), "A B^T", lambda: None, None, None, fp()), (("two",), "A^T B", lambda: None, None, None, fp())]
    t = matmul.order_table(runs, ["Kernel"], 1000, 1000, 1000, 2, base=1, operation="C = A @ B", note="n")
    assert [c.name for c in t.columns] == ["Run", "Kernel", "A", "B", "µs", "TFLOP/s", "% of K-major", "Check"]
    assert t.columns[-1].detail and t.column("Check")[0] == "PASS (rel. error 6.5e-08)"
    html = t._repr_html_()
    assert html.split("</table>")[0].count("PASS") == 0 and "All 4 checks PASS; largest relative error" in html
