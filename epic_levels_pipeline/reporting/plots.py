"""The report's plots: grouped bars with interval whiskers, drawn with matplotlib's Agg canvas (no pyplot, no global
backend change) as PNG bytes, sized to be read at 100 % in the report's column (no text under
:data:`MIN_FONT_PT`; bars of few items faded and hatched)."""

from __future__ import annotations

import io

import numpy as np

from .document import FEW, _missing

DPI = 100
MAX_WIDTH_IN = 11.0  # the figure, legend included, fits the report's 1,200 px column at DPI
MIN_FONT_PT = 11     # tick labels and legend; titles and axis labels are larger


# -- plots ----------------------------------------------------------------------------------------------

def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(min(width, MAX_WIDTH_IN), height), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    return buf.getvalue()


def _bars(ax, groups: list[str], series: list[str], values: dict, title: str, ylabel: str, legend: bool = True) -> None:
    """Grouped bars on ``ax``: ``values[(group, series)] = (value, low, high[, n])``; missing values are not drawn,
    bars of fewer than :data:`FEW` items are faded and hatched."""
    width = 0.8 / max(1, len(series))
    colors = [f"C{i % 10}" for i in range(len(series))]
    x = np.arange(len(groups))
    lows, highs = [0.0], [1.0]
    for j, name in enumerate(series):
        xs, heights, err_lo, err_hi, few = [], [], [], [], []
        for i, group in enumerate(groups):
            value, low, high, *n = values.get((group, name), (np.nan, np.nan, np.nan))
            if _missing(value):
                continue
            xs.append(x[i] - 0.4 + width * (j + 0.5))
            heights.append(float(value))
            err_lo.append(max(0.0, float(value) - float(low)) if not _missing(low) else 0.0)
            err_hi.append(max(0.0, float(high) - float(value)) if not _missing(high) else 0.0)
            few.append(bool(n) and not _missing(n[0]) and int(n[0]) < FEW)
            lows.append(float(value) - err_lo[-1])
            highs.append(float(value) + err_hi[-1])
        if xs:
            bars = ax.bar(xs, heights, width=width * 0.95, color=colors[j], label=name,
                          yerr=np.array([err_lo, err_hi]), capsize=2, error_kw={"elinewidth": 0.8, "ecolor": "#333"})
            for bar, faded in zip(bars, few):
                if faded:
                    bar.set_alpha(0.3)
                    bar.set_hatch("//")
    ax.axhline(0, color="#555", linewidth=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels(groups, rotation=0 if len(groups) < 5 else 30, ha="center" if len(groups) < 5 else "right")
    ax.tick_params(labelsize=MIN_FONT_PT)
    ax.set_ylim(min(-0.1, min(lows) - 0.05), max(1.05, max(highs) + 0.05))
    ax.set_ylabel(ylabel, fontsize=MIN_FONT_PT + 1)
    ax.set_title(title, fontsize=MIN_FONT_PT + 2)
    ax.grid(axis="y", alpha=0.3)
    if series and legend:
        ax.legend(fontsize=MIN_FONT_PT, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def grouped_bars(groups: list[str], series: list[str], values: dict, title: str, ylabel: str) -> bytes:
    """PNG of grouped bars: ``values[(group, series)] = (value, low, high[, n])``; missing values are not drawn."""
    fig = _figure(8.5, 4.6)
    _bars(fig.add_subplot(1, 1, 1), groups, series, values, title, ylabel)
    fig.subplots_adjust(right=0.78)
    return _png(fig)


def bar_panels(panels: list[tuple[str, dict]], groups: list[str], series: list[str], ylabel: str) -> bytes:
    """PNG of one grouped-bar panel per ``(title, values)``, two to a row, sharing groups, series and a legend."""
    per_row = min(2, max(1, len(panels)))
    rows = -(-len(panels) // per_row)
    fig = _figure(MAX_WIDTH_IN, 4.0 * rows)
    legend: dict = {}
    for i, (title, values) in enumerate(panels, 1):
        ax = fig.add_subplot(rows, per_row, i)
        _bars(ax, groups, series, values, title, ylabel if (i - 1) % per_row == 0 else "", legend=False)
        legend.update({label: handle for handle, label in zip(*ax.get_legend_handles_labels())})
    if legend:  # one legend for every panel: a series may have bars in some panels only
        ordered = [name for name in series if name in legend]
        fig.legend([legend[name] for name in ordered], ordered, loc="upper left", bbox_to_anchor=(0.81, 0.98),
                   fontsize=MIN_FONT_PT, frameon=False)
    fig.subplots_adjust(right=0.8, hspace=0.45, wspace=0.25)
    return _png(fig)
