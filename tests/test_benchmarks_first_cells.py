"""The first-cards benchmark runs a real notebook in a real kernel until its first view and
reports that cell and its goal; its view test reads real outputs."""

from __future__ import annotations

import pytest

from benchmarks import first_cells

pytestmark = [pytest.mark.slow, pytest.mark.kernel]


def test_a_notebook_is_run_until_its_first_view_and_the_cell_is_named():
    (row,) = first_cells.run(["01-author-a-tool"])
    assert row["notebook"] == "01-author-a-tool" and row["goal_s"] == first_cells.GOAL_S
    assert isinstance(row["cell"], int) and row["cell"] > 0  # a markdown cell comes first
    assert row["first_card_s"] > 0 and row["before_s"] >= 0
    assert row["met"] in {"met", "MISSED"}


def test_a_view_is_a_live_widget_or_a_cards_html_and_nothing_else():
    live = {"data": {first_cells.VIEW: {"model_id": "m"}, "text/plain": "Call(add)"}}
    static = {"data": {"text/html": "<div class='wb-card'>…</div>"}}
    plain = {"data": {"text/plain": "3"}, "output_type": "execute_result"}
    stream = {"output_type": "stream", "text": "wb-card"}
    assert first_cells.shows_a_view([plain, live]) and first_cells.shows_a_view([static])
    assert not first_cells.shows_a_view([plain, stream])
