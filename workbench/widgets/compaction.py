"""The compaction view: a budget slider over a history, and what each receipt shrinks to.

Every move of the slider runs ``compact`` (``workbench.families``) on the same records and
shows its result: the totals (before, after, budget, over budget, the steps by rule), one row per
call with its size before and after and the rules applied to it, and the selected call's
receipt before and after, side by side, with cut markers and artifact references marked. The
view computes nothing itself; every number is the Compaction's.
"""

from __future__ import annotations

import time
from collections import Counter as Tally
from collections.abc import Iterable
from typing import Any

import anywidget
import ipywidgets as widgets
import traitlets

from workbench.envelope import Envelope
from workbench.families import Compaction, compact
from workbench.history import History
from workbench.registry import Registry
from workbench.runtime import Call
from workbench.widgets._html import esc
from workbench.widgets._kernel_controls import kernel_controls_html
from workbench.widgets._panes import Counter, Pane, PaneKey, highlight, mark_patterns
from workbench.widgets._static import (
    cell_text,
    rows_table_html,
    style_tag,
    stylesheet,
    view_module,
)
from workbench.widgets._view import LiveView

Source = History | Registry | Iterable[Call | Envelope]
COLUMNS = ("#", "tool", "family", "status", "before", "after", "rules", "receipt after")
PREVIEW_CHARS = 120
MAX_ROWS = 500
# Above this many seconds per compaction the slider reports its value on release only, so a
# drag never queues more work than the kernel can do.
LIVE_UPDATE_S = 0.1


class CompactionBoard(anywidget.AnyWidget):
    """Totals, one row per call and the selected call's receipts; clicking a row selects it."""

    _esm = view_module("compaction.js")
    # The before/after panes are the inspector's: its stylesheet comes along.
    _css = stylesheet("inspector.css") + stylesheet("table.css") + stylesheet("compaction.css")

    totals = traitlets.Dict(help="before, after, budget, unit, over_budget, summary").tag(sync=True)
    columns = traitlets.List(traitlets.Unicode(), help="column headings").tag(sync=True)
    rows = traitlets.List(traitlets.Dict(), help="{index, changed, recent, cells}").tag(sync=True)
    selected = traitlets.Int(-1, help="index of the call shown in detail, -1 for none").tag(
        sync=True
    )
    detail = traitlets.Dict(help="the selected call: title and before/after panes").tag(sync=True)


def _records(source: Source) -> list[Call | Envelope]:
    if isinstance(source, Registry):
        return list(source.history.envelopes())
    if isinstance(source, History):
        return list(source.envelopes())
    return list(source)


def _first_line(text: str) -> str:
    line = next((part for part in text.splitlines() if part.strip()), "")
    return cell_text(line, PREVIEW_CHARS)


