"""Static HTML building blocks of the inspector, registry, history and compaction views.

Each of those widgets has a static form (``text/html`` beside the widget view) so a saved
notebook still shows it in nbconvert HTML and on GitHub. Everything here escapes the text it is
given (with ``_html.esc``): cell values, names and descriptions come from tools and are
untrusted. The shared helpers live in ``_html``; this module adds tables and these views' own
stylesheets (``static/inspector.css``, ``registry.css``, ...).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.widgets._html import compact_css, esc

if TYPE_CHECKING:
    import pandas as pd

STATIC = Path(__file__).parent / "static"
CELL_CHARS = 160


@cache
def stylesheet(name: str) -> str:
    """The text of ``static/NAME`` (read once: the widgets' own CSS, never tool text)."""
    return (STATIC / name).read_text(encoding="utf-8")


def view_module(name: str) -> str:
    """The browser module of a view: ``static/shared.js`` (what the views share), then
    ``static/NAME``."""
    return stylesheet("shared.js") + "\n" + stylesheet(name)


def style_tag(name: str) -> str:
    """A ``<style>`` element carrying ``static/NAME``, for static HTML and HTML widgets."""
    return _style_tags(name)


@cache
def _style_tags(name: str) -> str:
    return f"<style>{compact_css(stylesheet(name))}</style>"


def cell_text(value: Any, max_chars: int = CELL_CHARS) -> str:
    """A table cell's text: empty for missing values, compact JSON for lists and dicts, and
    clipped to ``max_chars`` with the full length noted (a resilience case sends 100,000)."""
    if value is None or value is _nat() or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, list | tuple | dict):
        text = json.dumps(value, ensure_ascii=False, default=repr)
    else:
        text = str(value)
    if len(text) > max_chars:
        return f"{text[:max_chars]}… ({len(text):,} chars)"
    return text


def _nat() -> object:
    # A value can only be pandas' NaT once pandas is imported; importing it just to compare
    # would cost a view that never touches pandas most of a second.
    pandas = sys.modules.get("pandas")
    return None if pandas is None else pandas.NaT


def grid_html(
    columns: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    css_class: str = "wb-table",
    row_classes: Iterable[str] | None = None,
) -> str:
    """An escaped HTML table of ready-made cell texts."""
    classes = iter(row_classes) if row_classes is not None else None
    head = "".join(f"<th>{esc(name)}</th>" for name in columns)
    body = "".join(
        (f"<tr class='{esc(next(classes, ''))}'>" if classes is not None else "<tr>")
        + "".join(f"<td>{esc(cell)}</td>" for cell in row)
        + "</tr>"
        for row in rows
    )
    return (
        f"<table class='{esc(css_class)}'><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def rows_table_html(
    columns: Sequence[str],
    rows: Sequence[Mapping[str, Any]],
    *,
    css_class: str,
    row_class: Callable[[Mapping[str, Any]], str],
) -> str:
    """The saved form of a table whose live rows a click picks (``static/table.css``): the
    same columns, cells (``row["cells"]``) and row classes (``row_class(row)``, the selected
    row's included) as the live table, in the same scrolling box; empty for no rows."""
    if not rows:
        return ""
    table = grid_html(
        columns,
        (row["cells"] for row in rows),
        css_class=f"wb-table wb-rows {css_class}",
        row_classes=(row_class(row) for row in rows),
    )
    return f"<div class='wb-rows-scroll'>{table}</div>"


def table_html(
    frame: pd.DataFrame,
    *,
    columns: Sequence[str] | None = None,
    css_class: str = "wb-table",
    max_chars: int = CELL_CHARS,
    empty: str = "No rows.",
) -> str:
    """An escaped HTML table of ``frame`` (only ``columns`` when given), one row per record."""
    names = [c for c in (columns or list(frame.columns)) if c in frame.columns]
    if frame.empty:
        return f"<p class='wb-table-empty'>{esc(empty)}</p>"
    records = frame[names].to_dict("records")
    cells = ([cell_text(record.get(name), max_chars) for name in names] for record in records)
    return grid_html(names, cells, css_class=css_class)
