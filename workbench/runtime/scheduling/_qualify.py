"""Which calls may run inline, on a thread that waits for them or in a lane, rather than on the
runtime loop: those that need nothing but their body."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.runtime.steps import MAX_NESTING_DEPTH

if TYPE_CHECKING:
    from workbench.declare import Tool
    from workbench.runtime.call import Call


def tool_if_inline(call: Call, *, here: bool = False) -> Tool | None:
    """The tool, when this call can run on the waiting thread: a plain function that needs no
    person, no hook, no fault, no stream and no subscriber; else None (the loop runs it).

    ``here``: the thread asking is the one blocked in ``call.wait()``, which may also run an
    ``async def`` body on a loop of its own. A lane or a worker never does: many coroutines
    share the runtime loop, where one lane would run them one after another."""
    registry = call.registry
    name = call.tool_name
    if (
        not isinstance(name, str)
        or call.dry_run
        or call.depth > MAX_NESTING_DEPTH
        or call.sheet.log.subscribed
        or registry.policy.hooked
    ):
        return None
    tool = registry.get(name)
    if (
        tool is None
        or tool.kind not in (("function", "coroutine") if here else ("function",))
        or tool.spec.streaming
        or tool.spec.serial
        or registry.policy.permission(name) != "always_allow"
        or registry.policy.faults.waiting(name)
    ):
        return None
    return tool
