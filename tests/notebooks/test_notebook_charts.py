"""Notebook 08's charts can be read: no legend lies on a bar, and every tool a chart names has
bars a person can see.

The figures are those of the run's one execution of notebook 08 (the ``executed`` fixture): a
probe run in its kernel before the first cell (``charts_probe.py``) wrote down each figure's drawn
geometry (bars and legend boxes, in display pixels) as it was shown.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.notebooks.support import Runs, probe_record

NOTEBOOK = "08-a-study.ipynb"


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


@pytest.fixture
def figures(executed: Runs) -> list[dict[str, Any]]:
    executed(NOTEBOOK)
    found: list[dict[str, Any]] = json.loads(probe_record(NOTEBOOK).read_text())
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