class CompactionView(LiveView, widgets.VBox):  # type: ignore[misc]
    """A budget slider over a history (``wb-compaction``): before/after receipts per call and
    the totals, recomputed by ``compact`` as the slider moves.

    ``source`` is what ``compact`` takes (a History, Calls or Envelopes) or a Registry (its
    history); a History is read once, and again on Refresh. ``budget`` starts the slider
    (default: the history's full size, so nothing is cut until it moves); ``count`` measures a
    receipt (``len``, or a tokenizer function to budget in tokens).
    """

    shared_stylesheet = False  # its static HTML starts with its own stylesheets

    def __init__(
        self,
        source: Source,
        *,
        budget: int | None = None,
        keep_recent: int = 2,
        count: Counter = len,
        max_rows: int = MAX_ROWS,
    ) -> None:
        self.source = source
        self.count = count
        self.max_rows = max_rows
        self.unit = "chars" if count is len else "tokens"
        self._records = _records(source)
        full = compact(self._records, 0, keep_recent=len(self._records), count=count)
        self.slider = widgets.IntSlider(
            description=f"budget ({self.unit})",
            min=0,
            max=full.before_chars,
            value=full.before_chars if budget is None else min(budget, full.before_chars),
            style={"description_width": "initial"},
            layout=widgets.Layout(width="32em"),
        )
        self.keep = widgets.BoundedIntText(
            description="keep recent",
            min=0,
            max=max(len(self._records), keep_recent),
            value=keep_recent,
            style={"description_width": "initial"},
            layout=widgets.Layout(width="10em"),
        )
        self.refresh_button = widgets.Button(description="Refresh", icon="refresh")
        self.refresh_button.on_click(lambda _: self.refresh())
        self.refresh_button.layout.display = (
            None if isinstance(source, History | Registry) else "none"
        )
        self.board = CompactionBoard(columns=list(COLUMNS))
        self.compaction: Compaction = full
        controls = widgets.HBox([self.slider, self.keep, self.refresh_button])
        super().__init__([controls, self.board])
        self.add_class("wb-compaction")
        self.slider.add_class("wb-compaction-budget")
        for control in (self.slider, self.keep):
            control.observe(lambda _: self.update(), names="value")
        self.board.observe(lambda _: self._selected(), names="selected")
        self.update()

    @property
    def budget(self) -> int:
        """The budget the slider is at."""
        return int(self.slider.value)

    def refresh(self) -> None:
        """Read the history again (a History or Registry source) and recompute."""
        self._records = _records(self.source)
        total = compact(self._records, 0, keep_recent=len(self._records), count=self.count)
        with self.hold_sync():
            self.keep.max = max(len(self._records), self.keep.value)
            self.slider.max = total.before_chars
        self.update()

    def update(self) -> None:
        """Compact at the current budget and keep_recent, and show the result."""
        started = time.perf_counter()
        self.compaction = compact(
            self._records, self.budget, keep_recent=int(self.keep.value), count=self.count
        )
        self.slider.continuous_update = time.perf_counter() - started < LIVE_UPDATE_S
        frame = self.compaction.to_dataframe()
        with self.board.hold_sync():
            self.board.totals = self._totals()
            records = frame.tail(self.max_rows).to_dict("records")
            self.board.rows = [self._row({str(k): v for k, v in r.items()}) for r in records]
            if not 0 <= self.board.selected < len(frame):
                self.board.selected = 0 if len(frame) else -1
            self._show_detail()
        self._republish()

    def _totals(self) -> dict[str, Any]:
        result = self.compaction
        saved: Tally[str] = Tally()
        applied: Tally[str] = Tally()
        for step in result.steps:
            applied[step.rule] += 1
            saved[step.rule] += step.before_chars - step.after_chars
        return {
            "items": len(result),
            "before": result.before_chars,
            "after": result.after_chars,
            "budget": result.budget,
            "unit": self.unit,
            "over_budget": result.over_budget,
            "summary": result.summary(),
            "rules": [[rule, applied[rule], saved[rule]] for rule in applied],
        }

    def _row(self, record: dict[str, Any]) -> dict[str, Any]:
        family = record["family"]
        if record["family_after"] != family:
            family = f"{family} → {record['family_after']}"
        cells = [
            str(record["index"]),
            cell_text(record["tool"]),
            family,
            cell_text(record["status"]),
            f"{record['before_chars']:,}",
            f"{record['after_chars']:,}",
            "kept (recent)" if record["recent"] else ", ".join(record["rules"]),
            _first_line(record["receipt_after"]),
        ]
        changed = record["receipt_after"] != record["receipt_before"]
        return {
            "index": int(record["index"]),
            "changed": changed,
            "recent": record["recent"],
            "cells": cells,
        }

    def _pane(self, key: PaneKey, envelope: Envelope, text: str) -> Pane:
        return Pane(
            key=key,
            title=key.capitalize(),
            text=text,
            chars=len(text),
            tokens=None if self.count is len else int(self.count(text)),
            segments=highlight(text, mark_patterns(envelope, as_json=False)),
        )

    def _panes(self, index: int) -> tuple[Pane, Pane]:
        result = self.compaction
        before = self._pane("before", result.before_envelopes[index], result.before_receipts[index])
        after = self._pane("after", result.envelopes[index], result.receipts[index])
        return before, after

    def _selected(self) -> None:
        """A row was picked: show its receipts, and save the view showing them."""
        self._show_detail()
        self._republish()

    def _show_detail(self) -> None:
        index = self.board.selected
        if not 0 <= index < len(self.compaction):
            self.board.detail = {}
            return
        envelope = self.compaction.before_envelopes[index]
        rules = [step.rule for step in self.compaction.steps if step.index == index]
        self.board.detail = {
            "index": index,
            "title": f"#{index} {envelope.tool_name} {envelope.call_id or ''}".strip(),
            "rules": rules,
            "panes": [pane.to_json() for pane in self._panes(index)],
        }

    def static_html(self) -> str:
        """The static, escaped HTML form: totals, the per-call table and the selected call."""
        totals = self.board.totals
        selected = self.board.selected
        table = rows_table_html(
            COLUMNS,
            self.board.rows,
            css_class="wb-compaction-table",
            row_class=lambda row: " ".join(
                name
                for name, flag in (
                    ("wb-compaction-row", True),
                    ("wb-changed", row["changed"]),
                    ("wb-recent", row["recent"]),
                    ("wb-selected", row["index"] == selected),
                )
                if flag
            ),
        )
        detail = ""
        if self.board.detail:
            panes = "".join(pane.to_html() for pane in self._panes(self.board.selected))
            detail = (
                f"<div class='wb-compaction-detail'><b>{esc(self.board.detail['title'])}</b>"
                f"<div class='wb-inspector-panes wb-compaction-panes'>{panes}</div></div>"
            )
        return (
            f"{style_tag('table.css')}{style_tag('compaction.css')}{style_tag('inspector.css')}"
            f"<div class='wb-compaction wb-static'>{totals_html(totals)}"
            f"{kernel_controls_html('Change the budget')}{table}{detail}</div>"
        )


def totals_html(totals: dict[str, Any]) -> str:
    """The totals as the live board draws them (``compaction.js``): the line with its badge,
    the bar of what is left against the budget, and a chip per rule applied."""
    if not totals or totals.get("items") is None:
        return "<div class='wb-compaction-totals'></div>"
    before, after, budget = totals["before"], totals["after"], totals["budget"]
    over = bool(totals.get("over_budget"))
    badge = (
        "<span class='wb-badge wb-over-budget'>over budget</span>"
        if over
        else "<span class='wb-badge wb-within-budget'>within budget</span>"
    )
    line = (
        f"<div class='wb-compaction-line'><b>{before:,} → {after:,} {esc(totals['unit'])}</b>"
        f" for {totals['items']} calls, budget {budget:,} {badge}</div>"
    )
    scale = max(before, budget, 1)
    filled, mark = 100 * after / scale, 100 * min(budget, scale) / scale
    bar = (
        "<div class='wb-compaction-bar'>"
        f"<div class='wb-compaction-bar-after' style='width: {filled:.2f}%'></div>"
        f"<div class='wb-compaction-bar-budget' style='left: {mark:.2f}%'></div></div>"
    )
    chips = " ".join(
        f"<span class='wb-badge'>{esc(rule)} \u00d7{count} (\u2212{saved:,})</span>"
        for rule, count, saved in totals.get("rules", [])
    )
    rules = f"<div class='wb-compaction-rules'>{chips}</div>" if chips else ""
    return f"<div class='wb-compaction-totals'>{line}{bar}{rules}</div>"
