"""Hardware counters agree with the arithmetic: one mma.sync per 16x8x16 block of the problem."""
import pytest

from tcgemm.hw import mma_count

pytestmark = pytest.mark.gpu


def test_hmma_count_matches_the_problem():
    from tcgemm.engine.gpu.ncu import find_ncu, profile
    if find_ncu() is None:
        pytest.skip("Nsight Compute (ncu) is not installed")
    for key in ("k1.1", "h1"):
        counters = profile(key, 256, 512, 128)
        assert counters["hmma"] == mma_count(256, 512, 128), counters


def test_ldmatrix_count_matches_the_bank_model_prediction():
    """Kernel 2.0 at a small size: the LDSM instructions ncu counts are the ldmatrix requests
    tcgemm.smem.kernel_smem predicts for this GPU's architecture (on sm_90 ptxas drops the repeated ones)."""
    import math

    from tcgemm.engine.gpu.device import device_info
    from tcgemm.engine.gpu.ncu import METRICS, find_ncu, profile
    from tcgemm.smem.kernel_smem import predict

    if find_ncu() is None:
        pytest.skip("Nsight Compute (ncu) is not installed")
    arch = f"sm_{device_info().compute_capability}"
    try:
        predicted = predict("k2.0", 256, 256, 128, arch=arch).ldsm.requests
    except ValueError as exc:
        pytest.skip(f"no compiler model for {arch}: {exc}")
    names = ("smem_ldsm_inst", "smem_ldsm_inst_sass")
    # hmma, which every GPU here has, keeps the run alive if ncu knows neither ldsm counter
    counters = profile("k2.0", 256, 256, 128, metrics={n: METRICS[n] for n in ("hmma", *names)})
    measured = [counters[n] for n in names if not math.isnan(counters[n])]
    if not measured:
        pytest.skip(f"this GPU's ncu has neither {', '.join(METRICS[n] for n in names)}")
    assert all(m == predicted for m in measured), (arch, predicted, counters)


def test_the_chapters_readings_are_read_and_plausible():
    """Every reading of the pipelines and SGEMM profiles names a metric this GPU's ncu knows (none
    reads NaN) and lands in its range: percentages within 0-100, the clock within 0.5-3 GHz."""
    import math

    from tcgemm.engine.gpu.ncu import ISSUE, SM_CLOCK, TENSOR_PIPE, find_ncu, profile_table, read

    if find_ncu() is None:
        pytest.skip("Nsight Compute (ncu) is not installed")
    for key, readings in (("k4.5", TENSOR_PIPE), ("s2", ISSUE)):
        values = read(key, readings, 512, 512, 512)
        assert not [label for label, v in values.items() if math.isnan(v)], (key, values)
        assert all(0 <= v <= 100 for label, v in values.items() if "%" in label), values
        assert 0.5 < values[SM_CLOCK.label] < 3.0, values
    table = profile_table(["k1.1", "h1"], TENSOR_PIPE[:2], 256, 256, 256)
    assert [c.name for c in table.columns] == ["counter", "k1.1", "h1"] and len(table.rows) == 2


def test_launch_table_reports_what_the_launcher_asked_for():
    """Kernel 5.6's launch as Nsight Compute sees it: one block per SM in clusters of two (at most as
    many as there are tile pairs), 384 threads, and the dynamic shared memory the catalog computes."""
    from tcgemm.engine.catalog import configured
    from tcgemm.engine.gpu.compile import current_arch
    from tcgemm.engine.gpu.device import device_info
    from tcgemm.engine.gpu.ncu import find_ncu, launch_table

    if find_ncu() is None:
        pytest.skip("Nsight Compute (ncu) is not installed")
    if reason := configured("k5.6", "sm_90").unsupported(current_arch()):
        pytest.skip(reason)
    spec = configured("k5.6", current_arch())
    column = dict((row[0], row[1]) for row in launch_table(["k5.6"], 1024, 2048, 256).rows)
    assert column["kernel"] == spec.entry
    assert column["grid (blocks)"] == f"{spec.grid(1024, 2048, device_info().sm_count)[0]:,}"
    assert (column["cluster (blocks)"], column["threads per block"]) == ("2", "384")
    assert column["dynamic shared memory per block"] == f"{spec.smem_bytes / 1e3:.1f} KB"


def test_the_ceiling_probe_and_a_kernel_time_are_read():
    """The ceiling probe under ncu keeps the tensor pipe busy most of the time (it is the ceiling); a
    kernel's time under ncu is a positive number of microseconds; against_ceiling_text multiplies the two
    factors it prints."""
    import re

    from tcgemm.engine.gpu.ncu import (CEILING, KERNEL_TIME, SM_CLOCK, TENSOR_PIPE, against_ceiling_text, find_ncu,
                                       read)

    if find_ncu() is None:
        pytest.skip("Nsight Compute (ncu) is not installed")
    readings = (TENSOR_PIPE[0], SM_CLOCK, KERNEL_TIME)
    values = {key: read(key, readings, 1024, 1024, 1024) for key in (CEILING, "k3.1")}
    assert values[CEILING][TENSOR_PIPE[0].label] > 90, values
    assert 0.5 < values["k3.1"][SM_CLOCK.label] < 3 and 1 < values["k3.1"][KERNEL_TIME.label] < 10_000, values
    clock, busy, product = map(float, re.findall(r"[\d.]+(?= x| =|;)", against_ceiling_text(values, "k3.1"))[:3])
    assert abs(clock * busy - product) < 2e-3, (clock, busy, product)
