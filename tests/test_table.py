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
    metric = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum"
    html = Table(["ncu metric", "n"], [[metric, 1], ["short", 2]])._repr_html_()
    assert re.search(rf'<td style="[^"]*overflow-wrap:anywhere[^"]*">{re.escape(metric)}</td>', html)


def test_bench_table_fits_the_text_column():
    # The book's text column is 688 CSS px at a 1280 px window. A table can shrink to the sum of its
    # columns' longest unbreakable words: at 14 px (0.875 of the theme's 16 px) at most ~8 px per
    # character, plus 0.8 em of padding per cell, the bench table must fit.
    from tcgemm.report import BenchResult, bench_table, summarize
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
