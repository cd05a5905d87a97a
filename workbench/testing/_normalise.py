"""Volatile parts of a receipt or canonical record, replaced by stable placeholders.

A snapshot must not change between two runs of the same call: call ids, durations and
timestamps, process ids and temporary directories do. ``normalise_text`` rewrites them in text;
``normalise_record`` rewrites the values of volatile keys in a canonical record first (so a
duration stays a key with a placeholder rather than vanishing), then its strings.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

CALL_ID = re.compile(r"\bcall_[0-9a-f]{6,}\b")
UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
TIMESTAMP = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?\b"
)
DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b(?=[\s.,;)\]]|$)")
VOLATILE_KEY = re.compile(
    r"(?:^|_)(?:duration|elapsed|started|ended|finished|timestamp|time|pid|pgid)(?:_|$)"
)
JSON_MEMBER = re.compile(r'"([A-Za-z0-9_]+)"(\s*:\s*)(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"[^"\\]*")')


def _temp_roots(extra: Iterable[str | Path]) -> list[tuple[re.Pattern[str], str]]:
    roots = [(str(Path(path)), "<tmp_path>") for path in extra]
    temp = re.escape(str(Path(tempfile.gettempdir()).resolve()))
    generic = rf"{temp}/(?:pytest-of-[^/\s]+/pytest-\d+/[^/\s\"']+|[^/\s\"']+)"
    patterns = [(re.compile(re.escape(root)), label) for root, label in roots]
    patterns.append((re.compile(generic), "<tmp>"))
    if tempfile.gettempdir() != str(Path(tempfile.gettempdir()).resolve()):
        raw = re.escape(tempfile.gettempdir())
        patterns.append((re.compile(rf"{raw}/[^/\s\"']+"), "<tmp>"))
    return patterns


def normalise_text(text: str, *, paths: Iterable[str | Path] = ()) -> str:
    """``text`` with call ids, uuids, timestamps, durations, temporary paths and the values of
    volatile JSON members (``"duration_ms": 35``) replaced.

    ``paths`` are directories of this run (a test's ``tmp_path``) shown as ``<tmp_path>``."""
    for pattern, label in _temp_roots(paths):
        text = pattern.sub(label, text)
    text = JSON_MEMBER.sub(_volatile_member, text)
    text = CALL_ID.sub("call_<id>", text)
    text = UUID.sub("<uuid>", text)
    text = TIMESTAMP.sub("<timestamp>", text)
    return DURATION.sub("<duration>", text)


def _volatile_member(match: re.Match[str]) -> str:
    key, colon, _value = match.groups()
    return f'"{key}"{colon}"<volatile>"' if VOLATILE_KEY.search(key) else match.group(0)


def normalise_record(value: Any, *, paths: Iterable[str | Path] = ()) -> Any:
    """A copy of ``value`` (a canonical record) with volatile keys' values and every string
    normalised."""
    roots = list(paths)
    if isinstance(value, Mapping):
        return {
            key: "<volatile>"
            if isinstance(key, str) and VOLATILE_KEY.search(key) and value[key] is not None
            else normalise_record(item, paths=roots)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [normalise_record(item, paths=roots) for item in value]
    if isinstance(value, str):
        return normalise_text(value, paths=roots)
    return value
