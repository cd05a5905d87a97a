"""Docstrings as a model sees them: a summary, and one description per parameter.

Three common styles are read: Google (``Args:``), numpy (``Parameters`` underlined with dashes)
and Sphinx (``:param name:``). Parameter, return and raise sections are taken out of the summary;
every other section (notes, examples) stays, because it is useful to a model too.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Literal

SectionKind = Literal["params", "returns", "raises"]

_GOOGLE_SECTIONS: dict[str, SectionKind] = {
    "args": "params",
    "arguments": "params",
    "params": "params",
    "parameters": "params",
    "keyword args": "params",
    "keyword arguments": "params",
    "other parameters": "params",
    "returns": "returns",
    "return": "returns",
    "yields": "returns",
    "yield": "returns",
    "raises": "raises",
    "raise": "raises",
    "exceptions": "raises",
}
_NUMPY_UNDERLINE = re.compile(r"\s*-{3,}\s*")
_GOOGLE_ENTRY = re.compile(r"(\*{0,2}[A-Za-z_]\w*)\s*(?:\([^)]*\))?\s*:(?!:)\s*(.*)")
_NUMPY_ENTRY = re.compile(r"(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?::.*)?")
_SPHINX_FIELD = re.compile(
    r":(param|parameter|arg|argument|key|keyword|returns?|raises?)\b([^:]*):\s*(.*)"
)
_SPHINX_OTHER = re.compile(r":(type|rtype|vartype|ivar|var|cvar)\b[^:]*:")


@dataclass(frozen=True)
class Docstring:
    """A parsed docstring: what the tool does, and what each parameter means."""

    summary: str = ""
    params: dict[str, str] = field(default_factory=dict)
    returns: str | None = None


def parse_docstring(doc: str | None) -> Docstring:
    """Parse a Google, numpy or Sphinx docstring; plain text becomes the summary unchanged.

    Parameter names lose leading stars (``*args`` → ``args``); descriptions spanning several
    lines are joined with spaces.
    """
    if doc is None or not doc.strip():
        return Docstring()
    lines = inspect.cleandoc(doc).splitlines()
    if any(_SPHINX_FIELD.match(line.strip()) for line in lines):
        return _parse_sphinx(lines)
    return _parse_sections(lines)


@dataclass
class _Section:
    kind: SectionKind
    style: Literal["google", "numpy"]
    lines: list[str] = field(default_factory=list)


def _parse_sections(lines: list[str]) -> Docstring:
    summary: list[str] = []
    sections: list[_Section] = []
    current: _Section | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        numpy_kind = _numpy_header(lines, index)
        google_kind = _GOOGLE_SECTIONS.get(line.strip().rstrip(":").lower())
        if numpy_kind is not None:
            current = _Section(numpy_kind, "numpy")
            sections.append(current)
            index += 2
            continue
        if google_kind is not None and _indent(line) == 0 and line.rstrip().endswith(":"):
            current = _Section(google_kind, "google")
            sections.append(current)
        elif current is not None and _ends_section(current, lines, index):
            current = None
            summary.append(line)
        elif current is not None:
            current.lines.append(line)
        else:
            summary.append(line)
        index += 1
    return _assemble(summary, sections)


def _numpy_header(lines: list[str], index: int) -> SectionKind | None:
    if index + 1 >= len(lines) or not _NUMPY_UNDERLINE.fullmatch(lines[index + 1]):
        return None
    return _GOOGLE_SECTIONS.get(lines[index].strip().lower())


def _ends_section(section: _Section, lines: list[str], index: int) -> bool:
    line = lines[index]
    if not line.strip() or _indent(line) > 0:
        return False
    if section.style == "numpy":
        # numpy entries start at column 0; only another underlined header ends the section.
        return index + 1 < len(lines) and bool(_NUMPY_UNDERLINE.fullmatch(lines[index + 1]))
    return True


def _assemble(summary: list[str], sections: list[_Section]) -> Docstring:
    params: dict[str, str] = {}
    returns: list[str] = []
    for section in sections:
        if section.kind == "params":
            params.update(_entries(section))
        elif section.kind == "returns":
            returns.append(_join(section.lines))
    joined_returns = "\n".join(text for text in returns if text)
    return Docstring(
        summary="\n".join(summary).strip(),
        params=params,
        returns=joined_returns or None,
    )


def _entries(section: _Section) -> dict[str, str]:
    content = [line for line in section.lines if line.strip()]
    if not content:
        return {}
    base = min(_indent(line) for line in content)
    pattern = _GOOGLE_ENTRY if section.style == "google" else _NUMPY_ENTRY
    entries: dict[str, list[str]] = {}
    names: list[str] = []
    for line in content:
        match = pattern.fullmatch(line.strip()) if _indent(line) == base else None
        if match is not None:
            names = [name.strip().lstrip("*") for name in match.group(1).split(",")]
            first = match.group(2).strip() if section.style == "google" else ""
            for name in names:
                entries[name] = [first] if first else []
        else:
            for name in names:
                entries[name].append(line.strip())
    return {name: _join(parts) for name, parts in entries.items()}


def _parse_sphinx(lines: list[str]) -> Docstring:
    summary: list[str] = []
    params: dict[str, list[str]] = {}
    returns: list[str] | None = None
    target: list[str] | None = None
    for line in lines:
        stripped = line.strip()
        match = _SPHINX_FIELD.match(stripped)
        if match is not None:
            role, spec, text = match.groups()
            target = [text] if text else []
            if role.startswith("return"):
                returns = target
            elif not role.startswith("raise") and spec.split():
                params[spec.split()[-1].lstrip("*")] = target
        elif _SPHINX_OTHER.match(stripped):
            target = []
        elif target is not None and (_indent(line) > 0 or not stripped):
            target.append(stripped)
        elif target is None:
            summary.append(line)
        else:
            target = None
            summary.append(line)
    return Docstring(
        summary="\n".join(summary).strip(),
        params={name: _join(parts) for name, parts in params.items()},
        returns=_join(returns) if returns else None,
    )


def _join(parts: list[str]) -> str:
    return " ".join(part.strip() for part in parts if part.strip())


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
