"""The kernel workbench without a GPU (tcgemm.practice.workbench; tests/gpu/test_workbench.py checks and times on
one): the %%kernel line, compile errors at the cell's lines, the SASS summary of a book kernel compiled through
the workbench, start_from, the writes found outside C and the table of times."""
from __future__ import annotations

import re
from dataclasses import replace

import nbformat
import numpy as np
import pytest

from tcgemm import ROOT
from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.engine.sass_loop import Instruction
from tcgemm.engine.source import kernel_text
from tcgemm.errors import KernelCompileError
from tcgemm.practice import workbench
from tcgemm.practice.workbench import (DEFAULT_ROUNDS, DEFAULT_SIZE, RAGGED, Options, WorkbenchError, check_shapes,
                                       WorkbenchResult, compile_failure, opcode_roots, parse_line, results_table,
                                       sass_summary, start_from, stray_writes)
from required import skip_or_fail

NO_GPU = "no GPU in this test"


# ---- the %%kernel line -------------------------------------------------------------------------------

def test_a_line_names_the_kernel_and_may_set_the_rest():
    assert parse_line("like=k3.1") == Options("k3.1", "k3.1", DEFAULT_SIZE, None, DEFAULT_ROUNDS)
    assert parse_line("  like=k4.4   against=k4.6 size=2048 rounds=3 ") == \
        Options("k4.4", "k4.6", (2048, 2048, 2048), None, 3)
    assert parse_line("like=k3.1 size=1024x512X256 arch=sm_90").size == (1024, 512, 256)
    assert parse_line("like=k3.1").offline_arch == "sm_80"
    assert parse_line("like=k5.1").offline_arch == "sm_90"          # a Hopper kernel compiles for sm_90 only
    assert parse_line("like=k3.1 arch=sm_89").offline_arch == "sm_89"


@pytest.mark.parametrize("line, message", [
    ("", r"say which book kernel the cell stands in for, e.g. %%kernel like=k3.1"),
    ("like=k9.9", r"like=k9.9: no such kernel; the kernels are: k1.0, .*k3.1, "),
    ("like=w1.0", r"like=w1.0: no such kernel"),      # a WMMA kernel has another signature
    ("like=k3.1 against=k3.7", r"against=k3.7: no such kernel"),
    ("like", r"'like': the options are name=value"),
    ("like=", r"'like=': the options are name=value"),
    ("like=k3.1 speed=fast", r"speed=: no such option\n%%kernel like=\.\.\. against=\.\.\."),
    ("like=k3.1 like=k3.2", r"like= given twice"),
    ("like=k3.1 size=4096x4096", r"size=4096x4096: give one size for a cube"),
    ("like=k3.1 size=0", r"size=0: give one size"),
    ("like=k3.1 rounds=1", r"rounds=1: a whole number, at least 2"),
    ("like=k3.1 rounds=many", r"rounds=many: a whole number"),
    ("like=k3.1 against=s2", r"against=s2: Kernel S2 computes float32 -> float32, Kernel 3.1 float16 -> float32"),
    ("like=k5.1 arch=sm_80", r"arch=sm_80: Kernel 5.1: TMA and wgmma compiles for sm_90"),
    ("like=k3.1 arch=sm_75", r"arch=sm_75: .* compiles for sm_80, sm_86, sm_89, sm_90"),
])
def test_a_bad_line_says_what_is_wrong(line, message):
    with pytest.raises(WorkbenchError, match=message):
        parse_line(line)


# ---- compile errors ------------------------------------------------------------------------------------

LOG = """NVRTC 13 could not compile k3.1_pipeline_4x_tiles.cu for sm_80.
Options: -arch=sm_80 -std=c++17 -I/x/kernels -DN_STAGES=3
k3.1_pipeline_4x_tiles.cu(7): error: identifier "x" is undefined
      acc += x;
             ^

k3.1_pipeline_4x_tiles.cu(9): warning #177-D: variable "y" was declared but never referenced
    int y;
        ^

ptx.cuh(40): error: too few arguments in function call
      asm volatile("...");
      ^

2 errors detected in the compilation of "k3.1_pipeline_4x_tiles.cu"."""


