"""A call of a tool that runs only as an MCP task (``execution.taskSupport: "required"``), as
MCP Inspector runs one: ``tools/call`` with a ``task`` asks the server to start it and answers
with the task; ``tasks/get`` is polled (each status message shown as the call's progress) until
the task ends; ``tasks/result`` brings its result, an ordinary ``CallToolResult``. Terminate
cancels the task (``tasks/cancel``).

The SDK in use has the task types and validates ``tasks/get`` and ``tasks/result``, but checks
every ``tools/call`` reply against ``CallToolResult``, which a task's creation is not: that one
request goes through the session's JSON-RPC dispatcher directly. Where the SDK has no such
dispatcher (another version), the tool stays unavailable and says why.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import mcp_types as types

if TYPE_CHECKING:
    from mcp import Client

TASK_TTL_MS = 600_000
"""How long the server is asked to keep a task and its result (10 minutes)."""
POLL_DEFAULT_S = 1.0
"""How often a task is polled when the server suggests nothing."""
POLL_BOUNDS_S = (0.05, 5.0)
"""The shortest and longest wait between polls, whatever the server suggests."""
CANCEL_WAIT_S = 2.0
ENDED = frozenset({"completed", "failed", "cancelled"})

Status = Callable[[str, str | None], Awaitable[None]]
"""Receives each status the server reports (``working``, ``input_required``...) and its
message."""


class TasksUnsupported(RuntimeError):
    """This SDK offers no way to send a task-augmented ``tools/call``."""


def can_run_tasks(client: Client) -> bool:
    """True when the SDK in use lets a task-augmented ``tools/call`` be sent."""
    return callable(getattr(getattr(client.session, "_dispatcher", None), "send_raw_request", None))


async def call_as_task(
    client: Client, name: str, arguments: dict[str, Any] | None, on_status: Status
) -> types.CallToolResult:
    """Run the tool ``name`` as a task and return its result (see the module docstring)."""
    dispatcher = getattr(client.session, "_dispatcher", None)
    send_raw = getattr(dispatcher, "send_raw_request", None)
    if not callable(send_raw):
        raise TasksUnsupported("the mcp SDK in use cannot send a task-augmented tools/call")
    params = {"name": name, "arguments": arguments or {}, "task": {"ttl": TASK_TTL_MS}}
    created = types.CreateTaskResult.model_validate(await send_raw("tools/call", params, {}))
    task = created.task
    await on_status(task.status, task.status_message)
    try:
        while task.status not in ENDED:
            await asyncio.sleep(_poll_s(task.poll_interval))
            task = await client.session.send_request(
                types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task.task_id)),
                types.GetTaskResult,
            )
            await on_status(task.status, task.status_message)
        # The payload is the original request's result: read as one (the SDK's advice).
        return await client.session.send_request(
            types.GetTaskPayloadRequest(
                params=types.GetTaskPayloadRequestParams(task_id=task.task_id)
            ),
            types.CallToolResult,
        )
    except asyncio.CancelledError:
        await _cancel(client, task.task_id)
        raise


def _poll_s(suggested_ms: int | None) -> float:
    if suggested_ms is None:
        return POLL_DEFAULT_S
    low, high = POLL_BOUNDS_S
    return min(max(suggested_ms / 1000, low), high)


async def _cancel(client: Client, task_id: str) -> None:
    """Ask the server to cancel the task, waiting a moment for it to hear (the call is being
    cancelled)."""
    request = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task_id))
    sending = asyncio.ensure_future(client.session.send_request(request, types.CancelTaskResult))
    done, _ = await asyncio.wait({sending}, timeout=CANCEL_WAIT_S)
    if not done:
        sending.cancel()
    elif not sending.cancelled():
        sending.exception()  # a refusal to cancel changes nothing: the call ends terminated


__all__ = [
    "TASK_TTL_MS",
    "Status",
    "TasksUnsupported",
    "call_as_task",
    "can_run_tasks",
]
