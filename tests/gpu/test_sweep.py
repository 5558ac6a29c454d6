"""tcgemm.engine.gpu.sweep on the GPU, small: a row of the sweep (checked, then its GPU time, cuBLAS's and the
whole call's) on six of tcgemm.matmul's paths, and the host-time table."""
import pytest

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("shape, types, sm_90_kernel", [
    ((256, 4096, 256), ("float16", "float16"), "k5.11/64"),
    ((256, 256, 256), ("float16", "float16"), "k5.14/64/1x2"),  # a small problem in clusters of 1 x 2
    ((64, 4096, 512), ("float16", "float16"), "k5.15/32/1x2"),   # a short M in 64-row tiles
    ((128, 4096, 256), ("bfloat16", "bfloat16"), "k5.15/64/2x1"),
    ((64, 12800, 64), ("float16", "float32"), "k5.13/64"),      # the product turned round
    ((64, 256, 512), ("bfloat16", "bfloat16"), "k4.7"),         # Kernel 4.7 or D1, then the rounding pass
])
def test_a_row_is_checked_then_timed(shape, types, sm_90_kernel):
    from tcgemm.engine.gpu.compile import current_arch
    from tcgemm.engine.gpu.sweep import sweep_row
    row = sweep_row(*shape, *types, reps=5)
    assert row.check == "PASS", row
    assert row.gpu_us > 0 and row.cublas_us > 0 and row.call_us > 0, row
    if types[1] == "float32":
        assert row.library_call_us is None, row         # no library's A @ B gives fp32 from 16-bit inputs
    if current_arch() == "sm_90" and sm_90_kernel != "k4.7":
        assert row.kernel == sm_90_kernel, row


def test_the_host_table_times_each_path_beside_the_library():
    from tcgemm.engine.gpu.sweep import host_times
    table = host_times(shapes=((64, 256, 256),))
    records = table.records()
    assert records and all(r["tcgemm µs"] > 0 and r["library µs"] > 0 for r in records), table
    assert records[0]["Library"] == "cupy.matmul"
