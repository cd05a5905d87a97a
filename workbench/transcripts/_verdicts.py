"""The preflight's verdict on each imported call, computed once per tool and argument key.

A verdict (``accepted``, ``coerced`` or ``rejected``, the coercions' texts, the problem) is a
function of the tool's schema and the arguments checked, so an import remembers it per tool
under a key that determines it exactly:

- arguments sent as text are keyed by that text;
- arguments sent as an object are keyed by its exact JSON text (plain JSON values only: a tuple,
  a subclass or any other type is checked every time, since the preflight may treat it
  differently from its JSON look-alike);
- for a schema the fast check decides alone (``Preflight.is_simple``), a non-blank string sent
  for a top-level property that is a plain ``{"type": "string"}`` (no ``enum``, ``pattern``,
  ``format``, length or other constraint) is keyed by its kind, not its text: such a value is
  never coerced, never named in a coercion, and always valid, so any two such strings give the
  same verdict. Every other value stays in the key as it is, because a coercion's text names it
  (``limit: "2" → 2``) and constraints depend on it.

The memory this takes is bounded: keys longer than ``KEY_CHARS`` are not remembered, and each
tool remembers at most ``REMEMBERED`` verdicts (later ones are computed every time), and once
it holds that many, keys are made only while one lookup in eight finds a verdict (a run whose
every call is new then pays for no key).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench._json_text import dumps_made_once
from workbench.declare import tool_from_schema
from workbench.preflight import Preflight, resolve
from workbench.transcripts._parsed import ImportedCall

Verdict = tuple[str, list[str], str | None]
"""(verdict, coercions, problem) of one call."""

KEY_CHARS = 2048
"""The longest argument key remembered; longer arguments are checked every time."""

REMEMBERED = 1024
"""The most verdicts remembered per tool."""

_MAX_DEPTH = 32
_PLAIN_SCALARS = frozenset({str, int, float, bool, type(None)})
_STRING_ONLY = frozenset({"type", "description", "title", "examples", "default", "deprecated"})


_ENCODE = dumps_made_once(allow_nan=True)
"""``json.dumps(value, ensure_ascii=False, check_circular=False)`` for plain JSON data, its
encoder made once (a key is made for every call)."""


class Preflights:
    """One checking tool per definition found in the transcript, built on first use, and the
    verdicts it gave, remembered per argument key (see the module's docstring)."""

    def __init__(self, tools: Mapping[str, dict[str, Any]], *, remember: bool = True) -> None:
        self.tools = tools
        self.remember = remember
        """False to check every call (the reference the remembered verdicts are tested on)."""
        self.checks = 0
        """How many times a checker ran (verdicts not found among those remembered)."""
        self._built: dict[str, Preflight | str] = {}
        self._free: dict[str, frozenset[str]] = {}
        self._remembered: dict[str, dict[Any, Verdict]] = {}
        self._lookups: dict[str, tuple[int, int]] = {}

    def verdict(self, call: ImportedCall) -> Verdict:
        """(verdict, coercions, problem): ``accepted``, ``coerced``, ``rejected``,
        ``unknown_tool`` (the run has a tool list and the name is not in it), ``no_schema``
        (the run has no tool list, or the call ran on the provider's side) or
        ``schema_unusable``."""
        checker = self.checker(call.tool)
        if checker is None:
            if self.tools and call.executed_by != "server":
                known = ", ".join(sorted(self.tools)[:10])
                return "unknown_tool", [], f"{call.tool!r} is not in the run's tools ({known})"
            return "no_schema", [], None
        if isinstance(checker, str):
            return "schema_unusable", [], checker
        args = call.arguments if call.arguments is not None else call.raw_args
        remembered = self._remembered[call.tool]
        lookups, hits = self._lookups[call.tool]
        # Once full, keys are made only while they pay: one lookup in eight finds a verdict.
        worth = len(remembered) < REMEMBERED or hits * 8 >= lookups
        key = argument_key(args, self._free[call.tool]) if self.remember and worth else None
        if key is None:
            return self._check(checker, args)
        found = remembered.get(key)
        self._lookups[call.tool] = (lookups + 1, hits + (found is not None))
        if found is None:
            found = self._check(checker, args)
            if len(remembered) < REMEMBERED:
                remembered[key] = found
        verdict, coercions, problem = found
        return verdict, list(coercions), problem  # each row its own list

    def _check(self, checker: Preflight, args: Any) -> Verdict:
        self.checks += 1
        result = checker(args)
        coercions = [str(coercion) for coercion in result.coercions]
        if result.error is not None:
            error = result.error.error
            return "rejected", coercions, None if error is None else error.message
        return ("coerced" if coercions else "accepted"), coercions, None

    def checker(self, name: str) -> Preflight | str | None:
        """The preflight of a tool's schema (the problem with the schema when it has one).

        A schema the fast check decides alone (an object of plain properties) is used as it
        is: checking it with jsonschema would import jsonschema, which costs seconds where
        JupyterLab is installed. Any other schema is checked first."""
        if name not in self.tools:
            return None
        if name not in self._built:
            schema = self.tools[name]
            try:
                preflight = Preflight(schema, tool_name=name)
                if not preflight.is_simple:
                    preflight = tool_from_schema(
                        None, name=name, description="", input_schema=schema, meta={}
                    ).preflight
            except (ValueError, TypeError) as exc:
                self._built[name] = f"the schema could not be used: {exc}"
            else:
                self._built[name] = preflight
                self._free[name] = free_strings(preflight)
                self._remembered[name] = {}
                self._lookups[name] = (0, 0)
        return self._built[name]


def free_strings(preflight: Preflight) -> frozenset[str]:
    """The top-level properties whose non-blank string values never change the verdict: plain
    ``{"type": "string"}`` properties of a schema the fast check decides alone."""
    if not preflight.is_simple:
        return frozenset()
    schema = preflight.input_schema
    properties = resolve(schema, schema).get("properties")
    if not isinstance(properties, Mapping):
        return frozenset()
    return frozenset(
        name
        for name, sub in properties.items()
        if isinstance(sub, Mapping) and sub.get("type") == "string" and set(sub) <= _STRING_ONLY
    )


def argument_key(args: Any, free: frozenset[str]) -> Any:
    """The key that determines the verdict on ``args`` (see the module's docstring), or None
    when ``args`` is not remembered (not plain JSON, too deep, or too long)."""
    kind = type(args)
    if kind is str:
        return ("text", args) if len(args) <= KEY_CHARS else None
    if args is None:
        return ("none",)
    if kind is not dict:
        return None
    kept: list[str] = []
    scalars = _PLAIN_SCALARS
    for name, value in args.items():
        if type(name) is not str:
            return None
        kind = type(value)
        if kind is str:
            if name in free and value.strip():
                kept.append(name)
        elif kind not in scalars and not _plain(value, 1):
            return None
    shape: dict[Any, Any] = args
    if kept:
        shape = dict(args)
        for name in kept:
            shape[name] = 0
    try:
        text = _ENCODE(shape)
    except ValueError:  # an integer too long to print: checked every time
        return None
    return ("object", tuple(kept), text) if len(text) <= KEY_CHARS else None


def _plain(value: Any, depth: int) -> bool:
    """True when ``value`` is JSON data of exactly the types ``json.loads`` gives, so that its
    JSON text names it exactly."""
    kind = type(value)
    if kind in _PLAIN_SCALARS:
        return True
    if depth >= _MAX_DEPTH:
        return False
    if kind is list:
        return all(_plain(item, depth + 1) for item in value)
    if kind is dict:
        return all(type(name) is str and _plain(item, depth + 1) for name, item in value.items())
    return False
