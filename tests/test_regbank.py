"""The register-bank model: numberings, orders, the reuse cache, and the counts the chapter quotes."""

import numpy as np
import pytest

from tcgemm.sgemm import regbank
from tcgemm.sgemm.regbank import (
    MAXWELL, ORDERS, VOLTA, Ffma, Numbering, back_and_forth, conflict_free_numbering, instructions,
    maxas_swirl, naive_numbering, parse_ffma, row_by_row, score, score_case, score_sass, simulate,
    simulate_sass, unavoidable_conflicts,
)

NO_REUSE = dict(reuse_slots=(), reuse_depth=0)
REUSE_A = dict(reuse_slots=("a",), reuse_depth=1)
REUSE_AB = dict(reuse_slots=("a", "b"), reuse_depth=2)
ALL_CELLS = {(i, j) for i in range(8) for j in range(8)}


def test_bank_models():
    assert [MAXWELL.bank(r) for r in (0, 5, 74)] == [0, 1, 2]
    assert MAXWELL.extra_cycles({0, 4, 8}) == 2 and MAXWELL.extra_cycles({0, 1, 2}) == 0
    assert VOLTA.extra_cycles({0, 2}) == 0 and VOLTA.extra_cycles({0, 2, 4}) == 1
    assert VOLTA.extra_cycles({1, 3, 4}) == 0


@pytest.mark.parametrize("order", ORDERS.values(), ids=ORDERS.keys())
def test_orders_visit_every_cell_once(order):
    pairs = order()
    assert len(pairs) == 64 and set(pairs) == ALL_CELLS


def test_order_shapes():
    assert row_by_row()[:9] == [(0, j) for j in range(8)] + [(1, 0)]
    assert back_and_forth()[6:10] == [(0, 1), (0, 0), (1, 0), (1, 1)]
    # maxas names x, y = 0,1,2,3,32,33,34,35 -> 0..7: (2,0) (2,1) (0,1) (0,0) (3,0) ...; the next
    # two columns of B sweep A the other way, starting at x = 35.
    assert maxas_swirl()[:5] == [(2, 0), (2, 1), (0, 1), (0, 0), (3, 0)]
    assert maxas_swirl()[16] == (7, 2)


def test_naive_numbering():
    n = naive_numbering()
    assert n.c[1, 2] == 10 and n.a.tolist() == list(range(64, 72)) and n.b.tolist() == list(range(72, 80))