def test_compile_errors_are_shown_at_the_cells_lines_with_their_source_line():
    shown = compile_failure(LOG, "k3.1_pipeline_4x_tiles.cu", "sm_80", line_offset=1)
    assert shown.splitlines() == [
        "The cell does not compile for sm_80:",
        'cell line 8: error: identifier "x" is undefined', "      acc += x;", "             ^",
        "ptx.cuh line 40: error: too few arguments in function call", '      asm volatile("...");', "      ^",
    ]
    assert compile_failure(LOG, "k3.1_pipeline_4x_tiles.cu", "sm_80").splitlines()[1].startswith("cell line 7:")


def test_a_failure_without_an_error_line_is_shown_as_it_came():
    message = "No NVRTC with its CUDA headers found for CUDA 13 (pip install -r requirements-nvrtc13.txt)"
    assert compile_failure(message, "cell.cu", "sm_80") == message


def _needs_nvrtc_and_cuobjdump():
    from tcgemm.engine.gpu.nvrtc_offline import toolkit
    from tcgemm.engine.gpu.sass import sass_tools_missing
    try:
        toolkit()
    except KernelCompileError as exc:
        skip_or_fail("TCGEMM_REQUIRE_NVRTC", str(exc))
    if missing := sass_tools_missing():
        skip_or_fail("TCGEMM_REQUIRE_NVRTC", missing)


@pytest.fixture
def no_gpu(monkeypatch):
    """The workbench as it runs without a GPU (on any machine): compile and SASS only."""
    _needs_nvrtc_and_cuobjdump()
    from tcgemm.engine.gpu import device
    monkeypatch.setattr(device, "gpu_unavailable_reason", lambda: NO_GPU)


def test_a_book_kernel_through_the_workbench_shows_its_sass_and_says_a_gpu_is_needed(no_gpu):
    from tcgemm.publish.magic import kernel

    result = kernel("like=k3.1", kernel_text("k3.1"))
    sass = result.sass
    assert sass.target == "sm_80" and sass.title == "Your kernel (like Kernel 3.1)"
    assert sass.whole["HMMA"] == 32 and sass.whole["LDSM"] > 0 and sass.whole["LDGSTS"] > 0   # 4 x 4 tiles x 2 k16
    assert sass.loop["HMMA"] == 32 and 0 < sass.lengths[1] < sass.lengths[0]                  # all in the main loop
    assert sass.registers <= 128 and sass.local_bytes == 0        # __launch_bounds__(256, 2): no spills
    assert sass.static_smem == 3 * 2 * 128 * 32 * 2 and sass.dynamic_smem == 0   # 3 stages of A and B tiles
    assert result.checked == () and result.times is None
    assert result.not_run == f"Checking and timing need a GPU: {NO_GPU}."
    text = str(result)
    assert text.startswith("Your kernel (like Kernel 3.1), compiled for sm_80 by NVRTC: ")
    assert text.endswith(f"\n\nChecking and timing need a GPU: {NO_GPU}.")
    assert "no local memory (no spills), 48.0 KB of shared memory per block" in text
    assert re.search(r"^the whole kernel +\d+ +32 ", text, re.M)


def test_a_hopper_kernel_compiles_for_its_own_target_and_an_arch_asked_is_used(no_gpu):
    from tcgemm.practice.gpu.workbench import run

    sass = run("like=k5.1", kernel_text("k5.1")).sass
    assert sass.target == "sm_90a" and sass.whole["HGMMA"] > 0 and sass.whole["UTMALDG"] > 0
    assert sass.dynamic_smem == GEMM_KERNELS["k5.1"].smem_bytes
    assert run("like=k3.1 arch=sm_89", kernel_text("k3.1")).sass.target == "sm_89"


def _broken() -> tuple[str, int]:
    """Kernel 3.1's source with an error in its body, and the cell line of the error (the %%kernel line
    being line 1): the line after `const int lane = ...`."""
    lines = kernel_text("k3.1").splitlines()
    at = next(i for i, line in enumerate(lines) if "const int lane = tid % 32;" in line) + 1
    lines.insert(at, "    undefined_name = 1;")
    return "\n".join(lines), at + 2


