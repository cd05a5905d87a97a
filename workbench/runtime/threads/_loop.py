"""Where calls run: workbench's own runtime loop, one per process, in a thread of its own.

Every call runs there, in a notebook and in a script alike, so the Jupyter kernel's loop only hosts
widgets and the person's cells: no tool can freeze the kernel, and ``call.wait()`` can block any
other thread without deadlocking the call it waits for.
"""

from __future__ import annotations

import asyncio
import os
import threading

from workbench.runtime.threads._watchdog import watch

RUNTIME_THREAD_NAME = "workbench-runtime"

_lock = threading.Lock()
_runtime: asyncio.AbstractEventLoop | None = None
_runtime_thread: threading.Thread | None = None


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The loop running in this thread, if any."""
    # asyncio's own low-level form of get_running_loop(), which says None instead of raising:
    # every call asks this on its way in and out, mostly from threads with no loop.
    loop: asyncio.AbstractEventLoop | None = asyncio.events._get_running_loop()
    return loop


def runtime_loop() -> asyncio.AbstractEventLoop:
    """workbench's runtime loop, running forever in a daemon thread started on first use."""
    global _runtime, _runtime_thread
    loop = _runtime
    if loop is not None and not loop.is_closed():
        return loop
    with _lock:
        if _runtime is None or _runtime.is_closed():
            _runtime, _runtime_thread = _start(RUNTIME_THREAD_NAME)
            watch(_runtime)
        return _runtime


def _start(name: str) -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
    """A new loop running forever in a daemon thread named ``name``, once it runs."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        loop.run_forever()

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    ready.wait()
    return loop, thread


_dedicated: dict[str, asyncio.AbstractEventLoop] = {}


def dedicated_loop(name: str) -> asyncio.AbstractEventLoop:
    """A loop of its own for one long-lived service (an MCP client's sessions), running forever
    in a daemon thread named ``name``, so the runtime loop's tools never delay it."""
    with _lock:
        loop = _dedicated.get(name)
        if loop is None or loop.is_closed():
            loop, _thread = _start(name)
            _dedicated[name] = loop
        return loop


def _forget_in_forked_child() -> None:
    # The loops' threads did not survive the fork: a forked child starts its own on first use.
    global _lock, _runtime, _runtime_thread
    _lock = threading.Lock()
    _runtime = _runtime_thread = None
    _dedicated.clear()


os.register_at_fork(after_in_child=_forget_in_forked_child)


def on_runtime_thread() -> bool:
    """True when the caller runs on the runtime loop's thread (inside a tool's async body)."""
    return _runtime_thread is not None and threading.current_thread() is _runtime_thread


def on_loop_thread(loop: asyncio.AbstractEventLoop) -> bool:
    """True when the caller is the thread that runs ``loop`` right now."""
    return running_loop() is loop


def call_in_loop(loop: asyncio.AbstractEventLoop, action: object, *args: object) -> bool:
    """Run ``action(*args)`` on ``loop``: now when already there, else soon; False when the loop
    is closed (nothing left to tell)."""
    if loop.is_closed():
        return False
    if on_loop_thread(loop):
        action(*args)  # type: ignore[operator]
        return True
    try:
        loop.call_soon_threadsafe(action, *args)  # type: ignore[arg-type]
    except RuntimeError:  # closed between the check and the call
        return False
    return True
