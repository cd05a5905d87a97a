"""The gate: where a call waits for a person (or an approver) before it runs.

One protocol serves every way of deciding: ``call.approve()/deny()/fulfil()/modify()``, the
approval card, a custom tool's form, the MCP server's elicitation and a registry's own
``Approver``. Each hands the gate a typed :class:`Decision`.

A decision about arguments is bound to the arguments the decider saw: a request carries a
``binding`` (a digest of its arguments) and a decision made with another binding, or made before
the arguments changed (a ``before_tool`` hook, an edit), no longer applies and is set aside.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Verdict = Literal["allow", "deny", "fulfil", "modify"]
Action = Literal["approval", "result"]

_ACCEPTED: dict[Action, frozenset[Verdict]] = {
    "approval": frozenset({"allow", "deny", "modify"}),
    "result": frozenset({"fulfil", "deny"}),  # Deny refuses to supply it: the call ends denied
}


def binding_of(arguments: Any) -> str:
    """A short digest of ``arguments``: what an approval is bound to."""
    text = json.dumps(arguments, sort_keys=True, default=repr, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Decision:
    """What the person (or an approver) decided about a waiting call.

    ``binding`` names the arguments the decider saw; None means "whatever is pending now".
    """

    verdict: Verdict
    reason: str | None = None
    value: Any = None
    arguments: dict[str, Any] | None = None
    binding: str | None = None
    by: str = "person"

    @classmethod
    def allow(cls, *, binding: str | None = None, by: str = "person") -> Decision:
        """Run the call with the arguments shown."""
        return cls("allow", binding=binding, by=by)

    @classmethod
    def deny(
        cls, reason: str | None = None, *, binding: str | None = None, by: str = "person"
    ) -> Decision:
        """Refuse the call: it ends ``user_denied`` with the reason."""
        return cls("deny", reason=reason, binding=binding, by=by)

    @classmethod
    def fulfil(cls, value: Any, *, by: str = "person") -> Decision:
        """Supply a custom tool's result (a value, or a failure envelope)."""
        return cls("fulfil", value=value, by=by)

    @classmethod
    def modify(
        cls, arguments: dict[str, Any], *, binding: str | None = None, by: str = "person"
    ) -> Decision:
        """Approve with edited arguments (checked by the preflight again, recorded as a
        modification)."""
        return cls("modify", arguments=dict(arguments), binding=binding, by=by)


@dataclass(frozen=True)
class GateRequest:
    """What a waiting call asks: approval of these arguments, or a custom tool's result."""

    call_id: str
    tool: str
    action: Action
    arguments: dict[str, Any] | None
    effects: tuple[str, ...] = ()
    binding: str = field(default="")

    @classmethod
    def of(
        cls,
        call_id: str,
        tool: str,
        action: Action,
        arguments: dict[str, Any] | None,
        effects: tuple[str, ...] = (),
    ) -> GateRequest:
        """A request whose binding is the digest of ``arguments``."""
        return cls(call_id, tool, action, arguments, effects, binding_of(arguments))


class Approver(Protocol):
    """Decides on requests without a person: ``await approver(request)`` gives a Decision, or
    None to leave the decision to the person."""

    def __call__(self, request: GateRequest) -> Awaitable[Decision | None]: ...


class Gate:
    """One call's gate: the pending request and the decision that answers it.

    ``decide`` may be called from any thread, at any time: a decision that arrives before the
    request is kept and applied when the request comes, if it is bound to the same arguments.
    """

    def __init__(self) -> None:
        self.request: GateRequest | None = None
        self.set_aside: list[tuple[Decision, str]] = []
        self._early: Decision | None = None
        self._future: asyncio.Future[Decision] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_set_aside: Callable[[str], object] | None = None
        self._lock = threading.Lock()

    def decide(self, decision: Decision) -> None:
        """Hand the gate a decision; one that does not fit the request is set aside."""
        with self._lock:
            request, future, loop = self.request, self._future, self._loop
            told = self._on_set_aside
            if request is None:
                self._early = decision
                return
        if loop is None or loop.is_closed() or future is None:
            return
        problem = _misfit(request, decision)
        if problem is not None:
            self.set_aside.append((decision, problem))
            if told is not None:
                loop.call_soon_threadsafe(told, problem)
            return
        loop.call_soon_threadsafe(_resolve, future, decision)

    def open(
        self,
        request: GateRequest,
        approver: Approver | None,
        on_set_aside: Callable[[str], object],
    ) -> Coroutine[Any, Any, Decision]:
        """Start waiting for a decision that fits ``request`` (from the person or the
        ``approver``) and return what to await for it. The request is pending from this moment,
        so whoever is told about it (an event emitted next) finds it in place."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Decision] = loop.create_future()
        with self._lock:
            self.request, self._future, self._loop = request, future, loop
            self._on_set_aside = on_set_aside
            early, self._early = self._early, None
        if early is not None:
            problem = _misfit(request, early)
            if problem is None:
                _resolve(future, early)
            else:
                self.set_aside.append((early, problem))
                on_set_aside(problem)
        helper: asyncio.Task[None] | None = None
        if approver is not None and not future.done():
            helper = loop.create_task(_consult(approver, request, future))
        return self._decided(future, helper)

    async def _decided(
        self, future: asyncio.Future[Decision], helper: asyncio.Task[None] | None
    ) -> Decision:
        try:
            return await future
        finally:
            if helper is not None:
                helper.cancel()
            with self._lock:
                self.request, self._future, self._loop = None, None, None
                self._on_set_aside = None


def _misfit(request: GateRequest, decision: Decision) -> str | None:
    if decision.verdict not in _ACCEPTED[request.action]:
        return f"a {decision.verdict} decision does not answer a request for {request.action}"
    if decision.binding is not None and decision.binding != request.binding:
        return (
            "the arguments changed after the decision was made, so it no longer applies; "
            "decide again on the arguments shown now"
        )
    return None


def _resolve(future: asyncio.Future[Decision], decision: Decision) -> None:
    if not future.done():
        future.set_result(decision)


async def _consult(
    approver: Approver, request: GateRequest, future: asyncio.Future[Decision]
) -> None:
    decision = await approver(request)
    if decision is not None and _misfit(request, decision) is None:
        _resolve(future, decision)
