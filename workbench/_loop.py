"""Where calls run: the caller's running event loop, or workbench's private loop thread.

In Jupyter the kernel has a running loop, so a call runs there and the kernel stays free between
cells. In a script there is none, so calls run on one private loop in a daemon thread.
"""

from __future__ import annotations

import asyncio
import threading

_lock = threading.Lock()
_private: asyncio.AbstractEventLoop | None = None


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The loop running in this thread, if any."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def private_loop() -> asyncio.AbstractEventLoop:
    """workbench's own loop, running forever in a daemon thread (started on first use)."""
    global _private
    with _lock:
        if _private is None or _private.is_closed():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=run, name="workbench-loop", daemon=True).start()
            ready.wait()
            _private = loop
        return _private


def on_loop_thread(loop: asyncio.AbstractEventLoop) -> bool:
    """True when the caller is the thread that runs ``loop`` right now."""
    return running_loop() is loop
