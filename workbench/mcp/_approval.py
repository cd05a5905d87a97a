"""Approval of ``always_ask`` tools through MCP elicitation, on the serving side.

A served ``always_ask`` call never runs silently. How the person is asked depends on the client:

- it declared no form elicitation → the call is denied (``user_denied``), saying why;
- 2026-07-28 connections → the first ``tools/call`` answers ``InputRequiredResult`` with one
  elicitation request; the client's retry carries the answer (and the request state the SDK's
  ``RequestStateBoundary`` sealed and bound to this tool and these arguments). Each round's
  state names a round of its own, and an answer allows exactly one run: a retry that carries an
  answer already used (a replay) is denied without running, saying why;
- handshake-era connections → an ``elicitation/create`` request on the call's back-channel when
  the runtime reaches the approval gate.

The form is empty: accepting it is Allow, declining or dismissing it is Deny (an ``accept`` whose
content says ``"decision": "Deny"`` is Deny too). The request's ``_meta`` names the tool and its
arguments under ``workbench.dev/approval`` so a workbench client can tell it from other forms.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from workbench.registry import Registry
    from workbench.runtime import Call

INPUT_KEY = "workbench.approval"
"""The key of the approval request in an ``InputRequiredResult``."""
META_KEY = "workbench.dev/approval"
"""The ``_meta`` key that marks an elicitation as a workbench approval prompt."""
STATE = "workbench.approval/v1"
"""The prefix of an approval round's request state (``STATE:ROUND``), which the SDK seals
before it leaves the server."""
ROUND_TTL_S = 600.0
"""How long an approval round stays open (the SDK's sealed state expires then too)."""
ROUNDS_MAX = 10_000
"""Most approval rounds open at once; the oldest is closed first."""
REPLAYED = (
    "this approval was already used: an approval allows exactly one run, so the call was not "
    "run again (the client must ask the person again)"
)

NO_ELICITATION = (
    "this MCP client cannot ask the person for approval (it does not support elicitation), "
    "so the call was not run"
)


@dataclass(frozen=True)
class Verdict:
    """The person's decision on one call, and why when it is a refusal."""

    allow: bool
    reason: str | None = None


Decide = Callable[["Call"], Awaitable[Verdict]]
"""Asks for (or recalls) the decision on a call that is waiting for approval."""


def approval_request(tool: str, arguments: Any, effects: tuple[str, ...]) -> types.ElicitRequest:
    """The elicitation that asks whether ``tool`` may run with ``arguments``."""
    shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    lines = [f"Allow `{tool}` to run?", f"arguments: {shown}"]
    if effects:
        lines.append(f"effects: {', '.join(effects)}")
    params = types.ElicitRequestFormParams(
        message="\n".join(lines),
        requested_schema={"type": "object", "properties": {}},
        _meta={META_KEY: {"tool": tool, "arguments": arguments}},
    )
    return types.ElicitRequest(params=params)


def verdict_of(answer: types.ElicitResult) -> Verdict:
    """Allow for an accepted form (unless it says Deny); Deny for a declined or dismissed one."""
    if answer.action == "accept":
        if (answer.content or {}).get("decision") == "Deny":
            return Verdict(False, "the person chose Deny")
        return Verdict(True)
    if answer.action == "decline":
        return Verdict(False, "the person declined the approval prompt")
    return Verdict(False, "the person dismissed the approval prompt")


def can_elicit(capabilities: types.ClientCapabilities | None) -> bool:
    """True when the client declared form elicitation (a bare ``elicitation: {}`` counts)."""
    elicitation = None if capabilities is None else capabilities.elicitation
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


class Rounds:
    """The approval rounds a server opened and no answer has used yet: each allows one run."""

    def __init__(self) -> None:
        self._open: dict[str, float] = {}

    def open(self) -> str:
        """A new round's request state (``STATE:ROUND``)."""
        now = time.monotonic()
        for key, opened in list(self._open.items()):
            if now - opened > ROUND_TTL_S or len(self._open) >= ROUNDS_MAX:
                del self._open[key]
        key = secrets.token_urlsafe(16)
        self._open[key] = now
        return f"{STATE}:{key}"

    def use(self, state: str) -> bool:
        """Close the round ``state`` names; False when it was not open (used, or never)."""
        key = state.removeprefix(f"{STATE}:")
        opened = self._open.pop(key, None)
        return opened is not None and time.monotonic() - opened <= ROUND_TTL_S


def plan(
    tools: Registry,
    ctx: ServerRequestContext[Any, Any],
    params: types.CallToolRequestParams,
    rounds: Rounds,
) -> Decide | types.InputRequiredResult | None:
    """How this ``tools/call`` gets its approval.

    None when the tool does not ask (or does not exist: the runtime answers that); an
    ``InputRequiredResult`` to return now when a 2026-07-28 client must be asked first; else
    the function that decides once the call reaches its approval gate.
    """
    name = params.name
    if name not in tools or tools.permission(name) != "always_ask":
        return None
    if not can_elicit(ctx.session.client_capabilities):
        return _fixed(Verdict(False, NO_ELICITATION))
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answered = _answered(params, rounds)
        if answered is not None:
            return _fixed(answered)
        checked = tools.preflight(name, params.arguments)
        if checked.error is not None:
            return None  # the call ends at its preflight; nobody needs to be asked
        request = approval_request(name, checked.arguments, tools.spec(name).effects)
        return types.InputRequiredResult(
            input_requests={INPUT_KEY: request}, request_state=rounds.open()
        )
    if not ctx.session.can_send_request:
        return _fixed(Verdict(False, "this MCP connection has no channel to ask the person"))
    return _over_back_channel(ctx)


def _fixed(verdict: Verdict) -> Decide:
    async def decide(call: Call) -> Verdict:
        return verdict

    return decide


def _answered(params: types.CallToolRequestParams, rounds: Rounds) -> Verdict | None:
    """The decision a 2026-07-28 retry carries, when it answers our own approval round; a
    round answered before is a refusal (one answer, one run)."""
    state = params.request_state
    if state is None or not state.startswith(f"{STATE}:"):
        return None
    answer = (params.input_responses or {}).get(INPUT_KEY)
    if not isinstance(answer, types.ElicitResult):
        return Verdict(False, "the client retried without answering the approval prompt")
    if not rounds.use(state):
        return Verdict(False, REPLAYED)
    return verdict_of(answer)


def _over_back_channel(ctx: ServerRequestContext[Any, Any]) -> Decide:
    from mcp.shared.message import ServerMessageMetadata

    async def decide(call: Call) -> Verdict:
        spec = call.spec
        effects = () if spec is None else spec.effects
        request = approval_request(call.tool_name, call.arguments, effects)
        try:
            answer = await ctx.session.send_request(
                request,
                types.ElicitResult,
                metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
            )
        except Exception as exc:  # the client failed to ask: refusing is the safe answer
            return Verdict(False, f"the client could not ask the person ({exc})")
        return verdict_of(answer)

    return decide


__all__ = [
    "INPUT_KEY",
    "META_KEY",
    "NO_ELICITATION",
    "REPLAYED",
    "STATE",
    "Decide",
    "Rounds",
    "Verdict",
    "approval_request",
    "can_elicit",
    "plan",
    "verdict_of",
]
