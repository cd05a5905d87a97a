"""The history view: a history's calls, filtered by tool, status and kind; a row opens its
inspector.

The table draws one page of rows, read by key from the history's SQLite file
(``HistoryPages``): the newest matching rows, then older pages on demand, so a history of a
million calls opens as fast as one of ten and the kernel holds only the rows drawn. The filter
values are read from the columns' indexes. Selecting a row reads that call back with
``History.get`` and shows its envelope (rebuilt from the canonical record) and its recorded
receipt in an :class:`EnvelopeInspector`. Nothing is computed that the history does not already
hold.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import TYPE_CHECKING, Any

import anywidget
import ipywidgets as widgets
import traitlets

from workbench.history import NULL, FramePages, History, HistoryPages, Page
from workbench.registry import Registry
from workbench.study import Dataset, DatasetPages
from workbench.widgets._html import esc
from workbench.widgets._kernel_controls import kernel_controls_html
from workbench.widgets._panes import Counter
from workbench.widgets._static import cell_text, rows_table_html, style_tag, stylesheet, view_module
from workbench.widgets._view import LiveView
from workbench.widgets.inspector import EnvelopeInspector
from workbench.widgets.receipt_diff import ReceiptDiffView

if TYPE_CHECKING:
    import pandas as pd

    from workbench.registry import Replay

COLUMNS = (
    "call_id",
    "tool",
    "summary_text",  # what a row is read by: in view at 1024 px, before the state columns
    "status",
    "state",
    "kind",
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

    _esm = view_module("history.js")
    _css = stylesheet("table.css") + stylesheet("history.css")

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


def _row_cells(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "call_id": str(record["call_id"]),
        "status": cell_text(record.get("status")),
        "cells": [_cell(name, record.get(name)) for name in COLUMNS],
    }


def index_frame(history: History) -> pd.DataFrame:
    """The scalar columns of every row, oldest first: what the table draws and filters on.

    Read straight from SQLite without decoding any row's JSON document, so a view of 100,000
    rows opens in a fraction of the time ``to_dataframe`` takes; when the file cannot be read
    that way, or rows still wait in the journal, it is ``to_dataframe`` itself.
    """
    import pandas as pd

    from workbench.history import FIELDS, SCALARS

    history.flush()
    if history.health().held_rows:
        return history.to_dataframe()  # rows waiting outside SQLite are only read this way
    try:
        # One SELECT of the scalar columns.
        records = history.reader.execute(f"SELECT {', '.join(SCALARS)} FROM calls ORDER BY seq")
    except (sqlite3.Error, OSError):
        # to_dataframe reads what it can and names the problem in the history's problems.
        return history.to_dataframe()
    frame = pd.DataFrame.from_records(records, columns=list(SCALARS)).astype(object)
    for name in SCALARS:
        if FIELDS[name] == "bool":
            frame[name] = frame[name].map(lambda value: None if value is None else bool(value))
    return frame.where(frame.notna(), None)


Source = HistoryPages | FramePages | DatasetPages


def _options(source: Source, column: str) -> list[tuple[str, str]]:
    values, empty = source.values(column)
    options = [("all", ANY), *((value, value) for value in values)]
    if column == "kind" and empty:
        options.append(("(none)", NO_KIND))
    return options


def page_source(history: History | Dataset) -> Source:
    """Where the view reads its pages: by key from the SQLite file, or, when rows wait in the
    journal or the file cannot be read that way, from the history read whole (which names the
    problem in ``history.problems``); a Parquet dataset's pages come from DuckDB."""
    if isinstance(history, Dataset):
        return DatasetPages(history)
    history.flush()
    if not history.health().held_rows:
        pages = HistoryPages(history)
        try:
            pages.is_empty()
        except (sqlite3.Error, OSError, AttributeError):
            pass  # read whole below; to_dataframe names what went wrong in history.problems
        else:
            return pages
    return FramePages(history.to_dataframe())


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


