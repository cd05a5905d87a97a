"""A model run against a registry: the loop that sends the conversation, turns each tool call
the model asks for into an ordinary ``Call`` (preflight, gate, streaming, Terminate, history),
and sends back exactly ``call.receipt`` (or the person's edit of it, recorded as an edit).

The loop runs on a thread of its own, so ``wb.run`` returns at once and the kernel stays free
for the cards' buttons. ``run.wait()`` returns once nothing more happens without the person:
the run ended, it is paused between steps, or one of its calls waits for a decision.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import threading
import uuid
import warnings
from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, Any, Literal

from workbench.families import Compaction, compact
from workbench.models._types import Conversation, ToolRequest, ToolResult, Turn, Usage
from workbench.runtime import Call, launch_many

if TYPE_CHECKING:
    import pandas as pd

    from workbench.registry import Registry
    from workbench.runtime import Event

RunState = Literal["paused", "requesting", "calling", "finished", "stopped", "failed"]
Listener = Callable[["Run"], None]
Price = tuple[float, float]
"""Dollars per million input tokens, and per million output tokens."""

LOOP_ROUNDS = 4
"""Runtime loop iterations a decision needs to reach its gate and clear the request."""
ENDED: frozenset[str] = frozenset({"finished", "stopped", "failed"})


def new_run_id() -> str:
    """A fresh run id (``run-`` and 12 hex digits)."""
    return f"run-{uuid.uuid4().hex[:12]}"


@dataclasses.dataclass(slots=True)
class SentResult:
    """One tool result of the run: the call it came from, the text sent to the model (its
    receipt, unless the person edited it: ``edited``), and once compaction shortened it
    later, ``compacted`` (the text sent from then on)."""

    request: ToolRequest
    call: Call
    text: str
    edited: bool = False
    sent: bool = False
    compacted: str | None = None

    @property
    def is_error(self) -> bool:
        """True when the call failed (sent with the format's error flag where it has one)."""
        envelope = self.call.envelope
        return envelope is not None and not envelope.ok


@dataclasses.dataclass(frozen=True, slots=True)
class ReceiptEdit:
    """A receipt the person changed before it was sent."""

    call_id: str
    before: str
    after: str


@dataclasses.dataclass(frozen=True, slots=True)
class RunCompaction:
    """Compaction applied before the request of turn ``turn``: what each shortened result was
    and what was sent instead."""

    turn: int
    compaction: Compaction
    cut: tuple[tuple[str, str, str], ...]
    """(call id, text before, text sent), one per shortened result."""


class Run:
    """A model using a registry's tools, live. See ``workbench.run``.

    ``turns`` (each model reply with its text, tool requests, stop reason and usage),
    ``calls`` (every Call the model made, in order), ``results`` (what went back for each),
    ``edits`` and ``compactions``; ``state`` is ``paused`` (step mode, between turns),
    ``requesting``, ``calling``, then ``finished``, ``stopped`` or ``failed`` (``error`` says
    why). ``end_reason`` says how it ended: ``"answered"`` (a reply with no tool call),
    ``"max_turns"``, ``"stopped"`` or ``"error"``.
    """

    def __init__(
        self,
        conversation: Conversation,
        tools: Registry,
        *,
        run_id: str,
        max_turns: int = 10,
        compact_budget: int | None = None,
        step: bool = False,
        price: Price | None = None,
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be 1 or more, not {max_turns}")
        if compact_budget is not None and compact_budget < 0:
            raise ValueError(f"compact_budget must be 0 or more, not {compact_budget}")
        self.id = run_id
        self.conversation = conversation
        self.provider = conversation.provider
        self.model = conversation.model
        self.tools = tools
        self.max_turns = max_turns
        self.compact_budget = compact_budget
        self.step_mode = step
        self.price = price
        self.turns: list[Turn] = []
        self.calls: list[Call] = []
        self.results: list[SentResult] = []
        self.edits: list[ReceiptEdit] = []
        self.compactions: list[RunCompaction] = []
        self.state: RunState = "paused" if step else "requesting"
        self.end_reason: str | None = None
        self.error: str | None = None
        self.streaming_text = ""
        self._steps = 0
        self._stop = threading.Event()
        self._changed = threading.Condition()
        self._listeners: list[Listener] = []
        # Run in the waiting thread when wait() returns: a view publishes its settled form from
        # the cell that waited, the one place a notebook runner is sure to be listening.
        self._after_wait: list[Callable[[], None]] = []
        self._thread = threading.Thread(target=self._drive, name=f"workbench-{run_id}", daemon=True)

    # ── what a person does ───────────────────────────────────────────────────────────────
    def begin(self) -> Run:
        """Start the loop's thread (``wb.run`` does this)."""
        self._thread.start()
        return self

    def step(self) -> None:
        """In step mode, let the run take its next turn (send what is pending, read the reply,
        run its calls); returns at once. Outside step mode it does nothing."""
        with self._changed:
            self._steps += 1
            if self.state == "paused":
                self.state = "requesting"  # so a wait() right after this waits for the turn
            self._changed.notify_all()

    def stop(self) -> None:
        """End the run: calls still running are terminated, no further request is sent (a
        request already on its way is awaited, its reply kept)."""
        self._stop.set()
        for call in list(self.calls):
            if not call.done:
                call.terminate()
        with self._changed:
            self._changed.notify_all()

    def edit_receipt(self, call: Call | str, text: str) -> None:
        """Send ``text`` instead of the receipt of ``call`` (a Call or its id): only while the
        result is not sent yet (step mode, paused). Recorded in ``edits`` and as a warning on
        the call's history row."""
        if not isinstance(text, str):
            raise TypeError(f"a receipt is text, not {type(text).__name__}")
        call_id = call if isinstance(call, str) else call.id
        with self._changed:
            for result in self.results:
                if result.call.id != call_id:
                    continue
                if result.sent:
                    raise ValueError(f"the result of call {call_id} was already sent to the model")
                if text == result.text:
                    return
                self.edits.append(ReceiptEdit(call_id, result.text, text))
                result.text = text
                result.edited = text != (result.call.receipt or "")
                break
            else:
                raise KeyError(f"call {call_id} is not a call of this run")
        self.tools.history.add_warning(
            call_id, f"receipt edited by the person before it was sent to the model ({self.id})"
        )
        self._notify()

    def wait(self, timeout: float | None = None) -> Run:
        """Block until the run ended, is paused between steps, or a call of it waits for a
        person; ``TimeoutError`` after ``timeout`` seconds. Returns the run."""
        self._let_decisions_land()
        with self._changed:
            if not self._changed.wait_for(self._settled, timeout):
                raise TimeoutError(f"run {self.id} is still {self.state} after {timeout} s")
        for hook in list(self._after_wait):
            try:
                hook()
            except Exception as exc:  # a view's problem must not hide the run from its waiter
                warnings.warn(f"a view of run {self.id} failed to update: {exc!r}", stacklevel=2)
        return self

    def __await__(self) -> Generator[Any, None, Run]:
        loop = asyncio.get_running_loop()
        return loop.run_in_executor(None, self.wait).__await__()

    def after_wait(self, hook: Callable[[], None]) -> Callable[[], None]:
        """Run ``hook()`` on the thread that waited, each time ``wait()`` returns (a view
        publishing its settled form where a notebook runner still listens); returns a function
        that removes it. A hook that raises is warned of, never raised to the waiter."""
        self._after_wait.append(hook)
        return lambda: self._after_wait.remove(hook) if hook in self._after_wait else None

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(run)`` after every change (from the run's thread); returns a function
        that unsubscribes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    # ── what a person reads ──────────────────────────────────────────────────────────────
    @property
    def done(self) -> bool:
        """True once the run has ended (finished, stopped or failed)."""
        return self.state in ENDED

    @property
    def pending(self) -> list[SentResult]:
        """Results waiting to be sent (editable with ``edit_receipt``)."""
        return [result for result in self.results if not result.sent]

    @property
    def transcript(self) -> dict[str, Any]:
        """The run so far in the provider's own format (``wb.transcripts.load`` reads it)."""
        return self.conversation.transcript()

    @property
    def history(self) -> pd.DataFrame:
        """This run's calls from the registry's history, one row each (``run_id`` is this
        run's id)."""
        self.tools.history.flush()
        frame = self.tools.history.to_dataframe()
        if frame.empty:
            return frame
        return frame[frame["run_id"] == self.id].reset_index(drop=True)

    @property
    def usage(self) -> Usage | None:
        """Tokens (and cost, with ``price``) summed over the turns that reported usage."""
        reported = [turn.usage for turn in self.turns if turn.usage is not None]
        if not reported:
            return None
        costs = [usage.cost for usage in reported]
        return Usage(
            sum(usage.input_tokens for usage in reported),
            sum(usage.output_tokens for usage in reported),
            None if None in costs else sum(cost for cost in costs if cost is not None),
        )

    def __repr__(self) -> str:
        return (
            f"<Run {self.id} {self.provider}:{self.model} {self.state}, {len(self.turns)} turn(s), "
            f"{len(self.calls)} call(s)>"
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        from workbench.models._display import run_mimebundle

        return run_mimebundle(self)

    def _ipython_display_(self) -> None:
        from workbench.models._display import display_run

        display_run(self)

    # ── the loop ─────────────────────────────────────────────────────────────────────────
    def _settled(self) -> bool:
        if self.done or self.state == "paused":
            return True
        return any(call.pending_action is not None for call in self.calls if not call.done)

    def _let_decisions_land(self) -> None:
        """A decision just handed to a call (Allow in the cell before ``wait()``) reaches its
        gate on the runtime loop a few loop iterations later; let those run first, so
        ``wait()`` does not mistake the call for one still waiting for the person."""
        for call in self.calls:
            if call.done or call.pending_action is None:
                continue
            for _ in range(LOOP_ROUNDS):
                landed: concurrent.futures.Future[None] = concurrent.futures.Future()
                try:
                    call.sheet.loop.call_soon_threadsafe(landed.set_result, None)
                    landed.result(timeout=1.0)
                except (RuntimeError, concurrent.futures.TimeoutError):
                    break  # the loop is closed or busy: wait_for below still sees the truth

    def _notify(self, event: Event | None = None) -> None:
        # Views first: a card that draws its final state here has drawn it before wait()
        # returns, so the cell that waited is still running when the card's output updates.
        for listener in list(self._listeners):
            try:
                listener(self)
            except Exception as exc:  # a broken view must not stop the run; say so on the run
                self.error = self.error or f"a view of this run failed: {exc!r}"
        with self._changed:
            self._changed.notify_all()

    def _set_state(self, state: RunState) -> None:
        self.state = state
        self._notify()

    def _await_step(self) -> bool:
        """In step mode, wait for ``step()``; False when the run was stopped meanwhile."""
        if not self.step_mode:
            return not self._stop.is_set()
        with self._changed:
            if self._steps == 0 and not self._stop.is_set():
                self.state = "paused"
        self._notify()
        with self._changed:
            self._changed.wait_for(lambda: self._steps > 0 or self._stop.is_set())
            if self._stop.is_set():
                return False
            self._steps -= 1
        return True

    def _drive(self) -> None:
        try:
            self._loop()
        except Exception as exc:  # the provider, the network or a reply we could not read
            self.error = f"{self.provider} run failed: {type(exc).__name__}: {exc}"
            self.end_reason = "error"
            self._send_pending()
            self._set_state("failed")
            return
        self._set_state("stopped" if self.end_reason == "stopped" else "finished")

    def _loop(self) -> None:
        for index in range(self.max_turns):
            if not self._await_step():
                self.end_reason = "stopped"
                self._send_pending()
                return
            self._compact(index)
            self._send_pending()
            self._set_state("requesting")
            self.streaming_text = ""
            turn = self.conversation.request(index, self._on_text)
            if turn.usage is not None and self.price is not None:
                turn.usage = dataclasses.replace(
                    turn.usage,
                    cost=(
                        turn.usage.input_tokens * self.price[0]
                        + turn.usage.output_tokens * self.price[1]
                    )
                    / 1_000_000,
                )
            self.turns.append(turn)
            self.streaming_text = ""
            if not turn.requests:
                self.end_reason = "answered"
                return
            self._set_state("calling")
            self._run_calls(turn)
            if self._stop.is_set():
                self.end_reason = "stopped"
                self._send_pending()
                return
        self.end_reason = "max_turns"
        self._send_pending()

    def _on_text(self, piece: str) -> None:
        self.streaming_text += piece
        self._notify()

    def _run_calls(self, turn: Turn) -> None:
        calls = []
        for request in turn.requests:
            call = self.tools.prepare(
                request.name,
                request.raw_args,
                call_id=request.id,
                run_id=self.id,
                message_id=turn.message_id,
            )
            call.subscribe(self._on_call_event)
            calls.append(call)
        with self._changed:
            self.calls.extend(calls)
        launch_many(calls)
        self._notify()
        for request, call in zip(turn.requests, calls, strict=True):
            call.wait()
            with self._changed:
                self.results.append(SentResult(request, call, call.receipt or ""))
        self._notify()

    def _on_call_event(self, event: Event) -> None:
        self._notify(event)

    def _send_pending(self) -> None:
        """Add every result not yet sent to the conversation."""
        with self._changed:
            pending = [result for result in self.results if not result.sent]
            for result in pending:
                result.sent = True
        if pending:
            self.conversation.add_results(
                [ToolResult(result.request, result.text, result.is_error) for result in pending]
            )

    def _compact(self, turn: int) -> None:
        """With ``compact_budget``, shorten older results (never the ones about to be sent, nor
        the person's edits) before the next request, and keep what was cut."""
        if self.compact_budget is None or not self.results:
            return
        recent = len(self.pending)
        compaction = compact(
            [result.call for result in self.results], self.compact_budget, keep_recent=recent
        )
        cut: list[tuple[str, str, str]] = []
        for index in sorted({step.index for step in compaction.steps}):
            result = self.results[index]
            text = compaction.receipts[index]
            current = result.compacted if result.compacted is not None else result.text
            if result.edited or not result.sent or text == current:
                continue
            cut.append((result.call.id, current, text))
            result.compacted = text
            self.conversation.replace_result(result.request.id, index, text)
        if cut:
            self.compactions.append(RunCompaction(turn, compaction, tuple(cut)))
            self._notify()


def run(
    model: Any,
    tools: Registry,
    prompt: str | Sequence[dict[str, Any]],
    *,
    max_turns: int = 10,
    compact_budget: int | None = None,
    step: bool = False,
    model_name: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    api: str | None = None,
    system: str | None = None,
    strict: bool = True,
    stream: bool = False,
    price: Price | None = None,
    options: dict[str, Any] | None = None,
) -> Run:
    """Let a model use ``tools``: returns a running ``Run`` at once (in a notebook, a live card).

    ``model`` is ``"provider:model"`` (``openai``, ``openai-responses``, ``anthropic``,
    ``gemini``; ``"openai:<name>"`` with ``base_url=`` for an OpenAI-compatible server such as
    Ollama, vLLM, llama.cpp or LM Studio) or an SDK client with ``model_name=``. Keys come from
    ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``/``GOOGLE_API_KEY`` (or
    ``api_key=``). ``prompt`` is the first user message, or a list of messages in the
    provider's format. At most ``max_turns`` model replies; ``compact_budget`` (characters)
    compacts older receipts before each request; ``step=True`` pauses before every request
    until ``run.step()``, and pending receipts may be edited then. ``price`` is (dollars per
    million input tokens, per million output tokens) for a cost per turn; ``stream`` reads
    Chat Completions replies as they are written; ``options`` go to the SDK's create call.
    """
    from workbench.models._connect import conversation

    run_id = new_run_id()
    talk = conversation(
        model,
        tools,
        prompt if isinstance(prompt, str) else list(prompt),
        run_id=run_id,
        model_name=model_name,
        base_url=base_url,
        api_key=api_key,
        api=api,
        system=system,
        strict=strict,
        stream=stream,
        options=options,
    )
    return Run(
        talk,
        tools,
        run_id=run_id,
        max_turns=max_turns,
        compact_budget=compact_budget,
        step=step,
        price=price,
    ).begin()
