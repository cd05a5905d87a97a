"""What notebook 08's charts draw, recorded in its kernel as each figure is shown: a probe run
before the notebook's first cell (``tests/notebooks/support.py``) wraps ``plt.show`` so each
figure's drawn geometry (bars and legend boxes, in display pixels) is written to a record file.
Nothing of workbench or of the notebook is replaced: the figures are the notebook's own."""

from __future__ import annotations

from pathlib import Path

RECORD = r"""
import json as _json
import matplotlib.pyplot as _plt

_figures = []
_show = _plt.show


def _box(extent):
    return [float(extent.x0), float(extent.y0), float(extent.x1), float(extent.y1)]


def _label(container):
    # A bar chart labels its container; a histogram (matplotlib 3.11) its first patch only.
    label = str(container.get_label())
    if label.startswith("_") and len(container):
        label = str(container[0].get_label())
    return label


def _recording_show(*args, **kwargs):
    for number in _plt.get_fignums():
        figure = _plt.figure(number)
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()
        axes = []
        for ax in figure.axes:
            legend = ax.get_legend()
            groups = [
                {"label": _label(container),
                 "bars": [_box(bar.get_window_extent(renderer)) for bar in container]}
                for container in ax.containers
            ]
            axes.append({
                "title": ax.get_title(),
                "legend": None if legend is None else _box(legend.get_window_extent(renderer)),
                "groups": groups,
            })
        title = figure._suptitle.get_text() if figure._suptitle else ""
        _figures.append({"title": title or " / ".join(a["title"] for a in axes), "axes": axes})
    with open(_RECORD + ".partial", "w") as _out:
        _json.dump(_figures, _out)
    __import__("os").replace(_RECORD + ".partial", _RECORD)
    return _show(*args, **kwargs)


_plt.show = _recording_show
"""


def probe_source(record: Path) -> str:
    """The probe's code, writing every figure shown so far to ``record`` at each show."""
    return f"_RECORD = {str(record)!r}\n{RECORD}"
