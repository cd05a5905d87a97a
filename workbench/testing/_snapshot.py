"""Receipt snapshots: what a call gave the model, stored beside the test and compared.

A snapshot file holds the tool, its arguments, the receipt and the canonical record, normalised
(see ``_normalise``) so that two runs of the same call give the same file. A difference fails the
test with a unified diff; ``pytest --wb-update`` writes the files instead.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.envelope import Envelope
from workbench.registry import Registry
from workbench.runtime import Call
from workbench.testing._normalise import normalise_record, normalise_text

UPDATE_HINT = "run pytest with --wb-update to accept it"


class SnapshotMismatch(AssertionError):
    """A receipt or canonical record differs from its snapshot (the message holds the diff)."""


def render(call: Call, envelope: Envelope, *, paths: Iterable[str | Path] = ()) -> str:
    """The snapshot text of one finished call."""
    roots = list(paths)
    arguments = normalise_record(
        call.raw_args if call.arguments is None else call.arguments, paths=roots
    )
    canonical = normalise_record(envelope.canonical(), paths=roots)
    receipt = normalise_text(call.receipt or "", paths=roots)
    return "\n".join(
        [
            f"tool: {call.tool_name}",
            f"arguments: {json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)}",
            "--- receipt",
            receipt.rstrip("\n"),
            "--- canonical",
            json.dumps(canonical, ensure_ascii=False, sort_keys=True, indent=2, default=str),
            "",
        ]
    )


@dataclass
class ReceiptSnapshot:
    """Runs or takes a call and compares it with ``directory/<stem>[-n].txt``.

    ``snapshot(tools, "greet", {"name": "Ada"})`` invokes and waits; ``snapshot(call)`` takes a
    call already started. Each use in one test gets the next file (``-2``, ``-3``, ...) unless
    ``name=`` is given. Returns the envelope."""

    directory: Path
    stem: str
    update: bool = False
    paths: tuple[Path, ...] = ()
    timeout: float = 60.0
    written: list[Path] = field(default_factory=list)
    _count: int = 0

    def __call__(
        self,
        target: Registry | Call,
        tool: str | None = None,
        args: Mapping[str, Any] | str | None = None,
        *,
        name: str | None = None,
    ) -> Envelope:
        __tracebackhide__ = True
        if isinstance(target, Registry):
            if tool is None:
                raise TypeError("receipt_snapshot(tools, name, args) needs the tool's name")
            call = target.invoke(tool, args)
        else:
            call = target
        envelope = call.wait(timeout=self.timeout)
        self.check(render(call, envelope, paths=self.paths), name=name)
        return envelope

    def path_for(self, name: str | None = None) -> Path:
        """Where the next snapshot of this test lives."""
        if name is None:
            self._count += 1
            name = self.stem if self._count == 1 else f"{self.stem}-{self._count}"
        return self.directory / f"{_safe(name)}.txt"

    def check(self, text: str, *, name: str | None = None) -> None:
        """Compare ``text`` with its snapshot, or write it under ``--wb-update``."""
        __tracebackhide__ = True
        path = self.path_for(name)
        if self.update:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                self.written.append(path)
            return
        if not path.exists():
            raise SnapshotMismatch(f"no receipt snapshot at {path}; {UPDATE_HINT}")
        stored = path.read_text(encoding="utf-8")
        if stored == text:
            return
        diff = difflib.unified_diff(
            stored.splitlines(), text.splitlines(), f"{path.name} (stored)", "this run", lineterm=""
        )
        raise SnapshotMismatch(
            f"receipt snapshot {path.name} differs; {UPDATE_HINT}\n" + "\n".join(diff)
        )


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "snapshot"
