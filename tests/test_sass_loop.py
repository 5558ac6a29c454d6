"""Finding a kernel's hot loop in a cuobjdump listing."""
import pytest

from tcgemm.sgemm import regbank
from tcgemm import sass_loop

LISTING = """
        Function : other
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   EXIT ;
        Function : kern
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   FFMA R2, R3, R4, R2 ;
        /*0020*/                   LDS.128 R8, [R5] ;
        /*0030*/                   FFMA R2, R8.reuse, R4, R2 ;
        /*0040*/                   FFMA R6, R8, R9, R6 ;
        /*0050*/               @P0 BRA 0x20 ;
        /*0060*/                   LDS.128 R8, [R5] ;
        /*0070*/                   BRA 0x60 ;
        /*0080*/                   EXIT ;
"""


def test_hot_loop_is_the_backward_branch_with_most_ffma():
    body = sass_loop.hot_loop(LISTING, "kern")
    assert [i.address for i in body] == [0x20, 0x30, 0x40, 0x50]
    assert sass_loop.opcode_counts(body) == {"LDS.128": 1, "FFMA": 2, "BRA": 1}
    assert sass_loop.reuse_flags(body) == 1
    ffmas = regbank.parse_ffma(sass_loop.text(body))
    assert [f.dest for f in ffmas] == [2, 6]


def test_unknown_function_and_no_loop_are_named():
    with pytest.raises(KeyError, match="no function 'nope'.*kern"):
        sass_loop.hot_loop(LISTING, "nope")
    with pytest.raises(ValueError, match="other has no backward branch"):
        sass_loop.hot_loop(LISTING, "other")
