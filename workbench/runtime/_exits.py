"""A tool cannot end the program that called it.

``SystemExit`` (an ``argparse`` error on a model's bad argument, a ``sys.exit()``),
``KeyboardInterrupt`` and ``GeneratorExit`` are meant to end a program or a generator; raised
by a tool's body they would end the person's script, ``asyncio.run``, a lane's thread or the
runtime loop itself. At every place a body runs they become ``ToolExit``, an ordinary
exception, and so the call's error envelope, said on its card.

A real Ctrl-C of the person is not the body's: Python raises it from a signal, on the main
thread, wherever that thread happens to be (inside a body run inline included). Only a
``KeyboardInterrupt`` that code raised with a ``raise`` statement, or any raised off the main
thread (no signal arrives there), is the body's own; a person's still stops their program.
"""

from __future__ import annotations

import opcode
import threading
import types
from collections.abc import Callable, Coroutine, Generator
from typing import Any, TypeVar

EXITS = (SystemExit, KeyboardInterrupt, GeneratorExit)
_RAISE = opcode.opmap["RAISE_VARARGS"]

Value = TypeVar("Value")


class ToolExit(Exception):
    """A tool's body raised an exception meant to end a program (``raised``); it ends the call
    instead."""

    def __init__(self, raised: BaseException) -> None:
        super().__init__(f"{type(raised).__name__}{_args(raised)}")
        self.raised = raised

    @property
    def note(self) -> str:
        """What the card and the envelope's warnings say of it."""
        return (
            f"the tool raised {type(self.raised).__name__}, which would have ended the program "
            "that called it; the call ended with it instead"
        )


def _args(exc: BaseException) -> str:
    return f"({', '.join(map(repr, exc.args))})" if exc.args else "()"


def raised_by_code(exc: BaseException) -> bool:
    """True when ``exc`` was raised by a ``raise`` statement (not by Python on a signal, nor
    thrown into a generator closing)."""
    trace = exc.__traceback__
    if trace is None:
        return True  # never raised yet: made by code
    while trace.tb_next is not None:
        trace = trace.tb_next
    code = trace.tb_frame.f_code.co_code
    at = trace.tb_lasti
    return 0 <= at < len(code) - 1 and code[at] == _RAISE and code[at + 1] != 0


def the_bodys(exc: BaseException) -> bool:
    """True when ``exc`` (one of ``EXITS``) is the body's own, not the person's Ctrl-C nor a
    close this process asked for."""
    if isinstance(exc, SystemExit):
        return True
    if (
        isinstance(exc, KeyboardInterrupt)
        and threading.current_thread() is not threading.main_thread()
    ):
        return True  # no signal is ever delivered to another thread
    return raised_by_code(exc)


def guard(fn: Callable[..., Value], *args: Any, **kwargs: Any) -> Value:
    """``fn(*args, **kwargs)``, its own exits raised as ``ToolExit``."""
    try:
        return fn(*args, **kwargs)
    except EXITS as exc:
        if the_bodys(exc):
            raise ToolExit(exc) from exc
        raise


_NOT_STARTED: Any = object()


async def awaited(body: Coroutine[Any, Any, Value]) -> Value:
    """``await body``, its own exits raised as ``ToolExit`` (a coroutine a task can run)."""
    return await guarded(body)


@types.coroutine
def guarded(
    body: Coroutine[Any, Any, Value], first: Any = _NOT_STARTED
) -> Generator[Any, Any, Value]:
    """Await ``body`` (from the start, or with ``first``, what its first step already awaits),
    its own exits raised as ``ToolExit``; closing this closes it."""
    sent: Any = None
    thrown: BaseException | None = None
    ready = first is not _NOT_STARTED  # a step was taken already: it awaits ``first``
    pending = first
    while True:
        if not ready:
            try:
                pending = body.send(sent) if thrown is None else body.throw(thrown)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            except EXITS as exc:
                if exc is not thrown and the_bodys(exc):
                    raise ToolExit(exc) from exc
                raise
        ready, sent, thrown = False, None, None
        try:
            sent = yield pending
        except GeneratorExit:
            body.close()
            raise
        except BaseException as exc:  # thrown into this await: handed on to the body
            thrown = exc
