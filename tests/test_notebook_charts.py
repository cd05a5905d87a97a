"""Notebook 08's charts can be read: no legend lies on a bar, and every tool a chart names has
bars a person can see.

The notebook runs in a real kernel; a first cell added to the run wraps ``plt.show`` so each
figure's drawn geometry (bars and legend boxes, in display pixels) is written down as it is
shown. Nothing of workbench is replaced: the figures are the notebook's own.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).parent.parent / "notebooks" / "08-a-study.ipynb"

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
    return _show(*args, **kwargs)


_plt.show = _recording_show
"""

DUMP = "with open('figures.json', 'w') as _out:\n    _json.dump(_figures, _out)\n"


def overlap(a: list[float], b: list[float]) -> float:
    """The area two boxes share, in square pixels."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return max(0.0, width) * max(0.0, height)


def seen_points(bar: list[float], others: list[list[float]]) -> int:
    """How many of 25 points spread over ``bar`` no bar of ``others`` covers."""
    x0, y0, x1, y1 = bar
    points = [
        (x0 + (x1 - x0) * (i + 0.5) / 5, y0 + (y1 - y0) * (j + 0.5) / 5)
        for i in range(5)
        for j in range(5)
    ]
    return sum(not any(o[0] <= x <= o[2] and o[1] <= y <= o[3] for o in others) for x, y in points)


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    workdir = tmp_path_factory.mktemp("charts")
    copy = workdir / NOTEBOOK.name
    shutil.copy(NOTEBOOK, copy)
    notebook = nbformat.read(copy, as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(RECORD))
    notebook.cells.append(nbformat.v4.new_code_cell(DUMP))
    NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}
    ).execute()
    found: list[dict[str, Any]] = json.loads((workdir / "figures.json").read_text())
    return found


@pytest.mark.kernel
def test_no_legend_lies_on_a_bar(figures: list[dict[str, Any]]) -> None:
    with_legends = [ax for figure in figures for ax in figure["axes"] if ax["legend"]]
    assert with_legends, "no chart has a legend: this check would prove nothing"
    covered = [
        (ax["title"], group["label"])
        for ax in with_legends
        for group in ax["groups"]
        for bar in group["bars"]
        if overlap(bar, ax["legend"]) > 1
    ]
    assert covered == []


@pytest.mark.kernel
def test_every_tool_in_the_receipt_size_chart_has_bars_one_can_see(
    figures: list[dict[str, Any]],
) -> None:
    (chart,) = [figure for figure in figures if "Receipt sizes by tool" in figure["title"]]
    groups = [
        (ax_index, group)
        for ax_index, ax in enumerate(chart["axes"])
        for group in ax["groups"]
        if not group["label"].startswith("_")
    ]
    tools = {group["label"] for _, group in groups}
    assert len(tools) >= 4
    hidden = []
    for ax_index, group in groups:
        others = [
            bar
            for index, other in groups
            if index == ax_index and other is not group
            for bar in other["bars"]
        ]
        visible = [
            bar
            for bar in group["bars"]
            if bar[2] - bar[0] >= 2 and bar[3] - bar[1] >= 2 and seen_points(bar, others) >= 5
        ]
        if not visible:
            hidden.append(group["label"])
    assert hidden == []
