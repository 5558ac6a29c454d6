"""Every mma variant on the GPU: its probe matches the layouts, its ceiling is exact and below the
datasheet; a variant the GPU lacks (fp8 before sm_89) is refused in one line and skipped."""
import json

import pytest

from tcgemm.fragment_layouts import MMA_VARIANTS, unsupported

pytestmark = pytest.mark.gpu


def _skip_if_lacking(variant):
    from tcgemm.engine.gpu.compile import current_arch
    if reason := unsupported(variant, current_arch()):
        pytest.skip(reason)


@pytest.mark.parametrize("variant", list(MMA_VARIANTS))
def test_ceiling_of_every_variant_is_exact_and_below_the_datasheet(variant):
    from tcgemm.engine.gpu.ceiling import run_once
    from tcgemm.engine.gpu.device import device_info
    from tcgemm.hw import peak_for
    _skip_if_lacking(variant)
    ceiling, got = run_once(8, 64, seed=3, variant=variant)
    assert ceiling.exact, got[0]
    peak = peak_for(device_info().name)
    rate = peak and peak.rate(*MMA_VARIANTS[variant][1:])
    if rate:
        assert ceiling.tflops < 1.05 * rate, str(ceiling)


def test_the_observation_matches_the_layouts_and_is_written(tmp_path):
    from tcgemm.engine.gpu.probes import mma_observation, observation_verdicts, report
    from tcgemm.engine.gpu.compile import current_arch
    observation = mma_observation()
    lacking = [v for v in MMA_VARIANTS if unsupported(v, current_arch())]
    assert sorted(observation["variants"]) == sorted(set(MMA_VARIANTS) - set(lacking))
    assert len(observation["skipped"]) == len(lacking)
    table = observation_verdicts(observation)
    assert all(cell == "MATCH" for row in table.rows for cell in row[1:]), str(table)
    report(tmp_path)
    written = json.loads(next(tmp_path.glob("mma_fragments_*.json")).read_text())
    assert written["variants"].keys() == observation["variants"].keys()


def test_variants_table_has_a_row_per_executed_variant():
    from tcgemm.engine.gpu.ceiling import variants_table
    from tcgemm.engine.gpu.compile import current_arch
    table = variants_table(["m16n8k16.f32", "m16n8k32.e4m3.f32"])
    executed = [v for v in ("m16n8k16.f32", "m16n8k32.e4m3.f32") if not unsupported(v, current_arch())]
    assert [row[0] for row in table.rows] == executed
    assert len(table.notes) == 2 - len(executed)
