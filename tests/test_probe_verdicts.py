"""How a probe's verdict reads (the probes themselves run in tests/gpu)."""
from dataclasses import replace

from tcgemm.fragment_layouts import ldmatrix_layout
from tcgemm.engine.gpu.probes import LdmatrixProbe, ldmatrix_verdict_table, mma_verdict_table


def test_ldmatrix_verdict_names_the_instruction_and_each_check():
    layout = ldmatrix_layout(2, True)
    good = LdmatrixProbe(2, True, layout, layout, shuffled_rows_match=True)
    assert str(good) == ("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16   layout: MATCH  "
                         "shuffled rows: MATCH")
    moved = replace(layout, row=layout.row[::-1])
    bad = LdmatrixProbe(2, True, layout, moved, shuffled_rows_match=True)
    assert not bad.match and str(bad).endswith("layout: MISMATCH  shuffled rows: MATCH")
    assert not replace(good, shuffled_rows_match=False).match


def test_ldmatrix_verdict_table_has_a_row_per_probe():
    layout = ldmatrix_layout(2, True)
    good = LdmatrixProbe(2, True, layout, layout, shuffled_rows_match=True)
    bad = replace(good, shuffled_rows_match=False)
    table = ldmatrix_verdict_table([good, bad])
    assert [c.name for c in table.columns] == ["Instruction", "Layout", "Shuffled rows"]
    assert table.rows == (("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16", "MATCH", "MATCH"),
                          ("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16", "MATCH", "MISMATCH"))


def test_mma_verdict_table_reads_each_operand_and_the_product():
    table = mma_verdict_table([("mma.x", {"A": True, "B": False, "C": True, "D": True}, False)])
    assert [c.name for c in table.columns] == ["Instruction", "A", "B", "C", "D", "Random product"]
    assert table.rows == (("mma.x", "MATCH", "MISMATCH", "MATCH", "MATCH", "MISMATCH"),)
