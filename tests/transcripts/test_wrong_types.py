"""A transcript can hold anything anywhere: a value of the wrong type where a reader expects a
list, a name or an object is listed in ``unreadable`` (or read past), never raised as a
``TypeError``. The cases named here are ones mutation found; the property test swaps values
of real fixtures for values of other types at random."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench as wb
from tests.transcripts.test_inspect_parts import HEADER, sample
from workbench.transcripts import TranscriptError

DATA = Path(__file__).parents[1] / "data" / "transcripts"
FIXTURES = {
    path.name: json.loads(path.read_text(encoding="utf-8")) for path in sorted(DATA.glob("*.json"))
}
FIXTURES["inspect_ai log"] = {**HEADER, "samples": [sample(0)]}


def read(document: Any) -> wb.transcripts.TranscriptHistory | None:
    """The import of ``document``, or None when it is refused with a ``TranscriptError``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            history = wb.transcripts.load(document)
        except TranscriptError:
            return None
    history.rows()  # every row reads back
    return history


def first_block(document: list[Any]) -> dict[str, Any]:
    """The first content block of the first response in a log of request/response pairs."""
    for entry in document:
        content = entry.get("response", {}).get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict):
                return block
    raise AssertionError("no content block")


def test_a_content_block_whose_type_is_not_a_name_is_listed():
    document = copy.deepcopy(FIXTURES["anthropic_server_tools.json"])
    first_block(document)["type"] = {"not": "a name"}
    history = read(document)
    assert history is not None
    assert any("a block whose 'type' is not a name" in str(u) for u in history.unreadable)


def test_a_responses_item_whose_type_is_not_a_name_is_listed():
    document = copy.deepcopy(FIXTURES["openai_responses.json"])
    calls = len(read(copy.deepcopy(document)) or [])
    first = next(item for item in document["output"] if item.get("type") == "function_call")
    first["type"] = ["function_call"]
    history = read(document)
    assert history is not None and len(history) == calls - 1
    assert any("an item whose 'type' is not a name" in str(u) for u in history.unreadable)


NOT_A_NAME = {"not": "a name"}


@pytest.mark.parametrize(
    ("transcript", "said"),
    [
        (
            [
                {"role": "user", "content": [{"type": NOT_A_NAME}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f"}]},
            ],
            "message 0, block 0: a block whose 'type' is not a name",
        ),
        (
            [
                {"type": NOT_A_NAME},
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            ],
            "item 0: an item whose 'type' is not a name",
        ),
    ],
    ids=["anthropic block", "responses item"],
)
def test_a_type_that_is_not_a_name_met_before_any_mark_is_listed(transcript, said):
    """Detection meets the odd ``type`` first, before the call that names the format."""
    history = read(transcript)
    assert history is not None and len(history) == 1
    assert any(str(u).startswith(said) for u in history.unreadable)


@pytest.mark.parametrize(
    ("fixture", "key", "value"),
    [
        ("openai_chat.json", "tools", 1),
        ("openai_chat.json", "functions", True),
        ("openai_responses.json", "tools", True),
        ("anthropic.json", "tools", True),
        ("inspect_ai log", "samples", 5),
    ],
)
def test_a_list_of_tools_or_samples_that_is_not_a_list_is_read_past(fixture, key, value):
    document = copy.deepcopy(FIXTURES[fixture])
    document[key] = value
    read(document)  # no TypeError: a history, or a TranscriptError saying what is missing


def test_inspect_tool_calls_that_are_not_a_list_are_listed():
    log = {**HEADER, "samples": [sample(0)]}
    assistant = next(
        m for m in log["samples"][0]["messages"] if isinstance(m, dict) and m.get("tool_calls")
    )
    assistant["tool_calls"] = 5
    history = read(log)
    assert history is not None
    assert any("'tool_calls' is not a list" in str(u) for u in history.unreadable)


def paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``value`` (keys and indexes from the top), its top left out."""
    found = [at] if at else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*at, index))
    return found


ODD_VALUES = st.sampled_from(
    [None, 0, -1, 1.5, True, "", "x", "attachment://missing", [], [None], [1, "a"], {}, {"a": 1}]
)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    fixture=st.sampled_from(sorted(FIXTURES)),
    picks=st.lists(
        st.tuples(st.floats(0, 1, exclude_max=True), ODD_VALUES), min_size=1, max_size=3
    ),
)
def test_any_value_swapped_for_one_of_another_type_is_read_or_refused_clearly(fixture, picks):
    document = copy.deepcopy(FIXTURES[fixture])
    for share, value in picks:
        places = paths(document)
        if not places:
            break
        *parents, last = places[int(share * len(places))]
        target = document
        for step in parents:
            target = target[step]
        target[last] = copy.deepcopy(value)
    read(document)
