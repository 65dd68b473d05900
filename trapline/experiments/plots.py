"""The spec's [[plots]]: one figure per plot, DIR/NAME.png and DIR/NAME.svg, drawn with
matplotlib's Agg backend from the results rows.

The same rows give the same bytes, so verify can compare plots like any output: the SVG's ids
come from a fixed hash salt (svg.hashsalt) and neither file carries a date or the software's
name (metadata); the PNG's pixels depend only on the data and matplotlib's version (recorded in
the manifest's environment).
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from .metrics import HOST, is_host
from .spec import SpecError

FORMATS = ("png", "svg")


def check(spec, parameters: list[str], collected: list[str]) -> None:
    """Axes name parameters (x, series, panels) and a collected metric or a host column (y)."""
    for i, plot in enumerate(spec.data.get("plots", [])):
        for key in ("x", "series", "panels"):
            if key in plot and plot[key] not in parameters:
                raise SpecError(f"{spec.source}: plots[{i}].{key}: {plot[key]!r} is not a parameter "
                                f"(have: {', '.join(parameters) or 'none'})")
        if plot["y"] not in collected and plot["y"] not in HOST:
            raise SpecError(f"{spec.source}: plots[{i}].y: {plot['y']!r} is not a collected "
                            f"metric (metrics.collect; have: {', '.join(collected)})")


def outputs(spec) -> list[str]:
    return [f"{plot['name']}.{fmt}" for plot in spec.data.get("plots", []) for fmt in FORMATS]


def host_dependent(plot: dict) -> bool:
    return is_host(plot["y"])


def draw(spec, rows: list[dict], directory: Path) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    written = []
    with matplotlib.rc_context({"svg.hashsalt": "trapline", "svg.fonttype": "path",
                                "font.family": "DejaVu Sans"}):
        for plot in spec.data.get("plots", []):
            figure = _figure(plt, plot, rows, spec.name)
            for fmt in FORMATS:
                name = f"{plot['name']}.{fmt}"
                metadata = {"Date": None, "Creator": None} if fmt == "svg" else {"Software": None}
                figure.savefig(directory / name, format=fmt, metadata=metadata, dpi=100)
                written.append(name)
            plt.close(figure)
    return written


def _figure(plt, plot: dict, rows: list[dict], experiment: str):
    panels = _ordered(rows, plot.get("panels"))
    figure, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels) + 1, 3.6), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        chosen = [r for r in rows if plot.get("panels") is None or r.get(plot["panels"]) == panel]
        drawn = []
        for series in _ordered(chosen, plot.get("series")):
            lines = [r for r in chosen if plot.get("series") is None or r.get(plot["series"]) == series]
            xs, ys = _mean_by_x(lines, plot["x"], plot["y"])
            label = None if plot.get("series") is None else _shown(series)
            ax.plot(xs, ys, marker="o", label=label)
            drawn += ys
        if plot.get("logx"):
            ax.set_xscale("log")
        if plot.get("logy"):
            # a log axis where every value is positive; symlog (linear around 0) otherwise
            ax.set_yscale("log" if drawn and min(drawn) > 0 else "symlog")
        ax.set_xlabel(plot["x"])
        ax.set_ylabel(plot["y"])
        if plot.get("panels") is not None:
            ax.set_title(f"{plot['panels']} = {_shown(panel)}", fontsize=10)
        if plot.get("series") is not None:
            ax.legend(fontsize=7, title=plot["series"], title_fontsize=7)
        ax.grid(True, alpha=0.3)
    figure.suptitle(plot.get("title", f"{experiment}: {plot['y']} by {plot['x']}"), fontsize=11)
    figure.tight_layout()
    return figure


def _shown(value) -> str:
    """A parameter's value in a legend or title ("" is an option left out: native = "")."""
    return "(none)" if value == "" else str(value)


def _ordered(rows: list[dict], key: str | None) -> list:
    if key is None:
        return [None]
    return list(dict.fromkeys(r.get(key) for r in rows))


def _mean_by_x(rows: list[dict], x: str, y: str) -> tuple[list, list]:
    """The y values of the rows at each x (in row order), averaged when several rows share one."""
    by_x = defaultdict(list)
    for row in rows:
        value = row.get(y)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        by_x[row.get(x)].append(value)
    xs = list(by_x)
    return xs, [sum(by_x[v]) / len(by_x[v]) for v in xs]
