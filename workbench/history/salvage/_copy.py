"""Salvaging a damaged history: every row still readable in the file, copied into a new one.

``salvage_into`` reads the damaged file's pages itself (``_btree``: SQLite stops at the first
page it cannot trust), checks each row against the check it was written with, and copies it
into a new history, each row marked with where it came from and what was wrong with it.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench.history.row import CHANGED, check, seal, with_warnings
from workbench.history.salvage._btree import Counts, LooseRow, read_rows


@dataclasses.dataclass(frozen=True)
class SalvageReport:
    """What a salvage did: ``kept`` rows copied into ``path`` (``damaged`` of them with values
    that fail their check or could not be read whole, ``unchecked`` of them written before rows
    carried a check), ``lost`` rows that could not be read at all (counted from the gaps in the
    row numbers the file's structure still shows), and where the ``original`` file now lies,
    byte for byte as it was found. A row whose id the new file already holds (replayed from a
    spill) is not copied twice."""

    path: Path
    original: Path
    kept: int
    damaged: int
    unchecked: int
    lost: int

    def __str__(self) -> str:
        parts = [f"{self.kept} row(s) were copied into {self.path.name}"]
        if self.damaged:
            parts.append(f"{self.damaged} of them damaged (each says how in its warnings)")
        if self.unchecked:
            parts.append(f"{self.unchecked} of them written without a check to verify")
        parts.append(f"{self.lost} row(s) could not be read and are lost")
        return f"{', '.join(parts)}; the original is kept as {self.original.name}"


def salvage_into(
    source: Path,
    conn: sqlite3.Connection,
    *,
    stored: Sequence[str],
    kinds: Mapping[str, str],
    insert: str,
    new_path: Path,
    batch: int = 500,
) -> SalvageReport:
    """Copy every readable row of the history file ``source`` into ``conn`` with ``insert``
    (whose parameters are the ``stored`` columns, the last being the JSON document), each row
    marked with a warning saying where it came from and what was wrong with it."""
    document_column = stored[-1]
    counts = Counts()
    kept = damaged = unchecked = 0
    first_sealed: int | None = None  # rows after it were all written with a check
    pending: list[list[Any]] = []

    def write() -> int:
        before = conn.total_changes
        with conn:
            conn.executemany(insert, pending)
        pending.clear()
        return conn.total_changes - before

    kind_list = list(kinds.values())

    def verdict_of(row: LooseRow) -> str:
        scalars = [row.values.get(name) for name in kinds]
        return check(kind_list, scalars, row.values.get(document_column))

    def sound(row: LooseRow) -> bool:
        return not row.problems and verdict_of(row) != "changed"

    for row in read_rows(source, "calls", ["seq", *stored], counts, sound):
        problems = list(row.problems)
        scalars = [row.values.get(name) for name in kinds]
        verdict = verdict_of(row)
        if verdict == "changed":
            problems.append(CHANGED)
        elif verdict == "ok" and (first_sealed is None or row.rowid < first_sealed):
            first_sealed = row.rowid
        elif verdict == "unchecked" and first_sealed is not None and row.rowid > first_sealed:
            problems.append("its check is gone although older rows have one: it was damaged")
        warnings = [f"salvaged from the damaged history {source.name}", *problems]
        if verdict == "unchecked" and not problems:
            warnings.append("written without a check, so its values could not be verified")
            unchecked += 1
        damaged += bool(problems)
        document = with_warnings(row.values.get(document_column), warnings)
        pending.append([*scalars, seal(list(kinds.values()), scalars, document)])
        if len(pending) >= batch:
            kept += write()
    if pending:
        kept += write()
    return SalvageReport(new_path, source, kept, damaged, unchecked, counts.lost)
