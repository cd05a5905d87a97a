"""The history view: the history DataFrame, filtered by tool, status and kind; a row opens its
inspector.

The rows are ``History.to_dataframe()``; the filters are pandas masks over it; selecting a row
reads that call back with ``History.get`` and shows its envelope (rebuilt from the canonical
record) and its recorded receipt in an :class:`EnvelopeInspector`. Nothing is computed that the
history does not already hold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anywidget
import ipywidgets as widgets
import traitlets

from workbench._history import History
from workbench._registry import Registry
from workbench.widgets._html import esc, with_html
from workbench.widgets._live_display import LiveDisplay
from workbench.widgets._panes import Counter
from workbench.widgets._static import STATIC, cell_text, grid_html, style_tag
from workbench.widgets.inspector import EnvelopeInspector

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = (
    "call_id",
    "tool",
    "state",
    "status",
    "kind",
    "summary_text",
    "receipt_chars",
    "truncated",
    "elapsed_ms",
)
# Filter values that no tool name, status or kind can take. (ipywidgets reads a None value as
# "nothing selected", so "all" needs a value of its own.)
ANY = "(all)"
NO_KIND = "(none)"  # calls without an error kind: the successes
MAX_ROWS = 500


class HistoryTable(anywidget.AnyWidget):
    """Rows of a history as a table in the browser; clicking a row sets ``selected``."""

    _esm = STATIC / "history.js"
    _css = STATIC / "history.css"

    columns = traitlets.List(traitlets.Unicode(), help="column headings, in order").tag(sync=True)
    rows = traitlets.List(
        traitlets.Dict(), help="one {call_id, status, cells: [str, ...]} per row shown"
    ).tag(sync=True)
    selected = traitlets.Unicode("", help="call id of the selected row, '' for none").tag(sync=True)
    note = traitlets.Unicode("", help="shown above the table: counts, or why it is empty").tag(
        sync=True
    )


def _cell(name: str, value: Any) -> str:
    if name == "elapsed_ms" and isinstance(value, int | float):
        return f"{value:,.0f}"
    if name == "truncated":
        return "yes" if value is True else ""
    return cell_text(value)


def _options(frame: pd.DataFrame, column: str) -> list[tuple[str, str]]:
    values = frame[column].dropna().unique().tolist() if column in frame else []
    options = [("all", ANY), *((str(value), str(value)) for value in sorted(values, key=str))]
    if column == "kind" and bool(frame[column].isna().any()):
        options.append(("(none)", NO_KIND))
    return options


def _chosen(control: widgets.Dropdown) -> str | None:
    return None if control.value == ANY else str(control.value)


def filter_frame(
    frame: pd.DataFrame, *, tool: str | None, status: str | None, kind: str | None
) -> pd.DataFrame:
    """The rows of ``frame`` matching every filter given (None matches everything;
    ``kind=NO_KIND`` matches calls without an error kind)."""
    mask = frame["call_id"].notna()
    if tool is not None:
        mask &= frame["tool"] == tool
    if status is not None:
        mask &= frame["status"] == status
    if kind is not None:
        mask &= frame["kind"].isna() if kind == NO_KIND else frame["kind"] == kind
    return frame[mask]


def problems_html(history: object) -> str:
    """What the history says is wrong with it (``history.problems``, a list or a method giving
    one, where the history offers it), as an escaped warning; empty when there is nothing."""
    problems = getattr(history, "problems", None)
    if callable(problems):
        problems = problems()
    if not problems:
        return ""
    listed = problems if isinstance(problems, list | tuple) else [problems]
    items = "".join(f"<li>{esc(problem)}</li>" for problem in listed)
    return (
        "<div class='wb-history-problems'><div class='wb-warning'>⚠ the history reports "
        f"{len(listed)} problem{'s' * (len(listed) != 1)}</div><ul>{items}</ul></div>"
    )


class HistoryView(widgets.VBox):  # type: ignore[misc]
    """A history's calls with filters and a refresh; a selected row opens its inspector
    (``wb-history``). Give a History or a Registry (its history); ``count`` is passed to the
    inspector as its token counter. At most ``max_rows`` of the filtered rows (the newest)
    are drawn in the browser; ``frame`` always holds all of them."""

    def __init__(
        self,
        history_or_registry: History | Registry,
        *,
        count: Counter | None = None,
        max_rows: int = MAX_ROWS,
    ) -> None:
        if isinstance(history_or_registry, Registry):
            self.history = history_or_registry.history
        else:
            self.history = history_or_registry
        self.max_rows = max_rows
        self._all: pd.DataFrame | None = None
        self._refreshing = False
        self._live = LiveDisplay()
        self.tool_filter = widgets.Dropdown(description="tool", options=[("all", ANY)])
        self.status_filter = widgets.Dropdown(description="status", options=[("all", ANY)])
        self.kind_filter = widgets.Dropdown(description="kind", options=[("all", ANY)])
        for control in (self.tool_filter, self.status_filter, self.kind_filter):
            control.add_class("wb-history-filter")
            control.observe(self._filtered, names="value")
        self.refresh_button = widgets.Button(description="Refresh", icon="refresh")
        self.refresh_button.add_class("wb-history-refresh")
        self.refresh_button.on_click(lambda _: self.refresh())
        self.table = HistoryTable(columns=list(COLUMNS))
        self.table.observe(lambda change: self.select(change["new"]), names="selected")
        self.inspector = EnvelopeInspector(count=count)
        self.inspector.clear("Select a row to inspect its envelope.")
        filters = widgets.HBox(
            [self.tool_filter, self.status_filter, self.kind_filter, self.refresh_button]
        )
        self.problems = widgets.HTML()
        super().__init__([self.problems, filters, self.table, self.inspector])
        self.add_class("wb-history")
        self.refresh()

    @property
    def frame(self) -> pd.DataFrame:
        """The history DataFrame with the current filters applied."""
        if self._all is None:
            self._all = self.history.to_dataframe()
        return filter_frame(
            self._all,
            tool=_chosen(self.tool_filter),
            status=_chosen(self.status_filter),
            kind=_chosen(self.kind_filter),
        )

    def refresh(self) -> None:
        """Read the history again, keeping the filters (a value no longer present resets)."""
        self._all = self.history.to_dataframe()
        self.problems.value = problems_html(self.history)
        self._refreshing = True
        try:
            with self.hold_sync():
                for control, column in (
                    (self.tool_filter, "tool"),
                    (self.status_filter, "status"),
                    (self.kind_filter, "kind"),
                ):
                    current = control.value
                    options = _options(self._all, column)
                    control.options = options
                    values = [value for _, value in options]
                    control.value = current if current in values else ANY
        finally:
            self._refreshing = False
        self._draw()

    def _filtered(self, _change: object) -> None:
        if not self._refreshing:
            self._draw()

    def _draw(self) -> None:
        frame = self.frame
        shown = frame.tail(self.max_rows)
        rows = [
            {
                "call_id": str(record["call_id"]),
                "status": cell_text(record.get("status")),
                "cells": [_cell(name, record.get(name)) for name in COLUMNS],
            }
            for record in shown.to_dict("records")
        ]
        total = 0 if self._all is None else len(self._all)
        note = f"{len(frame)} of {total} calls"
        if len(shown) < len(frame):
            note += f" (the newest {len(shown)} drawn)"
        if total == 0:
            note = "No calls recorded yet."
        with self.table.hold_sync():
            self.table.rows = rows
            self.table.note = note
        self._republish()

    def select(self, call_id: str | None) -> None:
        """Open the inspector of one call (None or '' closes it)."""
        if call_id and self.table.selected != call_id:
            self.table.selected = call_id  # re-enters select() through the observer
            return
        row = self.history.get(call_id) if call_id else None
        if row is None:
            self.table.selected = ""
            self.inspector.clear("Select a row to inspect its envelope.")
        else:
            self.inspector.show_row(row)
        self._republish()

    def to_html(self) -> str:
        """The static, escaped HTML form: the filtered table and the open inspector."""
        filters = ", ".join(
            f"{control.description}: {control.label}"
            for control in (self.tool_filter, self.status_filter, self.kind_filter)
        )
        rows = self.table.rows
        selected = self.table.selected
        table = grid_html(
            COLUMNS,
            (row["cells"] for row in rows),
            css_class="wb-table wb-history-table",
            row_classes=(
                f"wb-history-row wb-status-{row['status']}"
                + (" wb-selected" if row["call_id"] == selected else "")
                for row in rows
            ),
        )
        return (
            f"{style_tag('history.css')}{style_tag('inspector.css')}"
            f"<div class='wb-history wb-static'>{problems_html(self.history)}"
            "<div class='wb-history-note'>"
            f"{esc(self.table.note)} · {esc(filters)}</div>"
            f"<div class='wb-history-table-root'>{table if rows else ''}</div>"
            f"{self.inspector.body_html()}</div>"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        return with_html(super()._repr_mimebundle_(**kwargs), self.to_html())

    def _ipython_display_(self) -> None:
        """Show the view so that its saved ``text/html`` follows the filters and selection."""
        self._live.show(self._repr_mimebundle_())

    def _republish(self) -> None:
        if self._live.shown:
            self._live.update(self._repr_mimebundle_())