def test_an_error_on_cell_line_n_is_reported_at_line_n(no_gpu):
    from tcgemm.publish.magic import kernel

    broken, n = _broken()
    with pytest.raises(WorkbenchError) as caught:
        kernel("like=k3.1", broken)
    lines = str(caught.value).splitlines()
    assert lines[:3] == ["The cell does not compile for sm_80:",
                         f'cell line {n}: error: identifier "undefined_name" is undefined',
                         "      undefined_name = 1;"]
    assert "Options:" not in str(caught.value) and caught.value._render_traceback_() == lines


def test_a_cell_without_the_entry_point_is_refused(no_gpu):
    from tcgemm.practice.gpu.workbench import run

    renamed = kernel_text("k3.1").replace("pipeline_4x_tiles(", "my_kernel(")
    with pytest.raises(WorkbenchError, match=r'no extern "C" __global__ function pipeline_4x_tiles, .* \(as '
                                             r"Kernel 3.1 does\); it has: my_kernel\."):
        run("like=k3.1", renamed)


def test_in_a_notebook_the_magic_shows_a_compile_error_as_its_message_alone():
    """`%load_ext tcgemm.publish.magic` brings %%kernel; its error shows the workbench's lines, no traceback."""
    from nbclient import NotebookClient

    _needs_nvrtc_and_cuobjdump()
    broken, n = _broken()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in ("%load_ext tcgemm.publish.magic",
                                                       "%%kernel like=k3.1\n" + broken)]
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    errors = [o for o in nb.cells[1].outputs if o.output_type == "error"]
    assert len(errors) == 1 and errors[0].ename == "WorkbenchError"
    assert errors[0].traceback[1] == f'cell line {n}: error: identifier "undefined_name" is undefined'
    assert not any("Traceback" in line or "File " in line for line in errors[0].traceback)


# ---- start_from ----------------------------------------------------------------------------------------

def test_start_from_gives_the_source_under_its_magic_line():
    text = start_from("k3.1")
    assert text == "%%kernel like=k3.1\n" + kernel_text("k3.1")
    assert parse_line(text.splitlines()[0].removeprefix("%%kernel")) == parse_line("like=k3.1")
    with pytest.raises(WorkbenchError, match="like=k3.9: no such kernel"):
        start_from("k3.9")


def test_in_ipython_start_from_fills_the_next_cell(monkeypatch):
    import IPython

    class Shell:
        def set_next_input(self, text, replace=False):
            self.text = text
    shell = Shell()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    assert start_from("k4.4") is None
    assert shell.text == "%%kernel like=k4.4\n" + kernel_text("k4.4")


# ---- the SASS summary ----------------------------------------------------------------------------------

LISTING = """
        Function : other
        /*0000*/                   HMMA.16816.F32 R0, R4, R8, R0 ;
        Function : entry
        /*0000*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0010*/                   STS.128 [R1], R4 ;
        /*0020*/                   LDSM.16.M88.4 R8, [R1] ;
        /*0030*/                   LDS.64 R12, [R1+0x10] ;
        /*0040*/                   HMMA.16816.F32 R16, R8, R12, R16 ;
        /*0050*/                   HMMA.16816.F32 R20, R8, R14, R20 ;
        /*0060*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0070*/              @P0 BRA 0x0020 ;
        /*0080*/                   STG.E.64 [R2.64], R16 ;
        /*0090*/                   EXIT ;
"""


def test_the_sass_summary_counts_opcodes_by_root_in_all_and_in_the_main_loop():
    spec = replace(GEMM_KERNELS["k3.1"], entry="entry", title="Your kernel (like Kernel 3.1)")
    resources = {"registers": 40, "local": 16, "shared": 8192, "stack": 0}
    sass = sass_summary(LISTING, resources, spec, "sm_80")
    assert {op: n for op, n in sass.whole.items() if n} == {"HMMA": 2, "LDSM": 1, "LDS": 1, "STS": 1, "LDG": 1,
                                                             "STG": 1, "BAR": 1}
    assert {op: n for op, n in sass.loop.items() if n} == {"HMMA": 2, "LDSM": 1, "LDS": 1, "BAR": 1}
    assert sass.lengths == (10, 6)
    assert "40 registers per thread, 16 bytes of local memory per thread (spills?), 8.0 KB" in sass.resources
    assert sass.table.column("SASS") == ["the whole kernel", "its main loop, one pass"]
    assert [c.name for c in sass.table.columns][2:] == list(workbench.COUNTED)   # ALSO only where present
    assert opcode_roots([Instruction(0, "@!P1 LDSM.16.MT88.4 R0, [R2]")], ("LDS", "LDSM")) == {"LDS": 0, "LDSM": 1}


