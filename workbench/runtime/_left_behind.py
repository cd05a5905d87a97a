"""Bodies left running: a stopped tool body that ignored cancellation past the registry's grace.

The call ends without such a body, which runs on in its thread (or task) until it returns, its
late result discarded. While no more such bodies of a registry run than it has concurrency
slots, the call's slot is freed at once, so the calls queued behind it start; past that, a body
keeps its slot until it returns, so tools that never let go cannot pile up threads without
bound. The call's card says which, and ``Registry.left_running`` counts them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from workbench.runtime._call import Call

BodyKind = Literal["thread body", "async body"]


def let_go(call: Call, kind: BodyKind, reason: str) -> tuple[bool, str]:
    """Leave the body of ``call`` running while the call ends without it, counted until the
    driver calls ``caught_up()`` of the registry's concurrency limit as it returns. Returns
    True when the call's concurrency slot may be freed now (False: it is kept until then), and
    the sentence for the call's card that says so."""
    limit = call.registry.limits.concurrency
    freed = limit.leave_behind()
    control = call.sheet.control
    control.ignored_cancellation = True
    running = limit.left_behind
    if freed:
        slot = (
            f"its concurrency slot was freed ({running} of this registry's bodies now run past "
            f"their call's end; up to {limit.size} may without keeping their slot)"
        )
    else:
        slot = (
            f"it keeps its concurrency slot until it returns: {running - 1} of this registry's "
            "bodies already run past their call's end, the most it lets go of"
        )
    return freed, (
        f"the tool's {kind} ignored cancellation for {control.grace:g} s; the call ended "
        f"{reason} without it and {slot}; its late result will be discarded"
    )
