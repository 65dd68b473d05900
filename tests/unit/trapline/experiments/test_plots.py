"""plots.py: logy draws a log axis where every value is positive (probe-cost's hits per second
span four decades), and symlog, linear around 0, where one is not."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from trapline.experiments.plots import _figure  # noqa: E402

PLOT = {"name": "p", "x": "n", "y": "rate", "series": "s", "logy": True}


def _scale(values) -> str:
    rows = [{"n": i, "s": "a", "rate": v} for i, v in enumerate(values)]
    figure = _figure(plt, PLOT, rows, "t")
    try:
        return figure.axes[0].get_yscale()
    finally:
        plt.close(figure)


def test_positive_values_get_a_log_axis_and_others_symlog():
    assert _scale([100.0, 10_000.0, 5.0]) == "log"
    assert _scale([0.0, 10.0]) == "symlog"
    assert _scale([-3.0, 10.0]) == "symlog"
