"""The kernel workbench on the GPU (tcgemm.practice.gpu.workbench): a book kernel's own source passes its check and
is timed beside that kernel and cuBLAS; an edit of Kernel 3.1 that writes one element past C is refused, with
where it wrote; one that skips the last K tile is reported wrong; and compute-sanitizer's memcheck finds the
write past C when the workbench checks that kernel with C in an allocation of its own."""
import re
import subprocess
import sys

import pytest

from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.engine.source import kernel_text
from tcgemm.practice.workbench import RAGGED, WorkbenchError

pytestmark = pytest.mark.gpu

SMALL = "256x384x160"           # Kernel 3.1's first check shape: 2 x 3 tiles of C, 5 tiles along K
# One element past the end of C, written by one thread of the first block after its stores.
PAST_C = "    if (blockIdx.x == 0 && blockIdx.y == 0 && tid == 0) C[M * N] = 1.0f;\n}\n"


def _run(line: str, text: str):
    from tcgemm.practice.gpu.workbench import run
    return run(line, text)


def _edited(old: str, new: str) -> str:
    text = kernel_text("k3.1")
    assert text.count(old) == 1, old
    return text.replace(old, new)


def _past_c() -> str:
    """Kernel 3.1 with the write of PAST_C after its stores (in place of the kernel's closing brace)."""
    text = kernel_text("k3.1").rstrip()
    assert text.endswith("}")
    return text[:-1] + PAST_C


def test_kernel_3_1_s_own_source_passes_and_is_timed_beside_it_and_cublas():
    result = _run("like=k3.1 size=2048 rounds=3", kernel_text("k3.1"))
    assert result.checked == ((256, 384, 160), (2048, 2048, 2048))
    assert result.sass.whole["HMMA"] > 0 and result.sass.target.startswith("sm_")
    table = result.times
    assert table.column("kernel") == ["cuBLAS (cublasGemmEx)", GEMM_KERNELS["k3.1"].title, "Your kernel"]
    yours = table.records()[2]
    assert 75 <= yours["% of Kernel 3.1"] <= 133, table       # the same source: about the book kernel's speed
    assert yours["TFLOP/s"] > 0 and 0 < yours["% of cuBLAS"] < 150
    assert str(result).endswith(str(table))


@pytest.mark.parametrize("key", ["k4.5", "k4.6", "k5.6", "s2"])
def test_other_book_kernels_own_sources_pass(key):
    """Dynamic shared memory, any shape (the ragged check shape), a planned tile, TMA (sm_90), fp32 SGEMM."""
    from tcgemm.engine.gpu.compile import current_arch
    if reason := GEMM_KERNELS[key].unsupported(current_arch()):
        pytest.skip(reason)
    result = _run(f"like={key} size=1024 rounds=2", kernel_text(key))
    assert (1024, 1024, 1024) in result.checked
    assert (RAGGED in result.checked) == GEMM_KERNELS[key].any_shape
    assert len(result.times.rows) == 3


def test_a_kernel_that_writes_past_c_is_refused_with_where_it_wrote():
    with pytest.raises(WorkbenchError, match=re.escape(
            "Your kernel (like Kernel 3.1) is refused: at 256×384×160 it wrote outside C, 1 element past its end, "
            "the nearest at C[256][0] (element 98304); C is 256 x 384.")):
        _run(f"like=k3.1 size={SMALL}", _past_c())


def test_a_kernel_that_skips_the_last_k_tile_is_wrong():
    wrong = _edited("for (int kt = 0; kt < k_tiles; ++kt) {", "for (int kt = 0; kt < k_tiles - 1; ++kt) {")
    with pytest.raises(WorkbenchError, match=r"Your kernel \(like Kernel 3.1\) is wrong at 256×384×160: FAIL: "
                                             r"relative Frobenius error"):
        _run(f"like=k3.1 size={SMALL}", wrong)


def _memcheck(path) -> subprocess.CompletedProcess:
    from gpu.test_sanitizer import sanitizer
    # --padding: a red zone after every allocation, so that a write just past C is past any allocation too.
    cmd = [sanitizer(), "--tool", "memcheck", "--padding", "4096", "--report-api-errors", "no", "--error-exitcode", "3",
           sys.executable, "-m", "tcgemm.practice.gpu.workbench", str(path), "like=k3.1", f"size={SMALL}", "--bare"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def test_memcheck_finds_the_write_past_c_in_the_workbenchs_check(tmp_path):
    clean, past = tmp_path / "k3.1.cu", tmp_path / "past_c.cu"
    clean.write_text(kernel_text("k3.1"))
    past.write_text(_past_c())
    done = _memcheck(clean)
    assert done.returncode == 0 and "Your kernel (like Kernel 3.1): checked at 256×384×160" in done.stdout, \
        done.stdout[-3000:] + done.stderr[-2000:]
    assert re.search(r"ERROR SUMMARY: 0 errors", done.stdout), done.stdout[-3000:]
    done = _memcheck(past)
    assert done.returncode != 0
    assert "Invalid __global__ write of size 4 bytes" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
    assert "pipeline_4x_tiles" in done.stdout
    assert re.search(r"ERROR SUMMARY: [1-9]\d* error", done.stdout), done.stdout[-3000:]
