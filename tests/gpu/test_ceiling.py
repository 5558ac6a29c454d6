from dataclasses import replace

import pytest

from tcgemm.hw import peak_for


@pytest.mark.gpu
def test_mma_ceiling_is_exact_and_below_the_datasheet():
    from tcgemm.engine.gpu.ceiling import best_of, measure, run_once
    from tcgemm.engine.gpu.device import device_info

    one, got = run_once(8, rounds=64, seed=5)
    assert one.exact, got[0]
    best = measure(warps_per_sm=(4, 16), rounds=256)
    assert best.exact and best.tflops > 0
    with pytest.raises(RuntimeError, match="wrong result"):
        best_of([best, replace(one, exact=False)])
    peak = peak_for(device_info().name)
    if peak:
        assert best.tflops < 1.05 * peak.tflops
