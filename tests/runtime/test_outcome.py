"""A result JSON cannot hold is one error kind, ``invalid_output``, however it is unrepresentable
(bytes that are not text, an integer too long to write, nesting too deep) and however the body
gave it back (returned, returned by an ``async def``, a generator's return value, an envelope
built around it, a custom tool's result supplied by a person), on every driver."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

import workbench as wb


def deep(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


VALUES: dict[str, Callable[[], Any]] = {
    "bytes": lambda: b"\xff\xfe",
    "bytes_inside": lambda: {"blob": [b"\x80"]},
    "long_integer": lambda: 10 ** (sys.get_int_max_str_digits() + 10),
    "deep": lambda: deep(5_000),
}


def registry_returning(tmp_path, make: Callable[[], Any]) -> wb.Registry:
    tools = wb.Registry(history=tmp_path / "history.sqlite", artifacts=tmp_path / "artifacts")

    @tools.tool
    def plain() -> object:
        """Return the value."""
        return make()

    @tools.tool
    async def awaited() -> object:
        """Return the value from a coroutine."""
        return make()

    @tools.tool
    def generated():  # type: ignore[no-untyped-def]
        """Stream, then return the value."""
        yield "working\n"
        return make()

    @tools.tool
    def wrapped() -> object:
        """Return an envelope built around the value."""
        return wb.success("wrapped", make())

    @tools.tool(ownership="custom")
    def supplied() -> object:
        """A person supplies the result."""

    return tools


@pytest.mark.parametrize("value", sorted(VALUES))
def test_every_unrepresentable_result_is_invalid_output(tmp_path, value):
    tools = registry_returning(tmp_path, VALUES[value])
    calls = [tools.invoke(name) for name in ("plain", "awaited", "generated", "wrapped")]
    calls.append(tools.invoke("plain", subscriber=lambda event: None))  # on the runtime loop
    calls += tools.invoke_many([("plain", {})])  # in a lane
    supplied = tools.invoke("supplied")
    supplied.fulfil(VALUES[value]())
    calls.append(supplied)
    kinds = {(call.tool_name, call.wait(30).error.kind.value) for call in calls}  # type: ignore[union-attr]
    assert {kind for _, kind in kinds} == {"invalid_output"}, kinds
    for call in calls:
        assert call.envelope is not None
        assert "returned a result that" in call.envelope.error.message  # type: ignore[union-attr]
        assert call.traceback is None or "Traceback" not in call.receipt  # type: ignore[operator]
    tools.history.close()
