"""Running the SDK's streamable HTTP app under uvicorn, on a socket bound before it starts.

Binding first is how ``port=0`` works: the port is known before uvicorn runs, and the URL is
announced only once uvicorn accepts connections. ``stop`` may be called from any thread.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    import uvicorn
    from mcp.server.lowlevel import Server

GRACEFUL_SHUTDOWN_S = 3.0
"""How long a stopping server lets open streams finish before it closes them."""


class HttpRunner:
    """One uvicorn server for one MCP ``Server``, on ``host``:``port`` (0: a free port)."""

    def __init__(self, server: Server[Any], *, host: str, port: int) -> None:
        self._app = server.streamable_http_app(host=host)
        self._socket = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        bound_port = self._socket.getsockname()[1]
        shown_host = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown_host}:{bound_port}/mcp"
        self._uvicorn: uvicorn.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = False

    async def run(self, on_ready: Callable[[str], object] | None = None) -> None:
        """Serve until ``stop()`` or cancellation; ``on_ready(url)`` once connections are
        accepted."""
        import uvicorn

        config = uvicorn.Config(
            self._app,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=int(GRACEFUL_SHUTDOWN_S),
        )
        server = uvicorn.Server(config)
        self._uvicorn = server
        self._loop = asyncio.get_running_loop()
        if self._stopping:
            return
        ended = anyio.Event()
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._serve, server, ended)
                while not server.started and not ended.is_set():
                    await anyio.sleep(0.01)
                if server.started and on_ready is not None:
                    on_ready(self.url)
        finally:
            self._socket.close()
        if not server.started and not self._stopping:
            raise RuntimeError(f"uvicorn did not start serving {self.url}")

    async def _serve(self, server: uvicorn.Server, ended: anyio.Event) -> None:
        try:
            await server.serve(sockets=[self._socket])
        finally:
            ended.set()

    def stop(self) -> None:
        """Ask the server to shut down (from any thread); returns at once."""
        self._stopping = True
        server, loop = self._uvicorn, self._loop
        if server is None or loop is None or loop.is_closed():
            return

        def exit_now() -> None:
            server.should_exit = True

        try:
            loop.call_soon_threadsafe(exit_now)
        except RuntimeError:
            pass  # the loop closed meanwhile: the server is already gone


__all__ = ["HttpRunner"]
