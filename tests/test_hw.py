import pytest

from tcgemm import hw


@pytest.mark.parametrize("name, tflops", [
    ("NVIDIA GeForce RTX 4090", 165.2),
    ("NVIDIA GeForce RTX 3090", 71.0),
    ("NVIDIA A100-SXM4-80GB", 312.0),
    ("NVIDIA A100 80GB PCIe", 312.0),
    ("NVIDIA A10", 125.0),
    ("NVIDIA L4", 121.0),
    ("NVIDIA H100 80GB HBM3", 989.4),
    ("NVIDIA H100 PCIe", 756.5),
    ("NVIDIA H200", 989.4),
])
def test_peak_lookup(name, tflops):
    assert hw.peak_for(name).tflops == tflops


def test_unknown_gpu_has_no_peak():
    assert hw.peak_for("NVIDIA GeForce GTX 1080") is None


def test_every_peak_names_its_source():
    assert all(p.source and p.tflops > 0 for p in hw.known_peaks())


def test_seed_numbers_for_4096_cubed():
    # 2 * 4096^3 = 137.4 GFLOP; at 165.2 TFLOP/s that takes ~832 us.
    assert hw.gemm_flops(4096, 4096, 4096) == 137_438_953_472
    assert hw.lower_bound_seconds(4096, 4096, 4096, 165.2) == pytest.approx(832e-6, rel=1e-3)
    assert hw.mma_count(4096, 4096, 4096) == 33_554_432


def test_tflops_inverts_the_bound():
    t = hw.lower_bound_seconds(1024, 2048, 512, 312.0)
    assert hw.tflops(1024, 2048, 512, t) == pytest.approx(312.0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="positive"):
        hw.tflops(16, 16, 16, 0.0)
    with pytest.raises(ValueError, match="peak_tflops"):
        hw.lower_bound_seconds(16, 16, 16, -1)
    with pytest.raises(ValueError, match="K=20"):
        hw.mma_count(16, 8, 20)
