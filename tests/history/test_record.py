"""CallRecord and plain_json: every value is storable, and says what was changed."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.envelope import escape_surrogates
from workbench.history.row import DETAIL, FIELDS, SCALARS, CallRecord, plain_json

surrogate_text = st.text(
    alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=()),
    max_size=8,
)
anything = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | surrogate_text
    | st.binary(max_size=8)
    | st.builds(object),
    lambda children: (
        st.lists(children, max_size=3)
        | st.tuples(children, children)
        | st.dictionaries(
            surrogate_text | st.integers() | st.tuples(st.integers()), children, max_size=3
        )
    ),
    max_leaves=10,
)


@settings(max_examples=300)
@given(anything)
def test_plain_json_always_gives_utf8_json_that_reads_back(value):
    notes: list[str] = []
    text = plain_json(value, notes, "value")
    text.encode("utf-8")
    json.loads(text)


def test_plain_json_names_each_change_and_leaves_plain_data_alone():
    notes: list[str] = []
    plain = {"a": [1, "b", None, 2.5], "é": {"deep": [[True]]}}
    text = plain_json(plain, notes)
    assert json.loads(text) == plain and text.replace(" ", "") == json.dumps(
        plain, ensure_ascii=False
    ).replace(" ", "")  # the same text, but for the spaces between items
    assert notes == []
    cases = {
        "\ud800": "surrogates",
        b"\xff": "bytes",
        math.nan: "NaN",
        10**5000: "too long",
        object(): "repr",
    }
    for value, word in cases.items():
        notes = []
        plain_json([value], notes, "raw_args")
        assert len(notes) == 1 and word in notes[0] and notes[0].startswith("raw_args:"), value


def test_nesting_is_bounded_and_cycles_are_cut():
    deep: list = []
    for _ in range(10_000):
        deep = [deep]
    notes: list[str] = []
    text = plain_json(deep, notes)
    assert json.loads(text) and "nesting" in notes[0]
    cycle: list = []
    cycle.append(cycle)
    notes = []
    assert json.loads(plain_json(cycle, notes)) == ["<cut: contains itself>"]


def test_escape_surrogates_returns_the_same_object_when_there_is_nothing_to_escape():
    text = "plain ✓ text"
    assert escape_surrogates(text) is text
    assert escape_surrogates("a\ud800b") == "a\\ud800b"


def test_the_record_is_defined_once_scalars_then_json():
    assert list(FIELDS) == list(CallRecord.__dataclass_fields__)
    assert set(SCALARS) | set(DETAIL) == set(FIELDS) and not set(SCALARS) & set(DETAIL)
    record = CallRecord.from_mapping({"call_id": "c", "tool": "t", "unknown": 1})
    assert record.to_dict()["call_id"] == "c" and record.events == []
