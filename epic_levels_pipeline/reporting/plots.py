"""The report's plots: grouped bars with interval whiskers, drawn with matplotlib's Agg canvas on ``Figure``
objects (no pyplot, no global backend change), returned as PNG bytes."""

from __future__ import annotations

import io

import numpy as np

from .document import _missing


# -- plots ----------------------------------------------------------------------------------------------

def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return buf.getvalue()


def _bars(ax, groups: list[str], series: list[str], values: dict, title: str, ylabel: str, legend: bool = True) -> None:
    """Grouped bars on ``ax``: ``values[(group, series)] = (value, low, high)``; missing values are not drawn."""
    width = 0.8 / max(1, len(series))
    colors = [f"C{i % 10}" for i in range(len(series))]
    x = np.arange(len(groups))
    lows, highs = [0.0], [1.0]
    for j, name in enumerate(series):
        xs, heights, err_lo, err_hi = [], [], [], []
        for i, group in enumerate(groups):
            value, low, high = values.get((group, name), (np.nan, np.nan, np.nan))
            if _missing(value):
                continue
            xs.append(x[i] - 0.4 + width * (j + 0.5))
            heights.append(float(value))
            err_lo.append(max(0.0, float(value) - float(low)) if not _missing(low) else 0.0)
            err_hi.append(max(0.0, float(high) - float(value)) if not _missing(high) else 0.0)
            lows.append(float(value) - err_lo[-1])
            highs.append(float(value) + err_hi[-1])
        if xs:
            ax.bar(xs, heights, width=width * 0.95, color=colors[j], label=name,
                   yerr=np.array([err_lo, err_hi]), capsize=2, error_kw={"elinewidth": 0.8, "ecolor": "#333"})
    ax.axhline(0, color="#555", linewidth=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels(groups, rotation=0 if len(groups) < 7 else 30, ha="center" if len(groups) < 7 else "right")
    ax.set_ylim(min(-0.1, min(lows) - 0.05), max(1.05, max(highs) + 0.05))
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    if series and legend:
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)


def grouped_bars(groups: list[str], series: list[str], values: dict, title: str, ylabel: str) -> bytes:
    """PNG of grouped bars: ``values[(group, series)] = (value, low, high)``; missing values are not drawn."""
    fig = _figure(max(6.0, 1.1 * len(groups) * max(1, len(series)) * 0.45 + 2), 4.2)
    _bars(fig.add_subplot(1, 1, 1), groups, series, values, title, ylabel)
    return _png(fig)


def bar_panels(panels: list[tuple[str, dict]], groups: list[str], series: list[str], ylabel: str) -> bytes:
    """PNG of one grouped-bar panel per ``(title, values)`` side by side, sharing groups, series and a legend."""
    width = max(4.0, 0.35 * len(groups) * max(1, len(series)) + 1.5)
    fig = _figure(width * len(panels) + 2, 4.2)
    for i, (title, values) in enumerate(panels, 1):
        _bars(fig.add_subplot(1, len(panels), i), groups, series, values, title, ylabel if i == 1 else "",
              legend=i == len(panels))
    return _png(fig)
