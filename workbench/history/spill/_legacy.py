"""What the previous version left beside a history, written into SQLite once and then retired:
its per-process commit logs (``<history>.log-<16 hex>``), its shared journal
(``<history>.journal.jsonl``) and the journal's stand-in in the private directory
(``journal-<key>.jsonl``, each line signed with the key kept there).

Each is read a line at a time (a file of any size in bounded memory) and each row is taken only
when it is whole and passes the check sealed into it (the previous version sealed every row);
a line that does not is named, and its file kept aside (``.unreplayed``; a stand-in with
unsigned lines as ``.unverified``). A commit log whose lock is held belongs to a live process
of the previous version, which writes it itself. Names are matched exactly: an export or
another history whose name merely begins like a log's is never touched.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import hmac
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from workbench.history.row import KIND_LIST, STORED, check, reason
from workbench.history.spill._format import Entry
from workbench.history.spill._places import Place, Refused, open_checked, places, retire

Kind = Literal["log", "journal", "stand-in"]
_LOG = re.compile(r"\.log-[0-9a-f]{16}")
_KEY_NAME = "journal.key"
_ASIDE: dict[Kind, str] = {
    "log": ".unreplayed",
    "journal": ".unreplayed",
    "stand-in": ".unverified",
}


@dataclasses.dataclass
class Legacy:
    """One file the previous version left, locked by this process while it is read."""

    place: Place
    name: str
    fd: int
    kind: Kind
    key: bytes | None = None  # the stand-in's signing key
    problems: list[str] = dataclasses.field(default_factory=list)
    rows: int = 0  # whole rows read so far

    @property
    def path(self) -> Path:
        """Where the file is."""
        return self.place.directory / self.name

    def entries(self) -> Iterator[Entry]:
        """Each whole row that passes its check, as a spill entry; the rest named."""
        handle = os.fdopen(os.dup(self.fd), "rb")
        with handle:
            number = 0
            for line in handle:
                number += 1
                if not line.endswith(b"\n"):
                    self.problems.append(
                        f"{self.name} ends in a torn line (its process ended inside the write; "
                        "that call never learned it ended); skipped"
                    )
                    break
                if not line.strip():
                    continue
                values = self._values(line, number)
                if values is None:
                    continue
                if (
                    len(values) != len(STORED)
                    or not isinstance(values[0], str)
                    or (check(KIND_LIST, values[:-1], values[-1]) != "ok")
                ):
                    self._bad(number)
                    continue
                self.rows += 1
                yield ["row", *values]

    def _values(self, line: bytes, number: int) -> list[Any] | None:
        if self.kind == "log":
            head, tab, document = line[:-1].partition(b"\t")
            try:
                if not tab:
                    row = json.loads(line)
                    return [row.get(name) for name in STORED] if isinstance(row, dict) else []
                scalars = json.loads(head)
                return [*scalars, document.decode("utf-8")] if isinstance(scalars, list) else []
            except (ValueError, RecursionError):
                return []
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            return []
        if self.kind == "stand-in":
            signed = row.get("row") if isinstance(row, dict) else None
            mac = row.get("hmac") if isinstance(row, dict) else None
            if not (
                isinstance(signed, dict) and isinstance(mac, str) and self._signed(signed, mac)
            ):
                self.problems.append(
                    f"{self.name} line {number} was not written by this user's workbench (its "
                    "signature does not match); not written"
                )
                return None
            row = signed
        return [row.get(name) for name in STORED] if isinstance(row, dict) else []

    def _signed(self, row: dict[str, Any], mac: str) -> bool:
        if self.key is None:
            return False
        text = json.dumps(row, ensure_ascii=True, sort_keys=True).encode()
        return hmac.compare_digest(mac, hmac.new(self.key, text, hashlib.sha256).hexdigest())

    def _bad(self, number: int) -> None:
        self.problems.append(f"{self.name} line {number} is not a whole row; skipped")

    @property
    def damaged(self) -> bool:
        """True when a row in it was not whole or its signature did not hold."""
        return any("not a whole row" in p or "signature does not" in p for p in self.problems)

    def retire(self) -> str | None:
        """Remove the file once its rows are written; one that held lines not written is kept
        aside for a person (its new name returned). A file in which not one line was a row is
        no file of the previous version's: it is left as it is, and named."""
        if self.damaged and not self.rows:
            self.problems[:] = [
                f"{self.path} is at a name the previous version used but holds none of its "
                "rows; it is left alone"
            ]
            self.release()
            return None
        fd, self.fd = self.fd, -1
        aside = _ASIDE[self.kind] if self.damaged else None
        return retire(self.place, self.name, fd, aside, self.problems, same_file=False)

    def release(self) -> None:
        """Let go of the file (close it; its lock goes with it) without retiring it."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def legacy(database: Path) -> tuple[list[Legacy], list[str]]:
    """The files the previous version left for the history at ``database`` (each locked by
    this process), and a sentence for each one left alone."""
    beside, private = places(database)
    found: list[Legacy] = []
    refused: list[str] = []
    key = private.prefix.removeprefix("history-")
    wanted: list[tuple[Place, Kind, re.Pattern[str]]] = [
        (beside, "log", re.compile(re.escape(beside.prefix) + _LOG.pattern)),
        (beside, "journal", re.compile(re.escape(beside.prefix + ".journal.jsonl"))),
        (private, "stand-in", re.compile(re.escape(f"journal-{key}.jsonl"))),
    ]
    for place, kind, pattern in wanted:
        try:
            with place.opened(create=False) as dfd:
                for entry in sorted(os.scandir(dfd), key=lambda entry: entry.name):
                    if not pattern.fullmatch(entry.name):
                        continue
                    try:
                        taken = _taken(place, entry.name, dfd, kind)
                    except Refused as exc:
                        refused.append(str(exc))
                        continue
                    except FileNotFoundError:
                        continue  # retired by another process meanwhile
                    if taken is not None:
                        found.append(taken)
        except FileNotFoundError:
            continue
        except OSError as exc:
            refused.append(f"{place.directory} could not be looked in ({reason(exc)})")
    return found, refused


def _taken(place: Place, name: str, dfd: int, kind: Kind) -> Legacy | None:
    fd = open_checked(name, dfd, place.directory)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None  # a live process of the previous version writes it itself
    key = None
    if kind == "stand-in":
        with contextlib.suppress(OSError):  # no key: every line is named as unsigned
            key_fd = open_checked(_KEY_NAME, dfd, place.directory)
            try:
                key = os.read(key_fd, 64)
            finally:
                os.close(key_fd)
    return Legacy(place, name, fd, kind, key)
