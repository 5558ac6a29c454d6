"""Kernel 5.12's stream-K split without a GPU (tcgemm.engine.stream_k mirrors the kernel's schedule): every
K step of every tile runs once, a run's partial pieces take its two slots, a tile's pieces are found in the
order of K, and the split is taken only where a wave is partly empty and the model says it pays."""
import itertools

import pytest

from tcgemm.engine.stream_k import FIXUP_STEPS, SPLIT_GAIN, StreamK, split


def forced(tiles: int, k_tiles: int, clusters: int) -> StreamK:
    """The split the kernel would run were the fix-up free (every partial wave split)."""
    full, rest = divmod(tiles, clusters)
    if full == 0:
        return StreamK(tiles, k_tiles, clusters, tiles, min(clusters, max(tiles, tiles * k_tiles // 4)))
    return StreamK(tiles, k_tiles, clusters, rest + clusters if rest else 0, clusters if rest else 0)


CASES = [forced(t, k, c) for t, k, c in itertools.product((1, 2, 5, 16, 65, 66, 67, 144, 289), (1, 2, 3, 4, 16, 47),
                                                         (1, 7, 66))]


@pytest.mark.parametrize("sk", CASES, ids=lambda s: f"{s.tiles}t{s.k_tiles}k{s.clusters}c")
def test_every_step_of_every_tile_runs_once(sk):
    ran = [(p.tile, step) for q in range(sk.grid_clusters) for p in sk.pieces(q) for step in range(p.k0, p.k1)]
    assert sorted(ran) == [(t, s) for t in range(sk.tiles) for s in range(sk.k_tiles)]
    assert sk.grid_clusters <= sk.clusters
    assert max(sk.steps(q) for q in range(sk.grid_clusters)) == sk.longest_steps


@pytest.mark.parametrize("sk", [s for s in CASES if s.runs], ids=lambda s: f"{s.tiles}t{s.k_tiles}k{s.clusters}c")
def test_a_run_s_partial_pieces_take_its_two_slots_and_each_tile_finds_them_in_k_order(sk):
    partial = {}          # stream-K tile -> [(k0, run, first)]
    for q in range(sk.runs):
        slots = []
        for p in sk.pieces(q):
            if p.tile >= sk.dp_tiles and (p.k0 > 0 or p.k1 < sk.k_tiles):
                t = p.tile - sk.dp_tiles
                first = sk.run_start(q) == t * sk.k_tiles + p.k0
                slots.append(first)
                partial.setdefault(t, []).append((p.k0, q, first))
        assert len(slots) == len(set(slots)) <= 2, (q, slots)
    for t in range(sk.sk_tiles):      # a tile no run splits is one run's whole piece
        found = sk.pieces_of_tile(t)
        assert [(q, first) for _, q, first in sorted(partial[t])] == found if t in partial else len(found) == 1


def test_the_workspace_holds_two_slots_per_run_and_a_counter_per_tile_block_and_consumer():
    sk = split(144, 48, 66)                  # 3072³ in 128 x 256 tiles on 132 SMs
    assert (sk.sk_tiles, sk.runs, sk.dp_tiles) == (78, 66, 66)
    assert sk.partial_floats(256) == 66 * 2 * 2 * 2 * 64 * 256 and sk.counters == 78 * 4


def test_whole_waves_and_small_gains_run_whole_tiles():
    assert split(132, 64, 66).runs == 0                 # two whole waves
    assert split(256, 64, 66).runs == 0                 # 4096³: 58 of 66 clusters busy in the last wave
    assert split(64, 32, 66).runs == 0                  # 2048³: one wave, 64 of 66
    assert split(16, 16, 66).runs == 0                  # 1000³: 16 steps a tile, runs of 4 and the fix-up
    taken = split(16, 224, 66)                          # 256 x 4096 x 14336: 16 tiles of 224 steps
    assert (taken.sk_tiles, taken.runs, taken.longest_steps) == (16, 66, 55)
    assert taken.longest_steps + FIXUP_STEPS < SPLIT_GAIN * 224


def test_bad_counts_are_refused():
    for args in ((0, 4, 66), (4, 0, 66), (4, 4, 0)):
        with pytest.raises(ValueError, match="must be at least 1"):
            split(*args)


def test_the_figure_draws_both_schedules_of_the_toy_gpu():
    from tcgemm.hopper.split_waves import TOY, split_figure
    fig = split_figure()
    top, bottom = fig.axes

    def last_step(ax) -> float:
        return max(path.vertices[:, 0].max() for bars in ax.collections for path in bars.get_paths())
    assert (last_step(top), last_step(bottom)) == (2 * TOY.k_tiles, TOY.longest_steps)   # two waves; runs of 11
    labels = sorted(int(t.get_text()) for t in bottom.texts)
    assert set(labels) == set(range(TOY.tiles)) and len(labels) > TOY.tiles   # split tiles drawn in pieces


def test_the_mirror_has_the_kernel_s_formulas():
    """The formulas this module mirrors, as kernels/k5.12_stream_k.cu writes them: where run r starts, the
    first run with a piece of tile t, and which tiles are split (the last sk_tiles)."""
    from tcgemm import KERNEL_DIR
    text = (KERNEL_DIR / "k5.12_stream_k.cu").read_text()
    for line in ("return r * sk_steps / runs;",
                 "for (int r = static_cast<int>(((tk + 1) * runs - 1) / sk_steps); r < runs; ++r) {",
                 "const int dp_tiles = tiles - sk_tiles;",
                 "p = {q + u * clusters, 0, w.k_tiles};"):
        assert line in text, line
    sk = split(144, 48, 66)
    steps = sk.sk_tiles * sk.k_tiles
    for t in range(sk.sk_tiles):
        tk = t * sk.k_tiles
        first = ((tk + 1) * sk.runs - 1) // steps
        assert sk.run_start(first) <= tk < sk.run_start(first + 1) and sk.pieces_of_tile(t)[0][0] == first
