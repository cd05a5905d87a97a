"""One served ``tools/call``: a workbench call driven for an MCP client.

While the call runs, its ``tool.output`` events go to the client as progress notifications (in
order, batched when output outruns the connection) and its approval gate is answered by the
client's person (``_approval``). When the client cancels, the call is terminated and the handler
waits for it to end, so its processes are gone before the cancellation is acknowledged.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from workbench.envelope import Envelope, truncate_for_model
from workbench.runtime import TERMINAL_EVENTS, Decision, Event, on_loop_thread

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from workbench.mcp._approval import Decide
    from workbench.runtime import Call

PROGRESS_MESSAGE_CHARS = 16_000
"""Most characters of output in one progress notification; the complete output stays in the
call's streams and its envelope."""

ELICITED = "mcp elicitation"
"""Who decided, in the call's events, when the MCP client's person answered the prompt."""

STOP_MARGIN_S = 5.0
"""How much longer than the registry's ``terminate_grace`` a cancelled call may take to end."""


async def serve_call(
    invoke: Callable[[Callable[[Event], object]], Call],
    ctx: ServerRequestContext[Any, Any],
    decide: Decide | None,
) -> tuple[Call, Envelope]:
    """Start a call with ``invoke(subscriber)`` (subscribed before it starts, so no event is
    missed) and drive it to its envelope for the client of ``ctx``; see the module docstring."""
    send, receive = anyio.create_memory_object_stream[str](math.inf)
    asked = anyio.Event()
    ended = anyio.Event()
    loop = asyncio.get_running_loop()

    def on_event_here(event: Event) -> None:
        if event.type == "tool.output" and event.text:
            try:
                send.send_nowait(event.text)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                # The client's answer is already sent; this output is in the call's streams
                # and its record, which the answer carries.
                return
        elif event.type == "tool.approval_requested":
            asked.set()
        elif event.type in TERMINAL_EVENTS:
            ended.set()

    def on_event(event: Event) -> None:
        # The call may run on another loop (workbench's runtime thread): the streams and events
        # here belong to this server's loop, so they are touched only there, in event order.
        if on_loop_thread(loop):
            on_event_here(event)
        elif not loop.is_closed():
            loop.call_soon_threadsafe(on_event_here, event)

    call = invoke(on_event)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_pump, ctx, receive)
            asking = anyio.CancelScope()
            if decide is not None:
                group.start_soon(_answer, call, decide, asked, asking)
            try:
                envelope = await _finished(call, ended)
            finally:
                asking.cancel()
                send.close()
    finally:
        call.unsubscribe(on_event)
    return call, envelope


async def _finished(call: Call, ended: anyio.Event) -> Envelope:
    """The call's envelope once it ends. Waits on its terminal event rather than ``await call``,
    so the call keeps running in its own task and this handler's cancellation reaches it only
    as Terminate."""
    try:
        await ended.wait()
    except anyio.get_cancelled_exc_class():
        call.terminate()
        # Shielded: the cancellation is acknowledged only once the call (and its processes)
        # ended.
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(call.registry.terminate_grace + STOP_MARGIN_S):
                await ended.wait()
        raise
    envelope = call.envelope
    assert envelope is not None  # the terminal event is emitted after the envelope is set
    return envelope


async def _pump(
    ctx: ServerRequestContext[Any, Any], receive: MemoryObjectReceiveStream[str]
) -> None:
    """Send queued output as progress notifications; a no-op without a progress token."""
    sent = 0
    async with receive:
        async for text in receive:
            chunks = [text]
            while True:
                try:
                    chunks.append(receive.receive_nowait())
                except (anyio.WouldBlock, anyio.EndOfStream):
                    break
            sent += 1
            message = truncate_for_model("".join(chunks), PROGRESS_MESSAGE_CHARS)
            await ctx.session.report_progress(sent, None, message)


async def _answer(call: Call, decide: Decide, asked: anyio.Event, scope: anyio.CancelScope) -> None:
    with scope:
        await asked.wait()
        if call.pending_action != "approval":
            return  # an injected denial: the runtime decided without asking anyone
        request = call.gate.request
        binding = None if request is None else request.binding  # what the client is shown
        verdict = await decide(call)
        if verdict.allow:
            call.decide(Decision.allow(binding=binding, by=ELICITED))
        else:
            call.decide(Decision.deny(verdict.reason, binding=binding, by=ELICITED))


__all__ = ["serve_call"]
