"""An import checks each distinct argument key once per tool, and the verdicts it remembers are
exactly the ones checking every call gives: over generated schemas with value constraints
(enum, minimum, pattern, format, lengths), arguments sent as objects and as text, blank and
numeric strings, nulls, unknown keys and types the preflight treats apart from JSON's."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench as wb
from benchmarks import transcripts as synthetic
from workbench.transcripts import ImportedCall
from workbench.transcripts._verdicts import KEY_CHARS, REMEMBERED, Preflights

# Each property is one the preflight treats in its own way; every schema below mixes them.
PROPERTIES: dict[str, dict[str, Any]] = {
    "path": {"type": "string", "description": "a free string"},
    "note": {"type": "string"},
    "mode": {"type": "string", "enum": ["fast", "Slow", "", "slow"]},
    "code": {"type": "string", "pattern": "^[a-z]+$"},
    "day": {"type": "string", "format": "date"},
    "short": {"type": "string", "maxLength": 3, "minLength": 1},
    "limit": {"type": "integer"},
    "level": {"type": "integer", "minimum": 1, "maximum": 5},
    "ratio": {"type": "number"},
    "flag": {"type": "boolean"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "counts": {"type": "array", "items": {"type": "integer"}},
    "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    "choice": {"anyOf": [{"type": "integer"}, {"type": "string", "enum": ["all"]}]},
    "nested": {
        "type": "object",
        "properties": {"inner": {"type": "string"}},
        "required": ["inner"],
    },
}

VALUES = st.one_of(
    st.sampled_from(
        ["", " ", "  x ", "abc", "ABC", "15", " 7 ", "2.5", "1e3", "true", "No", "fast", "FAST"]
    ),
    st.sampled_from(["slow", "Slow", "all", "2024-01-01", "[1, 2]", '["a"]', '{"inner": "x"}']),
    st.sampled_from([None, True, False, 0, 1, 1.0, -0.0, 3, 7, 2.5, float("nan"), 10**30]),
    st.lists(st.sampled_from(["a", "1", 2, " ", None]), max_size=3),
    st.lists(st.sampled_from(["a", 1]), max_size=2).map(tuple),  # not JSON's own type
    st.dictionaries(st.sampled_from(["inner", "other"]), st.sampled_from(["x", "", 1, None])),
    st.text(max_size=6),
)


# Properties the fast check decides alone: a schema of only these is "simple", where free
# strings are keyed by their kind.
SIMPLE = ["path", "note", "mode", "day", "limit", "ratio", "flag", "tags", "maybe", "nested"]


# Values near each property's edge: what it accepts, coerces, drops or refuses.
NEAR = {
    "path": ["a", "b c", "", "  ", "ü", 5, None],
    "note": ["x", "y", "", " ", None],
    "mode": ["fast", "FAST", "slow", "Slow", "SLOW", "zzz", "", " ", None],
    "code": ["abc", "ab", "ABC", "a1", ""],
    "day": ["2024-01-01", "yesterday", "", " "],
    "short": ["a", "abc", "abcd", "", " "],
    "limit": ["1", "2", " 3 ", "x", "1.0", "1.5", 1, 2.0, True, None, ""],
    "level": [0, 1, 5, 6, "3", "9", ""],
    "ratio": ["2.5", "1e3", "inf", 1, 2.5, "", None],
    "flag": ["true", "No", "on", "maybe", True, 1, ""],
    "tags": [["a"], ("a",), ["a", "b"], '["a"]', "a", [1], []],
    "counts": [[1], (1,), ["1"], "[1]", [1.5], "x"],
    "maybe": ["x", None, "", 1],
    "choice": [1, "1", "all", "ALL", "none", None],
    "nested": [{"inner": "x"}, {"inner": ""}, {}, '{"inner": "x"}', "x"],
    "extra": ["x", 1, None],
    "properties": [{"path": "a"}, {"other": 1}, "x"],
}


def near(name: str) -> st.SearchStrategy[Any]:
    """Mostly a value near the property's edge, sometimes any value at all."""
    return st.sampled_from([True, True, True, False]).flatmap(
        lambda edge: st.sampled_from(NEAR[name]) if edge else VALUES
    )


@st.composite
def schemas(draw: st.DrawFn) -> dict[str, Any]:
    among = draw(st.sampled_from([SIMPLE, sorted(PROPERTIES)]))
    names = draw(st.lists(st.sampled_from(among), min_size=1, max_size=6, unique=True))
    required = draw(st.lists(st.sampled_from(names), unique=True))
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: PROPERTIES[name] for name in names},
        "required": required,
    }
    closed = draw(st.sampled_from([None, False, True]))
    if closed is not None:
        schema["additionalProperties"] = closed
    return schema


@st.composite
def argument_pools(draw: st.DrawFn, names: list[str]) -> list[Any]:
    """Arguments that differ from one another by a value or two, in every form a call sends
    them: an object, its JSON text, wrapped in ``{"properties": ...}``, or no object at all."""
    keys = [*names, "extra", "properties"]
    base = {name: draw(near(name)) for name in keys if draw(st.sampled_from([True, True, False]))}
    pool: list[Any] = [base]
    for name in draw(st.lists(st.sampled_from(keys), min_size=2, max_size=8)):
        pool.append({**base, name: draw(near(name))})
    forms = draw(
        st.lists(
            st.sampled_from(["object", "object", "object", "text", "wrapped"]), min_size=len(pool)
        )
    )
    for index, form in enumerate(forms[: len(pool)]):
        if form == "text":
            try:
                pool[index] = json.dumps(pool[index])
            except (TypeError, ValueError):
                pass  # no JSON text for it: sent as the object
        elif form == "wrapped":
            pool[index] = {"properties": pool[index]}
    pool += draw(st.lists(st.sampled_from(["not json", "[1, 2]", "", None, 5, ["a"]]), max_size=2))
    return pool


