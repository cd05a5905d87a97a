"""The entries a process holds outside SQLite while SQLite will not take them, in order: in its
spill (on disk, so a killed process loses none of them), or, while no disk takes even that, in
memory. Bounded: past ``limit`` bytes, ``hold`` turns entries away and their writers wait.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from workbench.history.row import STORED, reason, with_warnings
from workbench.history.spill import Spill, lines_of
from workbench.history.store._insert import ROW, WARN


class Held:
    """What one process holds outside SQLite for one history: its spill (None in memory)
    and the entries held in memory after the spill's."""

    def __init__(self, spill: Spill | None, limit: int) -> None:
        self.spill = spill
        self.limit = limit
        self.forget()

    def forget(self) -> None:
        """Hold nothing (SQLite took it all, or in a forked child, the parent's is its own)."""
        self._memory: list[list[Any]] = []
        self._memory_bytes = 0
        self.why: str | None = None
        """Why SQLite did not take them, as said when the first was held."""

    def __bool__(self) -> bool:
        return bool(self._memory) or (self.spill is not None and self.spill.count > 0)

    @property
    def in_memory(self) -> int:
        """Entries held in memory only (lost if the process ends)."""
        return len(self._memory)

    def entries(self) -> Iterator[list[Any]]:
        """Every entry held, oldest first."""
        spilled: Iterable[list[Any]] = self.spill.entries() if self.spill is not None else ()
        return itertools.chain(spilled, list(self._memory))

    def row_count(self) -> int:
        """Rows (not updates) held."""
        return sum(1 for entry in self.entries() if entry[0] == ROW)

    def rows(self) -> list[dict[str, Any]]:
        """The rows held, as stored values by column, their held updates applied to their
        warnings (what a read in this process shows of them)."""
        if not self._memory and (self.spill is None or not self.spill.count):
            return []  # the common case: nothing held, nothing to read
        rows: dict[str, dict[str, Any]] = {}
        for entry in self.entries():
            if entry[0] == ROW and len(entry) == len(STORED) + 1:
                row = dict(zip(STORED, entry[1:], strict=True))
                rows.setdefault(str(row["call_id"]), row)
            elif entry[0] == WARN and str(entry[1]) in rows:
                row = rows[str(entry[1])]
                row["record"] = with_warnings(row["record"], [str(entry[2])])
        return list(rows.values())

    def where(self) -> str:
        """Where the entries are held, in words."""
        places = []
        if self.spill is not None and self.spill.count and self.spill.path is not None:
            places.append(self.spill.path.name)
        if self._memory:
            places.append("memory")
        return " and ".join(places) or "memory"

    def hold(self, entries: list[list[Any]], why: str) -> str | None:
        """Hold ``entries`` after those held already: in the spill, else in memory. Returns
        the sentence their callers are told, or None when there is no room (they wait)."""
        try:
            size = len(lines_of(entries))
        except ValueError:  # no JSON form (a defect upstream): held in memory, still counted
            size = sum(len(repr(entry)) for entry in entries)
        spill_failure: Exception | None = None
        if self.spill is not None and (not self._memory or self.into_spill()):
            if self.spill.size + size > self.limit:
                return None
            try:
                where = self.spill.append(entries)
            except (OSError, ValueError) as exc:  # no disk took them, or they have no JSON form
                spill_failure = exc
            else:
                return (
                    f"history: SQLite did not take the row ({why}); it is held in {where.name} "
                    "and written to the history as soon as SQLite takes it"
                )
        if self._memory_bytes + size > self.limit:
            return None
        self._memory += entries
        self._memory_bytes += size
        spill_said = (
            ""
            if spill_failure is None
            else f" and the spill could not be written ({reason(spill_failure)})"
        )
        return (
            f"history write failed ({why}){spill_said}; {len(entries)} row(s) are held in "
            "memory only, and are lost if this process ends first: they are written the moment "
            "there is space again"
        )

    def into_spill(self) -> bool:
        """Move the entries held in memory into the spill (order kept); True once none is
        left in memory."""
        if not self._memory:
            return True
        if self.spill is None:
            return False
        try:
            self.spill.append(self._memory)
        except (OSError, ValueError):
            return False
        self._memory, self._memory_bytes = [], 0
        return True

    def taken(self) -> None:
        """SQLite took every entry held: the spill is emptied, memory let go."""
        if self.spill is not None:
            self.spill.empty()
        self.forget()
