"""The timeline picture of tcgemm.pipelines.draw_pipeline: cut into panels that fit the text column."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from tcgemm.pipelines import draw_pipeline, pipeline  # noqa: E402
from tcgemm.style import COLUMN_WIDTH_IN  # noqa: E402


@pytest.mark.parametrize("per_window", [4.0, 7.5, 9.0, 30.0])
def test_time_windows_cover_the_timeline_and_cut_only_where_an_mma_ends(per_window):
    intervals = pipeline.timeline(2, 8, 3.0, 1.0)
    windows = draw_pipeline.time_windows(intervals, per_window)
    total = max(iv.end for iv in intervals)
    assert windows[0][0] == 0 and windows[-1][1] == total
    assert all(a[1] == b[0] for a, b in zip(windows, windows[1:]))
    assert all(end - start <= per_window for start, end in windows)
    assert len(windows) >= -(-total // per_window)
    mma_ends = {iv.end for iv in intervals if iv.kind == "compute"}
    assert {end for _, end in windows[:-1]} <= mma_ends


def test_a_long_timeline_is_drawn_in_panels_of_one_time_scale_within_the_column():
    fig = draw_pipeline.timeline_figure(2, 8, 3.0, 1.0)
    assert fig.get_size_inches()[0] <= COLUMN_WIDTH_IN
    axes = fig.axes
    assert len(axes) == 3
    spans = {round(ax.get_xlim()[1] - ax.get_xlim()[0], 9) for ax in axes}
    assert len(spans) == 1
    assert axes[0].get_xlim()[0] == 0 and axes[-1].get_xlim()[0] + spans.pop() >= 25
    assert axes[-1].get_xlabel().startswith("time") and not axes[0].get_xlabel()


def test_a_short_timeline_stays_one_panel():
    assert len(draw_pipeline.timeline_figure(4, 8, 3.0, 1.0).axes) == 1
