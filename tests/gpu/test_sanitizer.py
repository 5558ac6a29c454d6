"""compute-sanitizer memcheck and racecheck on every GEMM kernel at a small size (a few tiles, K of
several tiles); the any-shape kernels also on a ragged shape (one whose rows of C a TMA store can
write, too, for the kernels that store C by TMA). Skipped where compute-sanitizer is
not installed."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tcgemm.engine.catalog import ELEMENTS, GEMM_KERNELS, WMMA_CASES, WMMA_KERNELS
from tcgemm.engine.kernel_types import Signature
from tcgemm.engine.plan import TILES

pytestmark = pytest.mark.gpu


def sanitizer():
    found = shutil.which("compute-sanitizer") or next(
        (str(p) for p in [Path("/usr/local/cuda/bin/compute-sanitizer"),
                          *sorted(Path("/opt/nvidia").glob("**/compute-sanitizer"))] if p.is_file()), None)
    if found is None:
        pytest.skip("compute-sanitizer not installed")
    return found


def shape(key):
    spec = GEMM_KERNELS[key]
    return (2 * spec.tile_m, 2 * spec.tile_n, 6 * 64)


CASES = [(k, "memcheck", shape(k)) for k in GEMM_KERNELS] + [(k, "racecheck", shape(k)) for k in GEMM_KERNELS] + \
        [(k, tool, (129, 257, 75)) for k, s in GEMM_KERNELS.items() if s.any_shape for tool in ("memcheck", "racecheck")] + \
        [("k4.3+STAGE_C", tool, shape("k4.3")) for tool in ("memcheck", "racecheck")] + \
        [(f"a1+{switch}", tool, shape("a1")) for switch in ("NO_CP_ASYNC", "NO_REG_DB", "SMALL_WARP_TILE")
         for tool in ("memcheck", "racecheck")] + \
        [(f"k4.6@{t.name}/{splits}", "memcheck", (129, 257, 200)) for t in TILES for splits in (1, 3)] + \
        [(f"k4.6@{t}/2", "racecheck", (129, 257, 200)) for t in ("128x128", "16x64")] + \
        [(k, "synccheck", shape(k)) for k, s in GEMM_KERNELS.items() if s.signature.tensor_maps] + \
        [(k, tool, (129, 260, 75)) for k, s in GEMM_KERNELS.items() if s.signature.stores_c_by_tma for tool in ("memcheck", "racecheck")] + \
        [("k5.0+BLOCK_SYNC", tool, shape("k5.0")) for tool in ("memcheck", "racecheck", "synccheck")]


def assert_clean(tool: str, module: str, *args: str) -> None:
    """`python -m module args` under compute-sanitizer `tool`: exit 0 and no error in its summary."""
    # API errors that the program handles are not the kernels' (cuda-python probes the driver for entry
    # points it may lack, making Kernel 5.0's tensor maps); one it does not handle fails the run by its exit code.
    cmd = [sanitizer(), "--tool", tool, "--report-api-errors", "no", "--error-exitcode", "3", sys.executable,
           "-m", module, *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    summary = [line for line in done.stdout.splitlines() if "ERROR SUMMARY" in line or "RACECHECK SUMMARY" in line]
    assert done.returncode == 0, f"{tool} on {args}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}"
    assert summary and all(" 0 " in line for line in summary), summary


@pytest.mark.parametrize("key, tool, mnk", CASES)
def test_sanitizer_is_clean(key, tool, mnk):
    from tcgemm.engine.gpu.compile import current_arch
    if reason := GEMM_KERNELS[key.split("+")[0].split("@")[0]].unsupported(current_arch()):
        pytest.skip(reason)
    assert_clean(tool, "tcgemm.engine.gpu.ncu_target", key, *map(str, mnk))


# The WMMA kernels: every case (memory orders of A and B), blocks partly past the edge of D, beta != 0.
WMMA = [(k, case, tool) for k in WMMA_KERNELS for case in WMMA_CASES for tool in ("memcheck", "racecheck")]


@pytest.mark.parametrize("key, case, tool", WMMA)
def test_sanitizer_is_clean_on_wmma(key, case, tool):
    assert_clean(tool, "tcgemm.fragments.gpu.wmma", key, case, "80", "48", "64")


# tcgemm.matmul (Kernel 4.7) in every memory-order case: the planned tile, a small and a mid tile with K
# split, an operand view that is not 16-byte aligned (copied), alpha and beta with C.
MATMUL = [(case, tile, offset, "memcheck") for case in WMMA_CASES
          for tile, offset in (("planned", 0), ("16x64/3", 0), ("128x128/2", 3))] + \
         [(case, "planned", 0, "racecheck") for case in WMMA_CASES]


@pytest.mark.parametrize("case, tile, offset, tool", MATMUL)
def test_sanitizer_is_clean_on_matmul(case, tile, offset, tool):
    assert_clean(tool, "tcgemm.engine.gpu.matmul", case, "129", "257", "75", tile, str(offset))


@pytest.mark.parametrize("case", list(WMMA_CASES))
def test_sanitizer_is_clean_on_matmul_int8(case):
    """tcgemm.matmul on int8 views that are not aligned: the copy into Kernel D1's orders, K padded to 16
    bytes, Kernel D1's int8 build and the int32 pass of alpha and beta."""
    assert_clean("memcheck", "tcgemm.engine.gpu.matmul", case, "129", "257", "75", "planned", "3", "int8")


def test_sanitizer_is_clean_on_the_numerics_probes():
    """kernels/probe_rounding.cu: one mma per case, and one warp per tile over all of K (no shared memory)."""
    assert_clean("memcheck", "tcgemm.numerics.gpu.rounding")


# Kernel D1 in every input type this GPU has (tcgemm.numerics.gpu.data_types): its planned tile on a ragged shape (K not
# a multiple of 16 bytes for any type: operands staged), and a mid tile with K split three ways.
D1 = [(name, plan, tool) for name in ELEMENTS for plan, tools in (("", ("memcheck", "racecheck")),
                                                                 ("128x128/3", ("memcheck",))) for tool in tools]


@pytest.mark.parametrize("name, plan, tool", D1)
def test_sanitizer_is_clean_on_every_input_type(name, plan, tool):
    from tcgemm.numerics.gpu.data_types import skipped
    if reason := skipped(name):
        pytest.skip(reason)
    assert_clean(tool, "tcgemm.numerics.gpu.data_types", name, "129", "257", "203", *([plan] if plan else []))
