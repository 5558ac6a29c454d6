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


@pytest.mark.parametrize("name, sm_count, flop_per_clock", [
    ("NVIDIA H100 80GB HBM3", 132, 4096),      # 989.4 TFLOP/s = 132 x 4096 x 1830 MHz
    ("NVIDIA H200", 132, 4096),                # the same peak, SMs and clock
    ("NVIDIA A100-SXM4-80GB", 108, 2048),
    ("NVIDIA GeForce RTX 4090", 128, 512),     # fp32 accumulation: half the fp16-accumulate rate
    ("NVIDIA GeForce RTX 3090", 82, 512),
])
def test_published_peaks_are_whole_flop_per_clock(name, sm_count, flop_per_clock):
    per_clock = hw.tensor_flop_per_clock_per_sm(hw.peak_for(name), sm_count)
    assert per_clock == pytest.approx(flop_per_clock, rel=3e-3)


def test_no_clock_no_flop_per_clock():
    assert hw.tensor_flop_per_clock_per_sm(hw.peak_for("NVIDIA L4"), 58) is None
    with pytest.raises(ValueError, match="sm_count"):
        hw.tensor_flop_per_clock_per_sm(hw.peak_for("NVIDIA H100 80GB HBM3"), 0)


def test_flop_per_clock_per_sm_of_a_measured_rate():
    # the pipelines chapter: the H100's measured 639.0 TFLOP/s mma.sync ceiling at its 1980 MHz boost clock
    per_clock = hw.flop_per_clock_per_sm(639.0, 132, 1980)
    assert per_clock == pytest.approx(639e12 / (132 * 1.98e9)) and f"{per_clock / hw.MMA_FLOP:.2f}" == "0.60"
    assert hw.MMA_FLOP == 2 * 16 * 8 * 16
    with pytest.raises(ValueError, match="must be positive"):
        hw.flop_per_clock_per_sm(639.0, 132, 0)


def test_mma_cycles_text_counts_cycles_per_mma_per_tensor_core():
    # 4096³ needs 256 * 512 * 256 m16n8k16; on 132 SMs (528 Tensor Cores) that is 63,550 each. The
    # H100 SXM's datasheet 989.4 TFLOP/s at 1830 MHz is 4096 FLOP per clock per SM: 4 cycles per mma
    text = hw.mma_cycles_text("H100", 132, 1980, hw.peak_for("NVIDIA H100 80GB HBM3"),
                              {"fast": 63550.06 * 4 / 1.98e9, "slow": 63550.06 * 16 / 1.98e9})
    lines = text.splitlines()
    assert lines[0] == "H100: 63,550 mma per Tensor Core"
    assert lines[1] == "datasheet rate: 4096 FLOP per clock per SM, so one m16n8k16 takes 4.0 cycles"
    assert lines[2] == "below: median time x 1980 MHz, the driver's highest clock"
    assert [line.split() for line in lines[3:]] == [["fast", "4.0", "cycles", "per", "mma"],
                                                     ["slow", "16.0", "cycles", "per", "mma"]]
    # no stated clock (L4): no datasheet line
    assert "datasheet" not in hw.mma_cycles_text("L4", 58, 2040, hw.peak_for("NVIDIA L4"), {})

