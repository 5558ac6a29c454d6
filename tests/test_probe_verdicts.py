"""How a probe's verdict reads (the probes themselves run in tests/gpu)."""
from dataclasses import replace

from tcgemm.fragments.layouts import ldmatrix_layout
from tcgemm.gpu.probes import LdmatrixProbe


def test_ldmatrix_verdict_names_the_instruction_and_each_check():
    layout = ldmatrix_layout(2, True)
    good = LdmatrixProbe(2, True, layout, layout, shuffled_rows_match=True)
    assert str(good) == ("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16   layout: MATCH  "
                         "shuffled rows: MATCH")
    moved = replace(layout, row=layout.row[::-1])
    bad = LdmatrixProbe(2, True, layout, moved, shuffled_rows_match=True)
    assert not bad.match and str(bad).endswith("layout: MISMATCH  shuffled rows: MATCH")
    assert not replace(good, shuffled_rows_match=False).match
