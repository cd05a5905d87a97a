"""The run card: a model's conversation live, each tool call it makes an ordinary call card.

A view over a ``Run`` (CSS class ``wb-run``): header (provider, model, run id, state, tokens
and cost so far), then each turn's text (streamed text as it arrives) and the cards of its
calls, compactions with what they cut, and how the run ended. Step mode adds a Step button
(``wb-run-step``) and, while the run is paused, one editable receipt per result about to be
sent (``wb-run-receipt``): Step sends the edited text, recorded as an edit
(``run.edit_receipt``). Stop (``wb-run-stop``) is ``run.stop()``. Redraws are coalesced on
the cards' timer thread; once the run has ended the card is saved as its static HTML.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

import ipywidgets

from workbench.models import ending_html, usage_text
from workbench.widgets._html import details, esc, pre, shared_style
from workbench.widgets._timer import call_later
from workbench.widgets._view import LiveView
from workbench.widgets.call_card import card

if TYPE_CHECKING:
    from workbench.models import Run
    from workbench.runtime import Call

FLUSH_INTERVAL_S = 0.1


def _set(widget: Any, name: str, value: Any) -> None:
    if getattr(widget, name) != value:
        setattr(widget, name, value)


def header_html(run: Run) -> str:
    """Provider and model, run id, state badge and the usage so far, escaped."""
    usage = run.usage
    spent = ""
    if usage is not None:
        cost = "" if usage.cost is None else f" · ${usage.cost:.4f}"
        spent = f"{usage.input_tokens} in · {usage.output_tokens} out{cost}"
    return (
        f"<div class='wb-run-header'><b>{esc(run.provider)}:{esc(run.model)}</b> "
        f"<code>{esc(run.id)}</code> "
        f"<span class='wb-badge wb-run-state wb-run-state-{esc(run.state)}'>{esc(run.state)}</span>"
        f" <span class='wb-run-usage'>{esc(spent)}</span></div>"
    )


def turn_html(run: Run, index: int) -> str:
    """One turn's line (number, stop reason, usage) and its text or refusal, escaped."""
    turn = run.turns[index]
    meta = " · ".join(
        part
        for part in (f"turn {index + 1}", turn.stop_reason or "", usage_text(run, index))
        if part
    )
    rows = [f"<div class='wb-run-meta'>{esc(meta)}</div>"]
    if turn.text:
        rows.append(f"<div class='wb-run-text'>{esc(turn.text)}</div>")
    if turn.refusal:
        rows.append(f"<div class='wb-run-refusal'>refused: {esc(turn.refusal)}</div>")
    return "".join(rows)


def footer_html(run: Run) -> str:
    """Compactions (each cut receipt collapsed under its sizes), edits, the error and how the
    run ended, escaped."""
    rows = []
    for compaction in run.compactions:
        items = "".join(
            "<li>"
            + details(
                f"<code>{esc(call_id)}</code>: {len(before):,} → {len(after):,} characters",
                pre(after, "wb-run-cut"),
            )
            + "</li>"
            for call_id, before, after in compaction.cut
        )
        rows.append(
            f"<div class='wb-run-compaction'>before turn {compaction.turn + 1}, older receipts "
            f"compacted to fit {run.compact_budget} characters:<ul>{items}</ul></div>"
        )
    for edit in run.edits:
        rows.append(
            f"<div class='wb-run-edited'>receipt of <code>{esc(edit.call_id)}</code> edited "
            f"before it was sent: <pre>{esc(edit.after)}</pre></div>"
        )
    rows.append(ending_html(run))
    return "".join(rows)


def streaming_html(run: Run) -> str:
    """The text the model is streaming now, escaped; empty when it streams nothing."""
    text = run.streaming_text
    return f"<div class='wb-run-text wb-run-streaming'>{esc(text)}</div>" if text else ""


def turns_with_calls(run: Run) -> list[tuple[int, list[Call]]]:
    """Each turn's index with the calls it asked for, in order."""
    found = []
    position = 0
    for index, turn in enumerate(list(run.turns)):
        found.append((index, list(run.calls[position : position + len(turn.requests)])))
        position += len(turn.requests)
    return found


