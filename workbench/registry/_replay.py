"""Replay: run a recorded call again against the tools registered now, and compare.

``replay(registry, row_or_call_id, args)`` invokes the recorded call's tool with the arguments
the model sent (or ``args``, edited), exactly as ``Registry.invoke`` would, and returns at once.
The new call's history row carries ``parent_call_id`` set to the original's id and a
``tool.replayed`` event naming the original, so the replay is a new call linked to the one it
repeats, written once. ``Replay.receipts`` and ``Replay.canonical`` put the two side by
side with the difference marked.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workbench.families import ReceiptDiff, canonical_text, comparable, diff_html, diff_texts
from workbench.history import CallRecord, History
from workbench.runtime import Call, record_of, sent_raw_args

if TYPE_CHECKING:
    from workbench.registry._registry import Registry

REPLAYED = "tool.replayed"
"""The type of the event a replayed call's row carries; its ``replay_of`` is the original."""


def find_row(
    registry: Registry, row_or_call_id: Any, history: History | None = None
) -> dict[str, Any]:
    """The recorded row to replay: a row mapping, a ``CallRecord``, a ``Call``, or an id
    (workbench's or the model's) looked up in ``history`` (default: the registry's)."""
    if isinstance(row_or_call_id, CallRecord):
        return row_or_call_id.to_dict()
    if isinstance(row_or_call_id, Call):
        return record_of(row_or_call_id).to_dict()
    if isinstance(row_or_call_id, Mapping):
        return dict(row_or_call_id)
    if isinstance(row_or_call_id, str):
        source = history if history is not None else registry.history
        row = source.get(row_or_call_id)
        if row is None:
            raise KeyError(f"no recorded call {row_or_call_id!r} in {source!r}")
        return row
    raise TypeError(
        f"replay() takes a history row, a CallRecord, a Call or a call id, "
        f"not a {type(row_or_call_id).__name__}"
    )


def _sent_args(row: Mapping[str, Any]) -> Any:
    """The arguments exactly as the original call received them (the raw form first, read
    whole from its artifact when the row keeps only a preview)."""
    raw = sent_raw_args(row.get("raw_args"))
    return raw if raw is not None else row.get("arguments")


class _Linked:
    """Whether a replay's row, link included, is committed: the call's own end (its row
    carries the link from the start, so there is no second write to wait for)."""

    def __init__(self, call: Call) -> None:
        self._call = call

    def is_set(self) -> bool:
        return self._call.done

    def wait(self, timeout: float | None = None) -> bool:
        try:
            self._call.wait(timeout)
        except TimeoutError:
            return False
        return True


class Replay:
    """A recorded call run again: ``original`` (its row), ``call`` (the new Call), the
    ``args`` used and whether they were ``edited``. ``wait()`` returns once the new call has
    ended; its row, committed before that, is linked to the original."""

    def __init__(self, registry: Registry, original: dict[str, Any], args: Any = None) -> None:
        self.registry = registry
        self.original = original
        self.edited = args is not None
        self.args = args if self.edited else _sent_args(original)
        # The link is part of the call's own row: written once, committed before anyone
        # learns the replay ended, whether or not anybody waits for it.
        link = {
            "type": REPLAYED,
            "at": time.time(),
            "replay_of": self.original_id,
            "replay_of_model_call_id": original.get("model_call_id"),
            "args_edited": self.edited,
        }
        tool = str(original.get("tool") or "")
        self.call: Call = registry.prepare(tool, self.args, replay_of=link).start()
        self._linked = _Linked(self.call)

    @property
    def original_id(self) -> str:
        """The id of the call replayed."""
        return str(self.original.get("call_id") or "")

    @property
    def link_problem(self) -> str | None:
        """None, or what went wrong writing the replay's row (and where it was kept)."""
        return self.call.sheet.outcome.history_problem

    def wait(self, timeout: float | None = None) -> Replay:
        """Block until the new call has ended and its row is linked; ``TimeoutError`` if
        ``timeout`` seconds pass first."""
        self.call.wait(timeout)
        return self

    @property
    def row(self) -> dict[str, Any] | None:
        """The replay's own history row (None until it is linked)."""
        if not self.call.done:
            return None
        return self.registry.history.get(self.call.id)

    def receipts(self) -> ReceiptDiff:
        """The original receipt beside the replay's, with the difference marked."""
        return diff_texts(
            str(self.original.get("receipt") or ""),
            self.call.receipt or "",
            left_label="original",
            right_label="replay",
        )

    def canonical(self) -> ReceiptDiff:
        """The two canonical records as indented JSON, side by side, each in the form records
        are compared in (``comparable``: call ids left out, a text result as ``{"text": ...}``),
        so identical text is never reported as a difference."""

        def text(row: Mapping[str, Any]) -> str:
            return canonical_text({"canonical": comparable(row.get("canonical"))})

        envelope = self.call.envelope
        now = {"canonical": None if envelope is None else envelope.canonical()}
        return diff_texts(
            text(self.original), text(now), left_label="original", right_label="replay"
        )

    def __str__(self) -> str:
        return self.sentence()

    def __repr__(self) -> str:
        return (
            f"<Replay of {self.original.get('tool')} {self.original_id} as {self.call.id} "
            f"{self.call.state}{' (edited args)' if self.edited else ''}>"
        )

    def sentence(self) -> str:
        """What happened, said as a sentence: which recorded call ran again, with which
        arguments, as which call, and how it ended (or that it still runs)."""
        args = "edited arguments" if self.edited else "the arguments it was sent"
        call = self.call
        envelope = call.envelope
        if envelope is None:
            outcome = f"it is {call.state.replace('_', ' ')}"
        elif envelope.error is not None:
            outcome = f"it failed ({envelope.error.kind.value}: {envelope.error.message})"
        else:
            outcome = "it succeeded"
        return (
            f"Replayed {self.original.get('tool')} {self.original_id} with {args} "
            f"as {call.id}: {outcome}."
        )

    def to_html(self) -> str:
        """What happened (:meth:`sentence`), then the receipts and canonical records of the
        original and the replay, side by side."""
        from workbench._html import esc

        return (
            f"<div class='wb-replay'><div class='wb-replay-title'>{esc(self.sentence())}</div>"
            f"<h4>receipt</h4>{diff_html(self.receipts())}"
            f"<h4>canonical record</h4>{diff_html(self.canonical())}</div>"
        )

    def _repr_mimebundle_(self, **_: Any) -> dict[str, str]:
        text = f"{self.sentence()}\n{self.receipts()}"
        return {"text/plain": text, "text/html": self.to_html()}


def replay(
    registry: Registry,
    row_or_call_id: Any,
    args: Any = None,
    *,
    history: History | None = None,
) -> Replay:
    """Run a recorded call again on ``registry`` (with ``args`` instead of the recorded
    arguments when given) and return the ``Replay`` at once."""
    return Replay(registry, find_row(registry, row_or_call_id, history), args)
