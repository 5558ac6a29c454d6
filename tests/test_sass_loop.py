"""Finding a kernel's hot loop in a cuobjdump listing."""
import pytest

from tcgemm.sgemm import regbank
from tcgemm.engine import sass_loop

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


def _compiled_hot_loops():
    """tcgemm.engine.gpu.sass.kernel_hot_loop, or a skip where NVRTC 13 or cuobjdump is missing (the counts
    asserted below are those of NVRTC 13's code)."""
    from tcgemm.engine.gpu.nvrtc_offline import cuda_tool, find_toolkit
    from tcgemm.engine.gpu.sass import kernel_hot_loop

    if find_toolkit(13) is None or cuda_tool("cuobjdump") is None:
        pytest.skip("needs NVRTC 13 and cuobjdump (requirements-nvrtc13.txt, requirements-sass.txt)")
    return kernel_hot_loop


@pytest.mark.slow     # compiles the kernels
def test_hot_loops_of_the_compiled_kernels():
    """The loops the SGEMM and pipelines chapters read: 8 x 8 FFMA x 8 k per thread per K tile in
    S2; 4 x 8 tiles x 4 k16 slices of HMMA per K tile in Kernel 4.4 on sm_90 (BK = 64)."""
    kernel_hot_loop = _compiled_hot_loops()
    assert sass_loop.tally(kernel_hot_loop("s2", "sm_90"), {"FFMA": "FFMA"}) == {"FFMA": 512}
    assert sass_loop.tally(kernel_hot_loop("k4.4", "sm_90", "HMMA"), {"HMMA": "HMMA"}) == {"HMMA": 128}


def test_count_before_counts_in_address_order_up_to_the_first_stop():
    body = sass_loop.instructions("\n".join(f"/*{16 * n:04x}*/ {text} ;" for n, text in enumerate([
        "LDG.E.U16 R1, [R2.64]", "@P0 BRA 0x60", "LDG.E.U16 R3, [R4.64]", "STS.U16 [R5], R1",
        "LDG.E.U16 R6, [R4.64+0x20]", "BAR.SYNC.DEFER_BLOCKING 0x0"])))
    assert sass_loop.count_before(body, "LDG", "STS") == 2
    assert sass_loop.count_before(body, "LDG", "BAR") == 3
    assert sass_loop.count_before(body, "BRA", "BAR") == 1
    with pytest.raises(ValueError, match="no HMMA in the 6 instructions"):
        sass_loop.count_before(body, "LDG", "HMMA")


@pytest.mark.slow     # compiles the kernels
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("key, loads", [("k1.0", 4), ("k1.1", 8)])
def test_naive_kernels_issue_a_steps_global_loads_before_storing_any(key, loads, arch):
    """Kernels 1.0 and 1.1 copy (BM + BN) * BK / THREADS = 4 and 8 fp16 elements per thread and step, in
    loops with a fixed trip count: the compiler unrolls them, and the main loop issues all those LDG before
    its first STS, with no branch before the barrier. With the copy loops in the strided form (trip count
    depending on tid) they stay loops, with branches, and a load's STS comes before the next LDG."""
    from tcgemm.engine.source import strided_copy_loops

    kernel_hot_loop = _compiled_hot_loops()
    written = kernel_hot_loop(key, arch, "HMMA")
    assert sass_loop.count_before(written, "LDG", "STS") == loads
    assert sass_loop.count_before(written, "BRA", "BAR") == 0
    strided = kernel_hot_loop(key, arch, "HMMA", rewrite=strided_copy_loops)
    assert sass_loop.count_before(strided, "LDG", "STS") == 1
    assert sass_loop.count_before(strided, "BRA", "BAR") > 0


def test_copy_loop_table_reads_both_forms():
    _compiled_hot_loops()
    from tcgemm.engine.gpu.sass import copy_loop_table

    rows = copy_loop_table("k1.0", ("sm_90",)).rows
    assert [row[:4] for row in rows] == [("as written, a fixed trip count", "sm_90", 4, 4),
                                         ("strided, for (i = tid; ...)", "sm_90", 4, 1)]
    assert rows[0][4] == 0 < rows[1][4]


def test_sass_tools_missing_names_the_missing_tool(monkeypatch):
    from tcgemm.engine.gpu import sass

    monkeypatch.setattr(sass, "find_toolkit", lambda major: None)
    assert sass.sass_tools_missing().startswith("No SASS here: no NVRTC")
    monkeypatch.setattr(sass, "find_toolkit", lambda major: object())
    monkeypatch.setattr(sass, "cuda_tool", lambda name: None)
    assert sass.sass_tools_missing().startswith("No SASS here: no cuobjdump")
    monkeypatch.setattr(sass, "cuda_tool", lambda name: f"/usr/bin/{name}")
    assert sass.sass_tools_missing() is None
