"""tcgemm.hopper.gpu.c_types on the GPU, small: the check table of Kernel 5.9's pairs of types, and its
rounds table with each pair against the cuBLAS of its types (what the Hopper chapter's cells call)."""
import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def c_types():
    from tcgemm.engine.catalog import GEMM_KERNELS
    from tcgemm.engine.gpu.compile import current_arch
    if reason := GEMM_KERNELS["k5.9"].unsupported(current_arch()):
        pytest.skip(reason)
    from tcgemm.hopper.gpu import c_types
    return c_types


def test_every_pair_and_order_has_its_verdict(c_types):
    table = c_types.check_c_types(shapes=((129, 257, 75),), offsets=(0,))
    assert len(table.rows) == 4 * 4
    assert all(v.startswith("PASS") for v in table.column("offset 0")), table


def test_each_pair_is_timed_against_the_cublas_of_its_types(c_types):
    table = c_types.c_type_rounds(512, rounds=2, reps=5)
    rows = table.records()
    assert [(r["Kernel"], r["A, B -> C"]) for r in rows] == [
        ("Kernel 5.7", "fp16 -> fp32"), ("Kernel 5.9", "fp16 -> fp32"), ("Kernel 5.9", "fp16 -> fp16"),
        ("Kernel 5.9", "bf16 -> bf16")]
    assert all(r["lowest"] - 0.05 <= r["% of cuBLAS"] <= r["highest"] + 0.05 for r in rows), table
    assert "cuBLAS (cublasGemmEx, fp16 C)" in str(table) and "bf16 in, bf16 C" in str(table)


def test_a_width_of_kernel_5_11_is_timed_and_named_beside_the_others(c_types):
    table = c_types.c_type_rounds(512, rounds=2, reps=5, runs=c_types.SPLIT_ROUNDS)
    assert [r["Kernel"] for r in table.records()] == ["Kernel 5.9", "Kernel 5.11, 192 wide", "Kernel 5.12"], table
