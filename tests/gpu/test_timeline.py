"""The tile timeline on the GPU: a traced launch has every block's stamps, one set per tile the persistent
schedule gives it; tracing leaves C right; without stores, or with half of them, the epilogue is shorter."""
import numpy as np
import pytest

from tcgemm.engine.catalog import GEMM_KERNELS
from tcgemm.hopper.timeline import tiles_per_block

pytestmark = pytest.mark.gpu


@pytest.fixture
def hopper():
    from tcgemm.engine.gpu.compile import current_arch
    if reason := GEMM_KERNELS["k5.6"].unsupported(current_arch()):
        pytest.skip(reason)


@pytest.mark.parametrize("key", ["k5.6", "k5.7"])
def test_every_block_stamps_the_tiles_of_its_schedule(hopper, key):
    from tcgemm.hopper.gpu.timeline import trace
    M, N, K = 2048 + 77, 3072 - 5, 1000
    t = trace(key, M, N, K)
    pairs = -(-M // 256) * -(-N // 256)
    assert list(t.counts) == list(tiles_per_block(pairs, len(t.counts)))
    for p in t.phases():
        assert np.all(p.main > 0) and np.all(p.store > 0) and np.all(p.wait >= 0)
    assert 0 < t.span_us < 10_000


def test_ping_pong_consumer_0_stamps_every_other_tile(hopper):
    from tcgemm.hopper.gpu.timeline import trace
    t = trace("k5.8", 4096, 4096, 256)             # 32 x 32 tiles of 128 x 128: 512 tile pairs
    clusters = len(t.counts) // 2                  # consumer 0 of cluster c: pairs c, c + 2 clusters, ...
    expected = [len(range(b // 2, 512, 2 * clusters)) for b in range(len(t.counts))]
    assert list(t.counts) == expected


@pytest.mark.parametrize("switches", [("TRACE",), ("TRACE", "HALF_STORE")])
def test_tracing_leaves_c_right_and_half_store_leaves_even_clusters_unwritten(hopper, switches):
    from tcgemm.engine.gpu.bench import check_runner, random_operands, runner
    from tcgemm.engine.gpu.gemm import for_this_gpu, kernel_spec, prepare
    spec = for_this_gpu(kernel_spec("k5.6")).with_switches(*switches)
    if "HALF_STORE" not in switches:
        assert check_runner(runner("k5.6", spec), 777, 1001, 520).passed
        return
    run = prepare(spec, *random_operands(512, 512, 128))    # 4 tile pairs, one per cluster 0 to 3: the
    run()                                                   # even clusters' are rows 0-255 (GROUP_M order)
    c = run.C.get()
    assert np.isnan(c[:256]).all() and not np.isnan(c[256:]).any()


def test_the_store_shows_in_the_epilogue(hopper):
    from tcgemm.hopper.gpu.timeline import trace
    from tcgemm.hopper.timeline import compare_table
    runs = [trace("k5.6", 4096, 4096, 2048), trace("k5.6", 4096, 4096, 2048, switches=("SKIP_STORE",)),
            trace("k5.6", 4096, 4096, 2048, switches=("HALF_STORE",))]
    stores = [np.median(t.store_us()) if t.stores.any() else None for t in runs]
    assert stores[1] is None and runs[2].stores.sum() == len(runs[2].counts) // 2
    skipped = np.median(np.concatenate([p.store for p in runs[1].phases()]))
    assert skipped < stores[0] / 4, (skipped, stores)
    assert compare_table(runs).rows[0][4] == pytest.approx(stores[0])


def test_what_the_trace_cannot_hold_or_a_kernel_without_it_is_refused_by_name(hopper):
    from tcgemm.hopper.gpu.timeline import trace
    with pytest.raises(ValueError, match="up to 63 tiles; the trace holds 1024 blocks of 20 tiles"):
        trace("k5.6", 16384, 16384, 64)
    with pytest.raises(ValueError, match="Kernel 5.5.*has no TRACE switch"):
        trace("k5.5", 256, 256, 64)
