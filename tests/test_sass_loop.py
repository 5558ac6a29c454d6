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


def test_branch_with_a_label_is_read():
    body = sass_loop.loops(sass_loop.instructions(
        "/*0010*/ FFMA R2, R3, R4, R2 ;\n/*0020*/ @P0 BRA `(.L_x_1) 0x10 ;"))
    assert [[i.address for i in loop] for loop in body] == [[0x10, 0x20]]


def test_tally_counts_opcodes_by_prefix_and_summary_reads_the_loop():
    body = sass_loop.hot_loop(LISTING, "kern")
    assert sass_loop.tally(body, {"FFMA": "FFMA", "loads": ("LDS", "LDG"), "integer": sass_loop.INTEGER}) == \
        {"FFMA": 2, "loads": 1, "integer": 0}
    table = sass_loop.summary_table({"kern": body})
    assert [c.name for c in table.columns] == ["Loop", "Instructions per K tile", "FFMA", "FFMA %", "LDS.128",
                                               ".reuse flags", "Others"]
    assert table.text_rows() == [["kern", "4", "2", "50.0", "1", "1", "BRA 1"]]
    assert sass_loop.summary_table({"kern": body}, also=(), others=0).rows == ((
        "kern", 4, 2, 50.0, 1, "2 more opcodes"),)


def test_hot_loops_of_the_compiled_kernels():
    """The loops the SGEMM and pipelines chapters read: 8 x 8 FFMA x 8 k per thread per K tile in
    S2; 4 x 8 tiles x 4 k16 slices of HMMA per K tile in Kernel 4.4 on sm_90 (BK = 64)."""
    from tcgemm.gpu.nvrtc_offline import cuda_tool, find_toolkit
    from tcgemm.gpu.sass import kernel_hot_loop

    if find_toolkit(13) is None or cuda_tool("cuobjdump") is None:
        pytest.skip("needs NVRTC 13 and cuobjdump (requirements-nvrtc13.txt, requirements-sass.txt)")
    assert sass_loop.tally(kernel_hot_loop("s2", "sm_90"), {"FFMA": "FFMA"}) == {"FFMA": 512}
    assert sass_loop.tally(kernel_hot_loop("k4.4", "sm_90", "HMMA"), {"HMMA": "HMMA"}) == {"HMMA": 128}