def call(tool: str, args: Any) -> ImportedCall:
    arguments = args if isinstance(args, dict) else None
    return ImportedCall(
        tool=tool, model_call_id=None, raw_args=args, where="-", arguments=arguments
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_remembered_verdicts_are_the_verdicts_of_checking_every_call(data: st.DataObject) -> None:
    schema = data.draw(schemas())
    pool = data.draw(argument_pools(list(schema["properties"])))
    # calls drawn from a small pool, so that keys repeat and remembered verdicts are used
    order = data.draw(st.permutations(list(range(len(pool))) * 2))
    tools = {"tool": schema}
    remembered, every = Preflights(tools), Preflights(tools, remember=False)
    for index in order:
        expected = every.verdict(call("tool", pool[index]))
        assert remembered.verdict(call("tool", pool[index])) == expected, pool[index]
    assert every.checks == len(order)


def calls_of(tool: str, arguments: list[Any]) -> list[ImportedCall]:
    return [call(tool, args) for args in arguments]


def test_the_checker_runs_once_per_distinct_key() -> None:
    tools = {"read_file": synthetic.SCHEMA}
    preflights = Preflights(tools)
    # a free string path (never coerced, never named) with five numeric texts for the limit
    arguments = [{"path": f"src/datei_{i}.txt", "limit": str(i % 5 + 1)} for i in range(200)]
    verdicts = [preflights.verdict(c) for c in calls_of("read_file", arguments)]
    assert preflights.checks == 5
    assert verdicts[7] == ("coerced", ['limit: "3" → 3'], None)
    # the same text sent again and again is checked once
    text = Preflights(tools)
    for c in calls_of("read_file", ['{"path": "a", "limit": "x"}'] * 50):
        assert text.verdict(c)[0] == "rejected"
    assert text.checks == 1


def test_a_constrained_or_blank_string_is_keyed_by_its_value() -> None:
    tools = {
        "pick": {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "note": {"type": "string"},
            },
        }
    }
    preflights = Preflights(tools)
    arguments = [{"mode": mode, "note": note} for mode in ("fast", "FAST", "Slow") for note in "ab"]
    arguments += [{"mode": "fast", "note": blank} for blank in ("", " ", "  ")]
    verdicts = [preflights.verdict(c) for c in calls_of("pick", arguments)]
    # three modes (each named when coerced), and each blank note named as it was dropped
    assert preflights.checks == 3 + 3
    assert verdicts[2] == ("coerced", ['mode: "FAST" → "fast"'], None)
    assert verdicts[-1] == ("coerced", ['note: "  " dropped (empty optional)'], None)


def test_what_is_not_plain_json_is_checked_every_time() -> None:
    tools = {"read_file": synthetic.SCHEMA}
    preflights = Preflights(tools)
    odd = [
        {"path": "a", "limit": (1,)},  # a tuple is no JSON array to the preflight
        {"path": "a", 1: "x"},  # a key that is no string
        {"path": "a", "limit": 10**5000},  # an integer too long to print
        {"path": "a", "limit": "1" * (KEY_CHARS + 1)},  # a key too long to keep
    ]
    for args in odd:
        for _ in range(3):
            preflights.verdict(call("read_file", args))
    assert preflights.checks == 3 * len(odd)


def test_remembered_verdicts_are_bounded_per_tool() -> None:
    tools = {"read_file": synthetic.SCHEMA}
    preflights = Preflights(tools)
    # each key sent twice in a row: half the lookups find their verdict
    arguments = [{"path": "a", "limit": str(i)} for i in range(REMEMBERED + 10) for _ in "ab"]
    for c in calls_of("read_file", arguments):
        preflights.verdict(c)
    # the first REMEMBERED keys are kept; the ten after them are checked each time they come
    assert preflights.checks == REMEMBERED + 10 + 10


def test_once_full_keys_are_made_only_while_they_pay() -> None:
    tools = {"read_file": synthetic.SCHEMA}
    preflights = Preflights(tools)
    # every call a new key until the memory is full, without one lookup finding a verdict
    for c in calls_of("read_file", [{"path": "a", "limit": str(i)} for i in range(REMEMBERED)]):
        preflights.verdict(c)
    assert preflights.checks == REMEMBERED
    again = call("read_file", {"path": "a", "limit": "0"})
    assert preflights.verdict(again) == ("coerced", ['limit: "0" → 0'], None)
    assert preflights.checks == REMEMBERED + 1  # checked, not looked up


def test_each_row_gets_its_own_list_of_coercions() -> None:
    preflights = Preflights({"read_file": synthetic.SCHEMA})
    first = preflights.verdict(call("read_file", {"path": "a", "limit": "2"}))
    first[1].append("changed by a reader of the row")
    again = preflights.verdict(call("read_file", {"path": "b", "limit": "2"}))
    assert again == ("coerced", ['limit: "2" → 2'], None)


def test_an_import_shows_the_verdicts_of_checking_every_call(tmp_path) -> None:
    path = synthetic.write(tmp_path, "openai_chat", 300)
    history = wb.transcripts.load(path)
    _name, parsed, _source = wb.transcripts.parse(path)
    every = Preflights(parsed.tools, remember=False)
    expected = [every.verdict(c) for c in parsed.calls]
    frame = history.to_dataframe()
    assert list(frame["preflight"]) == [verdict for verdict, _, _ in expected]
    assert [list(c) for c in frame["coercions"]] == [coercions for _, coercions, _ in expected]
    history.close()
