"""Collapsed records: what compaction leaves of an old success when one line must do.

A family's compactor collapses a success it has nothing left to shrink into this shape (a listing
at step 1, any success at step 4 of ``wb.compact``)::

    {"kind": "compacted", "family": "command", "line": "shell_exec: command exited with status 0
     (stdout: /artifacts/call_1/stdout.log)", "stdout_artifact": 0}

``family`` names the family the record came from; ``line`` is the whole receipt, chosen by that
family (``<N> entries in <path>`` for a listing, ``tool_name: summary_text`` with the handles and
artifact paths it kept for the others); every handle (``pid``, ``log_file``, ``*_id``, ...) and
artifact reference (``*_artifact``) of the original result stays beside it under its own name,
so code reading ``result["pid"]`` before compaction reads the same after. The envelope keeps its
``tool_name``, ``status``, ``summary_text``, ``artifacts`` and ``call_id``; its warnings go.

Receipt: ``line``, verbatim. A collapsed record is never collapsed or shrunk again.
"""

from __future__ import annotations

from typing import Any, ClassVar

from workbench.envelope import Envelope
from workbench.families import _base
from workbench.families.json import JsonFamily


def is_compacted_result(result: Any) -> bool:
    """True for a collapsed record's result."""
    return (
        _base.has_kind(result, _base.KIND)
        and isinstance(result.get("family"), str)
        and isinstance(result.get("line"), str)
    )


class CompactedFamily:
    """Records collapsed by compaction; rendered as their one line."""

    name: ClassVar[str] = "compacted"

    def project(self, completed: _base.Completed, budgets: _base.Budgets) -> Envelope:
        # Only compaction makes these records; a tool that returns one is any other JSON value.
        return JsonFamily().project(completed, budgets)

    def render(self, envelope: Envelope, budgets: _base.Budgets) -> str:
        return _base.finish([envelope.result["line"]], envelope, budgets)

    def compact(self, envelope: Envelope, step: int, budgets: _base.Budgets) -> Envelope | None:
        return None


COMPACTED: _base.Family = CompactedFamily()
