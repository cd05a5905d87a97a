"""Running a tool body: coroutines on the loop, blocking functions and generators on workers.

Generators stream: each yielded string becomes a ``tool.output`` event; the value a sync
generator returns is the result, and for async generators (which cannot return a value) the last
yielded non-string value is.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

from workbench.context import ToolContext
from workbench.runtime.steps._exits import EXITS, ToolExit, guard, the_bodys
from workbench.runtime.threads import WORKERS

if TYPE_CHECKING:
    from workbench.declare import Tool
    from workbench.runtime.call import Call


CURRENT_CALL: contextvars.ContextVar[Call | None] = contextvars.ContextVar(
    "workbench_current_call", default=None
)


def current_call() -> Call | None:
    """The call whose tool body is running here (its task, or its worker thread), if any: the
    parent of any call that body makes."""
    return CURRENT_CALL.get()


def make_context(call: Call) -> ToolContext:
    """The ToolContext a body of this call receives."""
    registry = call.registry
    context = ToolContext(
        call_id=call.id,
        tool_name=call.tool_name,
        emit=call.sheet.write_output,
        token=call.token,
        artifacts=call.sheet.output.sink,
        secrets=registry.secrets,
        invoke=lambda name, args=None: registry.invoke(name, args, parent=call),
        report=call.sheet.report,
    )
    call.sheet.control.cleanups.append(context.end_processes)
    return context


def bind_arguments(
    tool: Tool, call: Call, arguments: dict[str, Any]
) -> tuple[list[Any], dict[str, Any]]:
    """The positional and keyword arguments the body is called with: ``arguments`` bound to
    its signature, with the call's ``ToolContext`` where the body asks for one."""
    args, kwargs = tool.bind(arguments)
    if tool.context_param == "__positional__":
        args = [*args, make_context(call)]
    elif tool.context_param is not None:
        kwargs[tool.context_param] = make_context(call)
    return args, kwargs


class WorkerBody:
    """A body running on a worker thread; ``finished`` resolves when the thread is done with
    it, even after the call stopped waiting (a body that ignored cancellation)."""

    def __init__(self) -> None:
        self.finished: concurrent.futures.Future[Any] = concurrent.futures.Future()


def run_body(
    tool: Tool, call: Call, arguments: dict[str, Any]
) -> tuple[Awaitable[Any], WorkerBody | None]:
    """Start the body: an awaitable of its result (awaited inline, so cancelling the call's
    task cancels an async body), and the worker run for thread bodies."""
    fn = tool.fn
    assert fn is not None
    CURRENT_CALL.set(call)
    args, kwargs = bind_arguments(tool, call, arguments)
    if tool.kind == "coroutine":
        return fn(*args, **kwargs), None
    if tool.kind == "async_generator":
        return _drain_async(fn(*args, **kwargs), call), None
    if tool.kind == "generator":
        return on_worker(lambda: _drain_sync(fn(*args, **kwargs), call))
    return on_worker(lambda: guard(fn, *args, **kwargs))


def on_worker(job: Callable[[], Any]) -> tuple[asyncio.Future[Any], WorkerBody]:
    """Run ``job`` on a worker thread, from the running loop: a future of its result on this
    loop, and the worker run (whose ``finished`` resolves when the thread is done with it,
    even after nobody awaits the first)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    run = WorkerBody()

    def deliver(outcome: concurrent.futures.Future[Any]) -> None:
        if future.done():
            return
        exc = outcome.exception()
        if exc is None:
            future.set_result(outcome.result())
        else:
            future.set_exception(exc)

    context = contextvars.copy_context()  # so calls the body makes know their parent

    def work() -> None:
        try:
            run.finished.set_result(context.run(job))
        except BaseException as exc:  # the body's failure is the call's result, not ours
            run.finished.set_exception(exc)

    def reply() -> None:
        if not loop.is_closed():
            try:
                loop.call_soon_threadsafe(deliver, run.finished)
            except RuntimeError:
                pass  # the loop closed meanwhile; nobody is waiting

    WORKERS.submit(work, reply)
    return future, run


def _drain_sync(generator: Iterator[Any], call: Call) -> Any:
    result = None
    try:
        while True:
            if call.token.cancelled:
                generator.close()  # type: ignore[attr-defined]
                return result
            item = guard(next, generator)
            if isinstance(item, str):
                call.sheet.write_output(item, "stdout")
            else:
                result = item
    except StopIteration as stop:
        return stop.value if stop.value is not None else result


async def _drain_async(generator: AsyncIterator[Any], call: Call) -> Any:
    result = None
    try:
        async for item in generator:
            if isinstance(item, str):
                call.sheet.write_output(item, "stdout")
            else:
                result = item
    except EXITS as exc:
        if the_bodys(exc):
            raise ToolExit(exc) from exc
        raise
    return result
