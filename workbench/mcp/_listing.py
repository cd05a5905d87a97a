"""A server's list, every page of it, or a plain word on where it stopped and why.

MCP lists (tools, resources, resource templates, prompts) come in pages, each naming the cursor
of the next. A connection follows the cursors to the last page; it stops early only when the
list passes the limit of items asked for (``LIST_ITEMS_MAX`` by default) or when the server
sends a cursor it sent before (which would list the same pages forever). Either way the
``Listing`` says so on ``stopped``, and the connection puts it on its log: nothing is cut
silently.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, TypeVar

T = TypeVar("T")

LIST_ITEMS_MAX = 1_000_000
"""The most items one listing gathers by default (``limit=`` asks for another number)."""


class Listing(list[T], Generic[T]):
    """The items of one of a server's lists, in the server's order: a plain list, and

    - ``complete``: False when the listing stopped before the server's last page;
    - ``stopped``: why it stopped early (None when it is complete);
    - ``pages``: how many pages were read.
    """

    def __init__(self, items: Sequence[T], *, pages: int, stopped: str | None) -> None:
        super().__init__(items)
        self.pages = pages
        self.stopped = stopped

    @property
    def complete(self) -> bool:
        """True when every page of the server's list was read."""
        return self.stopped is None


Page = Any
"""One page of a list result: it has the items and ``next_cursor``."""


def checked_limit(limit: int | None) -> int:
    """``limit`` as given (``LIST_ITEMS_MAX`` for None), once it is a positive integer."""
    if limit is None:
        return LIST_ITEMS_MAX
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive number of items or None, not {limit!r}")
    return limit


async def every_page(
    fetch: Callable[[str | None], Awaitable[Page]],
    items_of: Callable[[Page], Sequence[T]],
    *,
    what: str,
    limit: int = LIST_ITEMS_MAX,
) -> Listing[T]:
    """Every item of a list whose pages ``fetch(cursor)`` gets, up to ``limit`` items; ``what``
    names the items in the stop's reason (``"resources"``)."""
    items: list[T] = []
    seen: set[str] = set()
    cursor: str | None = None
    pages = 0
    while True:
        page = await fetch(cursor)
        pages += 1
        items.extend(items_of(page))
        cursor = page.next_cursor
        if cursor is None:
            return Listing(items[:limit], pages=pages, stopped=_over(items, limit, what))
        if len(items) >= limit:
            return Listing(
                items[:limit],
                pages=pages,
                stopped=(
                    f"stopped at {limit:,} {what} (limit={limit:,}) after {pages:,} pages; the "
                    f"server has more (next cursor {cursor!r}): pass limit= to list more"
                ),
            )
        if cursor in seen:
            return Listing(
                items,
                pages=pages,
                stopped=(
                    f"stopped after {pages:,} pages and {len(items):,} {what}: the server sent "
                    f"the cursor {cursor!r} again, so following it would list the same pages "
                    "forever"
                ),
            )
        seen.add(cursor)


def _over(items: list[Any], limit: int, what: str) -> str | None:
    if len(items) <= limit:
        return None
    return (
        f"stopped at {limit:,} {what} (limit={limit:,}); the server's last page brought "
        f"{len(items):,}: pass limit= to list more"
    )


__all__ = ["LIST_ITEMS_MAX", "Listing", "checked_limit", "every_page"]
