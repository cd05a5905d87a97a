"""The time limits of what a connection asks of its server.

Every request the person makes (a list, a read, a prompt, a completion, a subscription, a ping,
the handshake itself) has a limit, ``timeout=`` seconds. Past it the request is cancelled (the
SDK sends the server ``notifications/cancelled``, so nothing goes on running behind the person's
back) and ``RequestTimedOut`` names what timed out, on which server, after how long.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

REQUEST_TIMEOUT_S = 60.0
"""How long a request the person makes (a list, a read, a prompt, a subscription) may take by
default."""
CANCEL_WAIT_S = 2.0
"""How long a request given up waits for the SDK to send ``notifications/cancelled``."""


class RequestTimedOut(TimeoutError):
    """A request to an MCP server got no answer within its limit, and was cancelled.

    ``what`` names the request (``resources/read of 'demo://a'``), ``server`` the server and
    ``timeout`` the limit in seconds.
    """

    def __init__(self, what: str, server: str, timeout: float) -> None:
        self.what = what
        self.server = server
        self.timeout = timeout
        super().__init__(
            f"{what} got no answer from {server} within {timeout:g} s; the request was "
            "cancelled (give timeout= more seconds to wait longer)"
        )


def checked_timeout(timeout: float | None) -> float | None:
    """``timeout`` as given, once it is a positive number of seconds or None (no limit).
    Raises ``ValueError`` otherwise."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds or None, not {timeout!r}")
    return float(timeout)


async def within(
    coroutine: Coroutine[Any, Any, T], timeout: float | None, what: str, server: str
) -> T:
    """The result of ``coroutine``, run as a task of its own so that past ``timeout`` seconds
    it can be cancelled cleanly (waiting a moment for the cancellation to reach the server);
    then ``RequestTimedOut``. A cancellation of the caller cancels the request too."""
    task = asyncio.ensure_future(coroutine)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.wait({task}, timeout=CANCEL_WAIT_S)
        raise
    if task in done:
        return task.result()
    task.cancel()
    await asyncio.wait({task}, timeout=CANCEL_WAIT_S)
    if task.done() and not task.cancelled():
        return task.result()  # the answer came as the limit passed: it is the answer
    assert timeout is not None  # without a limit, wait() returns only once the task is done
    raise RequestTimedOut(what, server, timeout)


__all__ = [
    "CANCEL_WAIT_S",
    "REQUEST_TIMEOUT_S",
    "RequestTimedOut",
    "checked_timeout",
    "within",
]