@pytest.mark.parametrize("rf", [MAXWELL, VOLTA], ids=["maxwell", "volta"])
def test_conflict_free_numbering_is_balanced_and_adds_no_conflict(rf):
    n = conflict_free_numbering(rf)
    assert sorted(n.c.ravel().tolist()) == list(range(64))
    assert np.bincount(n.c.ravel() % rf.banks).tolist() == [64 // rf.banks] * rf.banks
    for i, j in ALL_CELLS:
        a_b_alone = rf.extra_cycles({n.a[i], n.b[j]})
        assert rf.extra_cycles({n.a[i], n.b[j], n.c[i, j]}) == a_b_alone


def test_maxwell_conflict_free_c_avoids_both_banks():
    n = conflict_free_numbering(MAXWELL)
    assert all(n.c[i, j] % 4 not in (n.a[i] % 4, n.b[j] % 4) for i, j in ALL_CELLS)


def test_sixteen_a_b_clashes_no_c_numbering_removes():
    n = naive_numbering()
    clashes = unavoidable_conflicts(n, MAXWELL)
    assert clashes == [(i, j) for i in range(8) for j in range(8) if i % 4 == j % 4]
    assert len(clashes) == 16 and unavoidable_conflicts(n, VOLTA) == []
    rng = np.random.default_rng(0)
    for _ in range(20):
        shuffled = Numbering("shuffled", rng.permutation(64).reshape(8, 8), n.a, n.b)
        steps = simulate(instructions(shuffled, row_by_row()), MAXWELL, **NO_REUSE)
        assert set(clashes) <= {s.instruction.cell for s in steps if s.conflict}


# ---- The chapter's claims (Maxwell unless said) ---------------------------------------------


def test_claim_naive_row_by_row_conflicts_every_time():
    steps = simulate(instructions(naive_numbering(), row_by_row()), MAXWELL, **NO_REUSE)
    assert all(s.conflict for s in steps)
    assert all(s.banks[1] == s.banks[2] for s in steps)   # c_ij shares b_j's bank


@pytest.mark.parametrize("order", ORDERS)
def test_claim_conflict_free_numbering_leaves_only_the_sixteen(order):
    steps = simulate(instructions(conflict_free_numbering(), ORDERS[order]()), MAXWELL, **NO_REUSE)
    conflicting = sorted(s.instruction.cell for s in steps if s.conflict)
    assert conflicting == unavoidable_conflicts(conflict_free_numbering(), MAXWELL)


def test_claim_reusing_a_row_by_row_leaves_two_row_starts():
    steps = simulate(instructions(conflict_free_numbering(), row_by_row()), MAXWELL, **REUSE_A)
    assert [s.instruction.cell for s in steps if s.conflict] == [(0, 0), (4, 0)]


def test_claim_back_and_forth_with_a_reuse_has_no_conflict():
    assert score(instructions(conflict_free_numbering(), back_and_forth()), MAXWELL, **REUSE_A).conflicts == 0


def test_claim_swirl_reuses_most_with_a_and_b_depth_2():
    rates = {name: score_case("conflict-free for Maxwell", name, "Maxwell/Pascal", **REUSE_AB)
             for name in ORDERS}
    assert rates["Maxas swirl"].conflicts == 0
    assert [rates[name].reuse_hits["a"] + rates[name].reuse_hits["b"] for name in ORDERS] == [56, 70, 94]
    assert rates["row by row"].hit_rate < rates["back and forth"].hit_rate < rates["Maxas swirl"].hit_rate


def test_swirl_needs_reuse_on_both_slots():
    swirl = instructions(conflict_free_numbering(), maxas_swirl())
    assert score(swirl, MAXWELL, **REUSE_A).conflicts == 8


def test_claim_volta_conflicts_need_three_sources_in_one_bank():
    steps = simulate(instructions(naive_numbering(), row_by_row()), VOLTA, **NO_REUSE)
    conflicting = [s for s in steps if s.conflict]
    assert len(conflicting) == 32
    assert all(len(set(s.banks)) == 1 for s in conflicting)
    assert all(len(set(s.banks)) == 2 for s in steps if not s.conflict)


@pytest.mark.parametrize("order", ORDERS)
def test_claim_volta_conflict_free_numbering(order):
    assert score_case("conflict-free for Volta", order, "Volta and later", **NO_REUSE).conflicts == 0


# ---- The reuse cache -------------------------------------------------------------------------


def test_reuse_depth_is_least_recently_used():
    reads = [Ffma(c, a, 100) for c, a in [(0, 1), (4, 2), (8, 1), (12, 3), (16, 2)]]
    hits = lambda depth: [bool(s.hits) for s in simulate(reads, MAXWELL, ("a",), depth)]
    assert hits(1) == [False] * 5
    assert hits(2) == [False, False, True, False, False]   # R3 pushed R2 out before its reuse


def test_one_register_in_two_slots_is_read_once():
    (step,) = simulate([Ffma(8, 4, 4)], MAXWELL, **NO_REUSE)
    assert step.reads == (4, 8) and step.extra_cycles == 1


def test_hits_are_not_read_from_the_banks():
    first, second = simulate([Ffma(0, 4, 8), Ffma(12, 4, 16)], MAXWELL, **REUSE_A)
    assert first.extra_cycles == 2 and second.hits == ("a",) and second.reads == (12, 16)


# ---- Bad input -------------------------------------------------------------------------------


def test_bad_input_is_refused_clearly():
    with pytest.raises(ValueError, match="unknown order 'zigzag'"):
        score_case("naive", "zigzag", "Maxwell/Pascal")
    with pytest.raises(ValueError, match="unknown numbering"):
        score_case("clever", "row by row", "Maxwell/Pascal")
    with pytest.raises(ValueError, match=r"registers used twice: \[64\]"):
        Numbering("dup", np.arange(64).reshape(8, 8), np.arange(64, 72), np.r_[64, 73:80])
    with pytest.raises(ValueError, match="shape"):
        Numbering("short", np.arange(64), np.arange(64, 72), np.arange(72, 80))
    with pytest.raises(ValueError, match=r"misses \[\(7, 7\)\]"):
        instructions(naive_numbering(), row_by_row()[:-1])
    with pytest.raises(ValueError, match=r"repeats \[\(0, 0\)\]"):
        instructions(naive_numbering(), row_by_row()[:-1] + [(0, 0)])
    with pytest.raises(ValueError, match="reuse_depth"):
        simulate([], MAXWELL, ("a",), 3)
    with pytest.raises(ValueError, match="reuse slots"):
        simulate([], MAXWELL, ("d",), 1)


# ---- SASS ------------------------------------------------------------------------------------

SASS = """
        Function : sgemm
        /*0a70*/                   LDS.U.128 R76, [R2+0x10] ;
        /*0a80*/                   FFMA R24, R76.reuse, R84.reuse, R24 ;
        /*0a90*/                   FFMA R25, R76.reuse, R85, R25 ;
        /*0aa0*/               @P0 FFMA R26, R76, -R86, R26 ;
        /*0ab0*/                   FFMA R3, R4, 0.5, R3 ;
        /*0ac0*/                   FFMA.FTZ R5, R8, c[0x0][0x160], RZ ;  /* 0x0000580008057a23 */
        /*0ad0*/                   DFMA R0, R2, R4, R6 ;
        /*0ae0*/                   FFMA R0, R12, R16, R20 ;
"""


def test_parse_ffma_keeps_register_sources_and_reuse_flags():
    ffmas = parse_ffma(SASS)
    assert len(ffmas) == 6
    assert ffmas[0].dest == 24 and ffmas[0].sources == (("a", 76), ("b", 84), ("c", 24))
    assert ffmas[0].reuse == {"a", "b"} and ffmas[1].reuse == {"a"}
    assert ffmas[2].sources == (("a", 76), ("b", 86), ("c", 26)) and "@P0 FFMA" in ffmas[2].text
    assert ffmas[3].sources == (("a", 4), ("c", 3))
    assert ffmas[4].sources == (("a", 8),)


def test_score_sass_uses_the_listing_reuse_flags():
    steps = simulate_sass(parse_ffma(SASS), MAXWELL)
    assert [s.hits for s in steps] == [(), ("a",), ("a",), (), (), ()]
    assert [s.extra_cycles for s in steps] == [2, 1, 1, 0, 0, 2]
    maxwell = score_sass(parse_ffma(SASS), MAXWELL)
    assert (maxwell.instructions, maxwell.conflicts, maxwell.extra_cycles) == (6, 4, 6)
    assert maxwell.reuse_hits["a"] == 2 and maxwell.ab_reads == 10 and maxwell.hit_rate == 0.2
    volta = score_sass(parse_ffma(SASS), VOLTA)
    assert (volta.conflicts, volta.extra_cycles) == (2, 2)


def test_parse_ffma_refuses_a_malformed_line():
    with pytest.raises(ValueError, match="4 operands"):
        parse_ffma("  /*0010*/  FFMA R1, R2, R3 ;")


def test_registers_of_every_named_case_are_distinct():
    for name in regbank.NUMBERINGS:
        n = regbank.numbering_named(name)
        registers = [*n.c.ravel(), *n.a, *n.b]
        assert len(set(registers)) == len(registers) == 80, name
