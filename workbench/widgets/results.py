"""Result views by family: what a finished call's envelope looks like to a person.

``result_view(envelope, call=...)`` picks the view from the envelope alone (``family_of``):
text as sanitised markdown, json as a collapsible tree, command as exit code, stream previews
and warnings, file as numbered lines, listing as a clickable ``ListingTree``, and any failure as
a ``FailureCard``. Every view shows the envelope's warnings and artifact references, and every
value from the tool is escaped.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

import ipywidgets

from workbench._views import FamilyViews
from workbench.envelope import MARKER_RE, Envelope
from workbench.families import family_of
from workbench.families.file import header as file_header
from workbench.families.json import is_cut_json
from workbench.widgets._ansi import ansi_pre
from workbench.widgets._envelope_html import cut_note, footer_html, note_html
from workbench.widgets._html import badge, esc, json_tree_html, markdown_html, pre, shared_style
from workbench.widgets._view import StaticForm

if TYPE_CHECKING:
    from workbench.runtime import Call


def summary_repeats_text(envelope: Envelope) -> bool:
    """True when a text result's (or a plain string result's) summary is its own first line
    (what the envelope derives when a tool gives no summary): drawn above the text, the line
    would show twice."""
    summary = envelope.summary_text.strip().removesuffix("…")
    result = envelope.result
    text = result.get("text") if isinstance(result, dict) else result
    if not summary or not isinstance(text, str):
        return False
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first.startswith(summary)


def text_html(envelope: Envelope) -> str:
    """``{"text": ...}`` as sanitised markdown."""
    result = envelope.result
    body = markdown_html(result["text"])
    if result.get("truncated"):
        body += cut_note(envelope, result, "text", "text", "chars")
    return body


def json_html(envelope: Envelope) -> str:
    """Any JSON value as a collapsible tree; a cut value as its preview and artifact."""
    result = envelope.result
    if is_cut_json(result):
        return pre(result["preview"], "wb-json-preview") + cut_note(
            envelope, result, "result JSON", "result", "chars"
        )
    if isinstance(result, str):
        return pre(result, "wb-json-string")
    return json_tree_html(result)


def _stream_html(envelope: Envelope, result: Mapping[str, Any], stream: str, key: str) -> str:
    text = result.get(f"{key}_preview")
    if text is None:
        return ""
    body = f"<div class='wb-label'>{esc(stream)}</div>{ansi_pre(text, f'wb-{stream}')}"
    if result.get(f"{key}_truncated"):
        body += cut_note(envelope, result, stream, key)
    return body


def command_html(envelope: Envelope, *, show_streams: bool = True) -> str:
    """Exit code, where and how long, then stdout and stderr previews (cut ones name their
    artifact; none when ``show_streams`` is False because the call's card shows the output);
    a background job's pid, state and log instead."""
    result = envelope.result
    code = result.get("exit_code")
    facts = []
    if result.get("background"):
        facts.append(badge(f"pid {result.get('pid')}", "wb-flag"))
        running = result.get("running")
        facts.append(
            badge(
                "running" if running else "exited", f"wb-state-{'running' if running else 'exited'}"
            )
        )
    if code is not None or not result.get("background"):
        facts.append(badge(f"exit code {code}", "wb-ok" if code == 0 else "wb-bad"))
    if result.get("signal"):
        facts.append(badge(f"signal {result['signal']}", "wb-bad"))
    for label, key in (("cwd", "cwd"), ("log", "log_file")):
        if result.get(key) is not None:
            facts.append(f"<span class='wb-label'>{label}</span> <code>{esc(result[key])}</code>")
    if isinstance(result.get("duration_ms"), int):
        facts.append(f"<span class='wb-label'>{result['duration_ms']:,} ms</span>")
    parts = [f"<div class='wb-command-facts'>{' '.join(facts)}</div>"]
    if not show_streams:
        return "".join(parts)
    parts.append(_stream_html(envelope, result, "stdout", "stdout"))
    parts.append(_stream_html(envelope, result, "stderr", "stderr"))
    for key in ("initial_output", "output"):
        parts.append(_stream_html(envelope, result, "log", key))
    return "".join(parts)


def file_html(envelope: Envelope) -> str:
    """The header line, then the text with its line numbers (a cut preview keeps the numbers
    of its head and of its tail, with the cut marker between them)."""
    result = envelope.result
    head = f"<div class='wb-file-header'><code>{esc(file_header(result))}</code></div>"
    text: str = result["text"]
    lines = text[:-1].split("\n") if text.endswith("\n") else text.split("\n")
    if isinstance(result.get("start_byte"), int) or not text:
        return head + (pre(text, "wb-file-text") if text else "")
    marker = next((i for i, line in enumerate(lines) if MARKER_RE.fullmatch(line)), None)
    rows = []
    for index, line in enumerate(lines):
        if index == marker:
            rows.append(f"<tr class='wb-cut'><td class='wb-lineno'>⋮</td><td>{esc(line)}</td></tr>")
            continue
        if marker is None or index < marker:
            number = result["start_line"] + index
        else:
            number = result["end_line"] - (len(lines) - 1 - index)
        rows.append(f"<tr><td class='wb-lineno'>{number}</td><td>{esc(line)}</td></tr>")
    body = f"<div class='wb-lines-box'><table class='wb-lines'>{''.join(rows)}</table></div>"
    if result.get("truncated") and result.get("text_artifact") is not None:
        body += cut_note(envelope, result, "text", "text", "chars")
    elif result.get("truncated"):
        tool = envelope.tool_name or "file_read"
        body += note_html(f"text cut to fit: read other lines with {tool} using offset and limit")
    return head + body


def compacted_html(envelope: Envelope) -> str:
    """A record collapsed by compaction: the one line the model now reads, and the family it
    came from."""
    result = envelope.result
    origin = note_html(f"collapsed by compaction; it was a {result.get('family')} result")
    return pre(result["line"], "wb-compacted-line") + origin


_BODIES = {
    "text": text_html,
    "json": json_html,
    "command": command_html,
    "file": file_html,
    "compacted": compacted_html,
}


def plain_result_html(envelope: Envelope, *, show_streams: bool = True) -> str:
    """The static view of a success drawn by ``ResultView`` (every family but listing and
    failure): summary, the family's body, warnings and artifacts. ``show_streams=False``
    leaves out a command's output previews (the call's card shows its output)."""
    family = family_of(envelope).name
    summary = f"<div class='wb-summary'>{esc(envelope.summary_text)}</div>"
    if family in ("text", "json") and summary_repeats_text(envelope):
        summary = ""  # the text below starts with the same line
    if family == "command":
        body = command_html(envelope, show_streams=show_streams)
    else:
        body = _BODIES[family](envelope)
    return (
        f"<div class='wb-result wb-result-{esc(family)}'>{summary}{body}"
        f"{footer_html(envelope)}</div>"
    )


def compact_html(envelope: Envelope) -> str:
    """Any envelope in one line (``wb-compact``): status, family, tool and what happened."""
    family = family_of(envelope).name
    error = envelope.error
    mark = badge("✓" if error is None else "✗", "wb-ok" if error is None else "wb-bad")
    text = envelope.summary_text if error is None else f"{error.kind.value}: {error.message}"
    if family == "compacted":
        text = envelope.result["line"]
    if len(text) > 200:
        text = text[:200] + "…"
    return (
        f"<div class='wb-compact wb-compact-{esc(family)}'>{mark} {badge(family, 'wb-flag')} "
        f"<b>{esc(envelope.tool_name or 'tool')}</b> <span>{esc(text)}</span></div>"
    )


def result_html(envelope: Envelope) -> str:
    """The static form of any envelope's view (``wb-result``), listings and failures included:
    the family's registered static view."""
    return family_views()[family_of(envelope).name].static(envelope)


class ResultView(StaticForm, ipywidgets.VBox):  # type: ignore[misc]
    """The text, json, command, file or compacted view of a successful envelope
    (``wb-result``)."""

    def __init__(self, envelope: Envelope, *, show_streams: bool = True) -> None:
        super().__init__()
        self.envelope = envelope
        self.body = ipywidgets.HTML(plain_result_html(envelope, show_streams=show_streams))
        self.children = (shared_style(), self.body)
        self.add_class("wb-result-view")

    def static_html(self) -> str:
        """The view as escaped HTML (without the stylesheet)."""
        return str(self.body.value)


def result_view(envelope: Envelope, *, call: Call | None = None) -> ipywidgets.Widget:
    """The live view of ``envelope`` by family. With the ``call`` it came from, a listing
    opens entries through the call's registry and a failure offers Edit and retry."""
    return family_views()[family_of(envelope).name].result(envelope, call)


def output_shown_by_card(call: Call | None) -> bool:
    """True when the view is drawn for a call whose card shows its output in the live pane,
    so the view leaves the output out: output appears once."""
    return call is not None and call.output_size() > 0


def _plain_view(envelope: Envelope, call: Call | None) -> ipywidgets.Widget:
    return ResultView(envelope, show_streams=not output_shown_by_card(call))


def _failure_view(envelope: Envelope, call: Call | None) -> ipywidgets.Widget:
    from workbench.widgets.failure import FailureCard

    return FailureCard(envelope, call=call, show_output=not output_shown_by_card(call))


def _failure_static(envelope: Envelope) -> str:
    from workbench.widgets.failure import failure_html

    return failure_html(envelope)


def _listing_view(envelope: Envelope, call: Call | None) -> ipywidgets.Widget:
    from workbench.widgets.listing import ListingTree

    return ListingTree(envelope, registry=None if call is None else call.registry)


def _listing_static(envelope: Envelope) -> str:
    from workbench.widgets.listing import listing_html

    return listing_html(envelope)


@cache
def family_views() -> dict[str, FamilyViews]:
    """The views of every family, by the family's name in ``FAMILIES`` (what the widgets
    register with the core); ``tests/test_widgets_views.py`` checks that the keys are exactly
    the families."""
    plain = FamilyViews(result=_plain_view, compact=compact_html, static=plain_result_html)
    special = {
        "failure": FamilyViews(result=_failure_view, compact=compact_html, static=_failure_static),
        "listing": FamilyViews(result=_listing_view, compact=compact_html, static=_listing_static),
    }
    return {**dict.fromkeys(_BODIES, plain), **special}


__all__ = [
    "ResultView",
    "compact_html",
    "family_views",
    "footer_html",
    "plain_result_html",
    "result_html",
    "result_view",
]