def problems_html(history: History | Dataset) -> str:
    """What the history says went wrong (``history.problems``: each one's sentence, which says
    where the rows went), as an escaped warning; empty when there is nothing."""
    listed = list(history.problems)
    if not listed:
        return ""
    items = "".join(f"<li>{esc(problem.message)}</li>" for problem in listed)
    return (
        "<div class='wb-history-problems'><div class='wb-warning'>⚠ the history reports "
        f"{len(listed)} problem{'s' * (len(listed) != 1)}</div><ul>{items}</ul></div>"
    )


def _filter_dropdown(name: str) -> widgets.Dropdown:
    """One filter, its label as wide as its word: the three share a line of a 1024 px window
    (ipywidgets' default, 300 px each with a wide label, gave each a line of its own)."""
    return widgets.Dropdown(
        description=name,
        options=[("all", ANY)],
        layout=widgets.Layout(width="13em"),
        style={"description_width": "initial"},
    )


class HistoryView(LiveView, widgets.VBox):  # type: ignore[misc]
    """A history's calls with filters and a refresh; a selected row opens its inspector
    (``wb-history``). Give a History, a Registry (its history) or a Parquet dataset
    (``wb.open_dataset``, paged with DuckDB); ``count`` is passed to the
    inspector as its token counter (none by default, so an opened call stays a screen tall;
    ``wb.tokens.TokenCounter()`` counts OpenAI's tokens, and the history's DataFrame has
    ``receipt_tokens``). The filtered rows are drawn a page of ``max_rows`` at a
    time, newest page first (Older / Newer, ``older()`` / ``newer()``), each read by key: only
    the rows drawn are read. ``frame`` reads all of them, when asked. Pin keeps a call at the
    top of every page as a reference (``pin()``); Replay runs the selected call again on
    ``replay_with`` (default: the Registry given) and shows the two receipts side by side
    (``replay()``). A selected row also shows its recorded receipt beside workbench's rendering
    of its envelope."""

    shared_stylesheet = False  # its static HTML starts with its own stylesheets

    def __init__(
        self,
        history_or_registry: History | Registry | Dataset,
        *,
        count: Counter | None = None,
        max_rows: int = MAX_ROWS,
        replay_with: Registry | None = None,
    ) -> None:
        self.history: History | Dataset
        if isinstance(history_or_registry, Registry):
            self.history = history_or_registry.history
        else:
            self.history = history_or_registry
        if replay_with is None and isinstance(history_or_registry, Registry):
            replay_with = history_or_registry
        self.registry = replay_with
        self.max_rows = max_rows
        self._all: pd.DataFrame | None = None
        self.source: Source | None = None
        self._bounds: list[Any] = [None]  # the key each page reads below, newest first
        self._shown = Page([], has_older=False)
        self._refreshing = False
        self.tool_filter = _filter_dropdown("tool")
        self.status_filter = _filter_dropdown("status")
        self.kind_filter = _filter_dropdown("kind")
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
        # The controls wrap onto a second line rather than run past a narrow output's edge.
        filters = widgets.HBox(
            [self.tool_filter, self.status_filter, self.kind_filter, self.refresh_button],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        self.problems = widgets.HTML()
        super().__init__([self.problems, filters, self.table, self.inspector])
        self.add_class("wb-history")
        self._add_paging_and_actions(filters)
        self.refresh()

    def _add_paging_and_actions(self, filters: widgets.HBox) -> None:
        self.pinned: list[str] = []
        self.last_replay: Replay | None = None
        self.older_button = widgets.Button(description="Older", icon="chevron-left")
        self.newer_button = widgets.Button(description="Newer", icon="chevron-right")
        self.replay_button = widgets.Button(description="Replay", icon="repeat")
        self.pin_button = widgets.Button(description="Pin", icon="thumb-tack")
        for button, name, action in (
            (self.older_button, "older", self.older),
            (self.newer_button, "newer", self.newer),
            (self.replay_button, "replay", self._replay_clicked),
            (self.pin_button, "pin", self.pin),
        ):
            button.add_class(f"wb-history-{name}")
            button.on_click(lambda _button, act=action: act())
        filters.children = (*filters.children, self.older_button, self.newer_button)
        self.receipt_diff = ReceiptDiffView()
        actions = widgets.HBox([self.replay_button, self.pin_button])
        actions.add_class("wb-history-actions")
        self.children = (*self.children, actions, self.receipt_diff)  # type: ignore[has-type]

    @property
    def frame(self) -> pd.DataFrame:
        """The history DataFrame with the current filters applied."""
        if self._all is None:
            self._all = self.history.to_dataframe()
        return self._filter(self._all)

    def _filter(self, frame: pd.DataFrame) -> pd.DataFrame:
        return filter_frame(
            frame,
            tool=_chosen(self.tool_filter),
            status=_chosen(self.status_filter),
            kind=_chosen(self.kind_filter),
        )

    @property
    def page(self) -> int:
        """Which page is drawn: 0 for the newest rows, 1 for the page before, and so on."""
        return len(self._bounds) - 1

    @property
    def has_older(self) -> bool:
        """True when rows older than the page drawn match the filters."""
        return self._shown.has_older

    def older(self) -> None:
        """Show the next older page of rows (nothing changes on the oldest page)."""
        bound = self._shown.oldest_key
        if self._shown.has_older and bound is not None:
            self._bounds.append(bound)
            self._draw()

    def newer(self) -> None:
        """Show the next newer page of rows."""
        if len(self._bounds) > 1:
            self._bounds.pop()
            self._draw()

    def _filters(self) -> dict[str, object]:
        kind = _chosen(self.kind_filter)
        return {
            "tool": _chosen(self.tool_filter),
            "status": _chosen(self.status_filter),
            "kind": NULL if kind == NO_KIND else kind,
        }

    def pin(self, call_id: str | None = None) -> None:
        """Pin a call (default: the selected one) to the top of every page; pinning a
        pinned call unpins it."""
        target = call_id or self.table.selected
        if not target:
            return
        if target in self.pinned:
            self.pinned.remove(target)
        else:
            self.pinned.append(target)
        self._label_pin()
        self._draw()

    def _label_pin(self) -> None:
        selected = self.table.selected
        self.pin_button.description = "Unpin" if selected and selected in self.pinned else "Pin"

    def replay(self, call_id: str | None = None, args: Any = None) -> Replay:
        """Run a recorded call (default: the selected one) again on the view's registry, with
        ``args`` if given; once it ends its receipts and canonical records are shown beside
        the original's. Returns the ``Replay`` at once."""
        if self.registry is None:
            raise RuntimeError(
                "this history view has no registry to replay on: "
                "give HistoryView(history, replay_with=tools)"
            )
        target = call_id or self.table.selected
        row = self.history.get(target) if target else None
        if row is None:
            raise ValueError("select a recorded call to replay")
        replay = self.registry.replay(row, args)
        self.last_replay = replay
        self.receipt_diff.clear(f"replaying {row.get('tool')} {target} as {replay.call.id}…")
        threading.Thread(
            target=self._show_replay, args=(replay,), name="workbench-replay-view", daemon=True
        ).start()
        return replay

    def _show_replay(self, replay: Replay) -> None:
        try:
            replay.wait()
        except Exception as exc:  # shown where the diff would have been
            self.receipt_diff.clear(f"the replay could not be shown: {exc!r}")
            return
        self.receipt_diff.show_replay(replay)
        if replay.registry.history is self.history:
            self.refresh()
        else:
            self._republish()

    def _replay_clicked(self) -> None:
        try:
            self.replay()
        except (RuntimeError, ValueError) as exc:
            self.receipt_diff.clear(str(exc))

    def refresh(self) -> None:
        """Read the history again, keeping the filters (a value no longer present resets)."""
        self._all = None  # the whole DataFrame is read only when ``frame`` is asked for
        source = self.source = page_source(self.history)
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
                    options = _options(source, column)
                    control.options = options
                    values = [value for _, value in options]
                    control.value = current if current in values else ANY
        finally:
            self._refreshing = False
        self._draw()

    def _filtered(self, _change: object) -> None:
        if not self._refreshing:
            self._bounds = [None]
            self._draw()

    def _draw(self) -> None:
        source = self.source if self.source is not None else page_source(self.history)
        self.source = source
        filters = self._filters()
        shown = source.page(self.max_rows, before=self._bounds[-1], filters=filters)
        if not shown.rows and len(self._bounds) > 1:
            self._bounds = [None]  # the page emptied (the history was cleared): start over
            shown = source.page(self.max_rows, filters=filters)
        self._shown = shown
        pinned = source.rows_with_ids(self.pinned)
        # A pinned call is drawn once, at the top, not again in its page.
        rows = [{**_row_cells(record), "pinned": True} for record in pinned] + [
            _row_cells(record) for record in shown.rows if record["call_id"] not in self.pinned
        ]
        self._set_table(rows, self._note(shown, pinned, source, filters))
        self.older_button.disabled = not shown.has_older
        self.newer_button.disabled = self.page == 0
        self._republish()

    def _note(
        self,
        shown: Page,
        pinned: list[dict[str, Any]],
        source: Source,
        filters: dict[str, object],
    ) -> str:
        """What the table shows, said without counting the history (a count reads every row)."""
        drawn = len(shown.rows)
        filtered = any(value is not None for value in filters.values())
        calls = f"{drawn} call{'s' * (drawn != 1)}"
        if not drawn:
            note = "No calls recorded yet." if source.is_empty() else "No calls match the filters."
        elif self.page == 0 and not shown.has_older:
            note = calls + (f" match{'es' * (drawn == 1)} the filters" if filtered else "")
        elif self.page == 0:
            note = f"the newest {calls} drawn; Older for more"
        else:
            note = f"page {self.page + 1}: {calls} drawn" + (
                "; Older for more" if shown.has_older else ""
            )
        if self.pinned:
            note += f"; {len(pinned)} pinned"
        return note

    def _set_table(self, rows: list[dict[str, Any]], note: str) -> None:
        with self.table.hold_sync():
            self.table.rows = rows
            self.table.note = note

    def select(self, call_id: str | None) -> None:
        """Open the inspector of one call (None or '' closes it)."""
        if call_id and self.table.selected != call_id:
            self.table.selected = call_id  # re-enters select() through the observer
            return
        row = self.history.get(call_id) if call_id else None
        if row is None:
            self.table.selected = ""
            self.inspector.clear("Select a row to inspect its envelope.")
            self.receipt_diff.clear()
        else:
            self.inspector.show_row(row)
            self.receipt_diff.show_row(row)
        self._label_pin()
        self._republish()

    def static_html(self) -> str:
        """The static, escaped HTML form: the filtered table and the open inspector."""
        filters = ", ".join(
            f"{control.description}: {control.label}"
            for control in (self.tool_filter, self.status_filter, self.kind_filter)
        )
        selected = self.table.selected
        table = rows_table_html(
            COLUMNS,
            self.table.rows,
            css_class="wb-history-table",
            row_class=lambda row: (
                f"wb-history-row wb-status-{row['status']}"
                + (" wb-selected" if row["call_id"] == selected else "")
                + (" wb-history-pinned" if row.get("pinned") else "")
            ),
        )
        return (
            f"{style_tag('table.css')}{style_tag('history.css')}{style_tag('inspector.css')}"
            f"<div class='wb-history wb-static'>{problems_html(self.history)}"
            "<div class='wb-history-note'>"
            f"{esc(self.table.note)} · {esc(filters)}</div>"
            f"{kernel_controls_html(*self._control_labels())}"
            f"<div class='wb-history-table-root'>{table}</div>"
            f"{self.inspector.body_html()}{self.receipt_diff.value}</div>"
        )

    def _control_labels(self) -> list[str]:
        buttons = [self.refresh_button, self.older_button, self.newer_button, self.pin_button]
        if self.registry is not None:
            buttons.insert(3, self.replay_button)
        return [str(button.description) for button in buttons]
