"""How a Run shows itself: its live card inside a Jupyter kernel (the view registered as
``"run"``), and its static, escaped HTML everywhere else and as the saved fallback."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench._html import esc
from workbench._views import display_widget, widget_mimebundle
from workbench.runtime import call_html

if TYPE_CHECKING:
    from workbench.models._run import Run


def usage_text(run: Run, index: int) -> str:
    """``"812 in · 40 out · $0.0021"`` for turn ``index``, or "" when it reported no usage."""
    usage = run.turns[index].usage
    if usage is None:
        return ""
    cost = "" if usage.cost is None else f" · ${usage.cost:.4f}"
    return f"{usage.input_tokens} in · {usage.output_tokens} out{cost}"


def run_html(run: Run) -> str:
    """A static card of the run as it is now: header, each turn's text and its calls' cards,
    compactions, edits, and how it ended."""
    rows = [
        f"<div class='wb-run-header'><b>{esc(run.provider)}:{esc(run.model)}</b> "
        f"<code>{esc(run.id)}</code> "
        f"<span class='wb-badge wb-run-state wb-run-state-{esc(run.state)}'>{esc(run.state)}</span>"
        f"</div>"
    ]
    by_message: dict[int, list[Any]] = {}
    position = 0
    for index, turn in enumerate(run.turns):
        by_message[index] = run.calls[position : position + len(turn.requests)]
        position += len(turn.requests)
    edited = {edit.call_id: edit for edit in run.edits}
    for index, turn in enumerate(run.turns):
        meta = " · ".join(
            part
            for part in (f"turn {index + 1}", turn.stop_reason or "", usage_text(run, index))
            if part
        )
        rows.append(f"<div class='wb-run-turn'><div class='wb-run-meta'>{esc(meta)}</div>")
        if turn.text:
            rows.append(f"<div class='wb-run-text'>{esc(turn.text)}</div>")
        if turn.refusal:
            rows.append(f"<div class='wb-run-refusal'>refused: {esc(turn.refusal)}</div>")
        for call in by_message.get(index, []):
            rows.append(call_html(call))
            edit = edited.get(call.id)
            if edit is not None:
                rows.append(
                    "<div class='wb-run-edited'>receipt edited before it was sent: "
                    f"<pre>{esc(edit.after)}</pre></div>"
                )
        rows.append("</div>")
    if run.streaming_text:
        rows.append(f"<div class='wb-run-text wb-run-streaming'>{esc(run.streaming_text)}</div>")
    for compaction in run.compactions:
        cut = sum(len(before) - len(after) for _, before, after in compaction.cut)
        rows.append(
            f"<div class='wb-run-compaction'>before turn {compaction.turn + 1}: "
            f"{len(compaction.cut)} older receipt(s) compacted, {cut} characters cut</div>"
        )
    rows.append(ending_html(run))
    return f"<div class='wb-run wb-static'>{''.join(rows)}</div>"


def ending_html(run: Run) -> str:
    """How a run ended, escaped: its error, and the reason it stopped (empty while it runs)."""
    rows = []
    if run.error:
        rows.append(f"<div class='wb-run-error'>{esc(run.error)}</div>")
    if run.end_reason:
        rows.append(f"<div class='wb-run-end'>ended: {esc(run.end_reason)}</div>")
    return "".join(rows)


def run_mimebundle(run: Run) -> dict[str, Any]:
    """The live card in a kernel with the widgets; static HTML elsewhere."""
    return widget_mimebundle("run", run, {"text/plain": repr(run), "text/html": run_html(run)})


def display_run(run: Run) -> None:
    """Show ``run``: its live card in a kernel (saved output follows the run), else its HTML."""
    display_widget("run", run, lambda: run_mimebundle(run))