class RunCard(LiveView, ipywidgets.VBox):  # type: ignore[misc]
    """The live card of ``run``; every button is a method of the Run."""

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run = run
        self.header = ipywidgets.HTML()
        self.step_button = ipywidgets.Button(description="Step", icon="step-forward")
        self.step_button.add_class("wb-run-step")
        self.step_button.on_click(lambda _: self.step())
        self.stop_button = ipywidgets.Button(description="Stop", icon="stop", button_style="danger")
        self.stop_button.add_class("wb-run-stop")
        self.stop_button.on_click(lambda _: run.stop())
        self.controls = ipywidgets.HBox((self.step_button, self.stop_button))
        self.body = ipywidgets.VBox()
        self.body.add_class("wb-run-body")
        self.streaming = ipywidgets.HTML()
        self.pending = ipywidgets.VBox()
        self.footer = ipywidgets.HTML()
        self.children = (
            shared_style(),
            self.header,
            self._scrolled(self.body, self.streaming),
            self.pending,
            self.controls,
            self.footer,
        )
        self.add_class("wb-run")
        self.editors: dict[str, ipywidgets.Textarea] = {}
        self._turns: list[ipywidgets.HTML] = []
        self._lock = threading.RLock()
        self._scheduled = False
        self._final = False
        self._render()
        self._unsubscribe = run.subscribe(self._changed)
        self._stop_after_wait = run.after_wait(self._publish_from_waiter)
        self._changed(run)

    @staticmethod
    def _scrolled(*children: Any) -> ipywidgets.Box:
        """``children`` in the run's scrolling box (``wb-run-scroll``), which keeps its newest
        line in sight."""
        inner = ipywidgets.VBox(children)
        box = ipywidgets.Box((inner,))
        box.add_class("wb-run-scroll")
        return box

    # ── what the buttons do ──────────────────────────────────────────────────────────────
    def step(self) -> None:
        """Send the receipts as edited in the boxes (each change recorded as an edit), then
        let the run take its next turn."""
        for result in self.run.pending:
            editor = self.editors.get(result.call.id)
            if editor is not None and editor.value != result.text:
                self.run.edit_receipt(result.call, editor.value)
        self.run.step()

    # ── drawing ──────────────────────────────────────────────────────────────────────────
    def _changed(self, run: Run) -> None:
        if run.done:
            self._flush()  # at once, before run.wait() returns (see Run._notify)
            return
        with self._lock:
            if self._scheduled or self._final:
                return
            self._scheduled = True
        call_later(FLUSH_INTERVAL_S, self._flush)

    def _flush(self) -> None:
        with self._lock:
            self._scheduled = False
            if self._final:
                return
            self._render()
            if self.run.done:
                self._final = True
                self._unsubscribe()
        if self._final:
            self._send_saved_form()
            self._republish()
        else:
            self._keep_saved_form()  # a notebook saved mid-run keeps the run as it is now

    def _publish_from_waiter(self) -> None:
        """Once the run has ended, publish the settled card from the thread that waited for it
        (a cell), where a notebook runner still listens, then stop."""
        if not self.run.done:
            return
        self._flush()
        self._republish()
        self._stop_after_wait()

    def _render(self) -> None:
        run = self.run
        _set(self.header, "value", header_html(run))
        children: list[Any] = []
        for index, calls in turns_with_calls(run):
            if index == len(self._turns):
                self._turns.append(ipywidgets.HTML())
                self._turns[index].add_class("wb-run-turn")
            _set(self._turns[index], "value", turn_html(run, index))
            children.append(self._turns[index])
            children.extend(card(call) for call in calls)
        if tuple(children) != self.body.children:
            self.body.children = tuple(children)
        _set(self.streaming, "value", streaming_html(run))
        self._render_pending()
        paused = run.state == "paused"
        _set(self.step_button.layout, "display", None if run.step_mode and not run.done else "none")
        _set(self.step_button, "disabled", not paused)
        _set(self.stop_button.layout, "display", "none" if run.done else None)
        _set(self.footer, "value", footer_html(run))

    def _render_pending(self) -> None:
        run = self.run
        pending = run.pending if run.state == "paused" else []
        wanted = [result.call.id for result in pending]
        if list(self.editors) == wanted:
            return
        rows: list[Any] = []
        editors: dict[str, ipywidgets.Textarea] = {}
        for result in pending:
            editor = ipywidgets.Textarea(
                value=result.text, layout=ipywidgets.Layout(width="100%", height="6em")
            )
            editor.add_class("wb-run-receipt")
            editors[result.call.id] = editor
            label = ipywidgets.HTML(
                f"<div class='wb-run-meta'>to send for {esc(result.call.tool_name)} "
                f"<code>{esc(result.call.id)}</code> (edit before Step)</div>"
            )
            rows.append(label)
            rows.append(editor)
        self.editors = editors
        self.pending.children = tuple(rows)

    # ── static form and display ──────────────────────────────────────────────────────────
    def static_html(self) -> str:
        """The run as it is now, as escaped HTML (without the stylesheet): the same pieces the
        live card draws (each call as its card's static form), so a saved or finished card
        reads as the live one did."""
        run = self.run
        body = "".join(
            f"<div class='wb-run-turn'>{turn_html(run, index)}</div>"
            + "".join(card(call).static_html() for call in calls)
            for index, calls in turns_with_calls(run)
        )
        return (
            f"<div class='wb-run wb-static'>{header_html(run)}"
            f"<div class='wb-run-scroll'><div class='wb-run-body'>{body}"
            f"{streaming_html(run)}</div></div>{footer_html(run)}</div>"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        if self._final:
            return {"text/plain": repr(self.run), "text/html": self.to_html()}
        return super()._repr_mimebundle_(**kwargs)


_cards: weakref.WeakValueDictionary[str, RunCard] = weakref.WeakValueDictionary()
_cards_lock = threading.Lock()


def run_card(run: Run) -> RunCard:
    """The card of ``run``: one per run, created on first use (a Run displays as this)."""
    with _cards_lock:
        existing = _cards.get(run.id)
        if existing is not None and existing.run is run:
            return existing
        created = RunCard(run)
        _cards[run.id] = created
        return created


__all__ = ["RunCard", "run_card"]
