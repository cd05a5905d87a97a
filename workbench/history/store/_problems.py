"""What went wrong with a history, each said once, where a person sees it: in ``problems``
and as a ``HistoryWarning`` whose sentence says where the rows went."""

from __future__ import annotations

import dataclasses
import time
import warnings
from typing import Literal

from workbench.history.salvage import SalvageReport

ProblemKind = Literal["write", "spill", "corrupt", "replay", "decode", "callback"]


class HistoryWarning(RuntimeWarning):
    """Something went wrong with the history; the sentence says where the rows went."""


@dataclasses.dataclass(frozen=True)
class HistoryProblem:
    """One thing that went wrong: when, what kind, the sentence a person reads, and the calls
    it touched."""

    at: float
    kind: ProblemKind
    message: str
    call_ids: tuple[str, ...] = ()
    salvage: SalvageReport | None = None
    """For a damaged file: how many rows were kept and lost, and where the original lies."""


@dataclasses.dataclass(frozen=True)
class HistoryHealth:
    """A small summary of the history's state for a status line."""

    path: str
    ok: bool
    problems: int
    held_rows: int
    """Rows this process holds outside SQLite for now (in its spill, or in memory)."""
    moved_aside: tuple[str, ...]
    last_problem: str | None

    def __str__(self) -> str:
        if self.ok:
            return f"history {self.path}: ok"
        return (
            f"history {self.path}: {self.problems} problem(s), {self.held_rows} row(s) "
            f"held until SQLite takes them; last: {self.last_problem}"
        )


class Problems(list[HistoryProblem]):
    """The problems of one history, oldest first; ``add`` also warns."""

    def add(
        self,
        kind: ProblemKind,
        message: str,
        call_ids: tuple[str, ...] = (),
        salvage: SalvageReport | None = None,
    ) -> str:
        """Record one problem and warn with its sentence; returns the sentence."""
        self.append(HistoryProblem(time.time(), kind, message, call_ids, salvage))
        warnings.warn(message, HistoryWarning, stacklevel=3)
        return message