# ---- the check and the results -------------------------------------------------------------------------

def test_the_check_shapes_add_a_ragged_one_for_any_shape_kernels():
    assert check_shapes(GEMM_KERNELS["k3.1"], (4096, 4096, 4096)) == [(256, 384, 160), (4096, 4096, 4096)]
    assert check_shapes(GEMM_KERNELS["k4.5"], (256, 768, 160)) == [(256, 768, 160), RAGGED]


def test_writes_outside_c_are_found_before_and_after_it():
    full = lambda n: np.full(n, 0xFFFFFFFF, dtype=np.uint32)
    front, back = full(8), full(8)
    assert stray_writes(front, back, 0xFFFFFFFF, 4, 6) is None
    back[0] = 0x3F800000                                     # 1.0f, one element past C
    assert stray_writes(front, back, 0xFFFFFFFF, 4, 6) == \
        "1 element past its end, the nearest at C[4][0] (element 24); C is 4 x 6"
    front[-1] = front[-5] = 0
    assert stray_writes(front, full(8), 0xFFFFFFFF, 4, 6) == \
        "2 elements before its start, the nearest at C[-1][5] (element -1); C is 4 x 6"


def test_the_table_of_times_gives_each_kernel_against_the_book_kernel_and_cublas():
    times = {"cuBLAS": [1e-3, 1e-3, 1.2e-3], "Kernel 3.1": [2e-3, 2e-3, 2e-3], "Your kernel": [1.6e-3, 2e-3, 2.4e-3]}
    table = results_table(times, "Kernel 3.1", "cuBLAS", 4096, 4096, 4096, "Kernel 3.1")
    assert table.column("kernel") == ["cuBLAS", "Kernel 3.1", "Your kernel"]
    assert table.column("µs") == pytest.approx([1000, 2000, 2000])
    assert table.column("TFLOP/s") == pytest.approx([2 * 4096 ** 3 / t / 1e12 for t in (1e-3, 2e-3, 2e-3)])
    assert table.column("% of Kernel 3.1") == pytest.approx([200, 100, 100])     # per round: 125, 100, 83.3
    assert table.column("% of cuBLAS") == pytest.approx([100, 50, 50])           # per round: 62.5, 50, 50
    assert table.caption == "C = A @ B at 4096³: 3 interleaved rounds"


def test_a_result_shows_the_sass_the_check_and_the_times_in_order():
    times = results_table({"cuBLAS": [1e-3, 1e-3], "Kernel 3.1": [2e-3, 2e-3], "Your kernel": [2e-3, 2e-3]},
                          "Kernel 3.1", "cuBLAS", 4096, 4096, 4096, "Kernel 3.1")
    spec = replace(GEMM_KERNELS["k3.1"], entry="entry")
    sass = sass_summary(LISTING, {"registers": 40, "local": 0, "shared": 0}, spec, "sm_90")
    result = WorkbenchResult(sass, checked=((256, 384, 160), (4096, 4096, 4096)), times=times)
    assert result.parts() == [sass, "Checked at 256×384×160, 4096³: PASS (fresh random A and B, C poisoned with "
                                    "NaN, nothing written outside C)", times]
    assert str(result) == f"{sass}\n\n{result.parts()[1]}\n\n{times}"
    assert result._repr_html_() == sass._repr_html_() + f"<p>{result.parts()[1]}</p>" + times._repr_html_()
    no_sass = WorkbenchResult(None, "No SASS here: no cuobjdump.", not_run="Checking and timing need a GPU: none.")
    assert no_sass.parts() == ["No SASS here: no cuobjdump.", "Checking and timing need a GPU: none."]


def test_a_kernel_with_its_text_in_place_of_its_file_is_another_configuration():
    spec = GEMM_KERNELS["k3.1"]
    edited = replace(spec, text="// a reader's kernel")
    assert edited != spec and hash(edited) != hash(spec) and "reader" not in repr(edited)
    assert edited.source == spec.source and edited.defines == spec.defines
