"""Reading a JSON document a value at a time gives exactly what ``json.loads`` gives, however
the text is cut into the pieces a file hands over."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.transcripts._json_stream import JsonStreamError, head_before, members

_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


class Trickle(io.StringIO):
    """A text file that hands over at most ``size`` characters a read, as a slow pipe might."""

    def __init__(self, text: str, size: int) -> None:
        super().__init__(text)
        self.size = size

    def read(self, size: int | None = -1) -> str:
        return super().read(self.size)


def read_back(text: str, size: int) -> dict:
    found = {}
    for key, value in members(Trickle(text, size), "items"):
        found[key] = list(value) if key == "items" and not isinstance(value, list) else value
    return found


@settings(max_examples=150)
@given(
    before=st.dictionaries(st.text(), _VALUES, max_size=3),
    items=st.lists(_VALUES, max_size=6),
    size=st.integers(min_value=1, max_value=7),
    indent=st.sampled_from([None, 1]),
)
def test_members_read_in_pieces_are_what_json_loads_reads(before, items, size, indent):
    document = {**{k: v for k, v in before.items() if k != "items"}, "items": items, "n": 12345}
    text = json.dumps(document, indent=indent)
    assert read_back(text, size) == json.loads(text)


def test_the_head_before_a_key_stops_at_it_and_refuses_other_arrays():
    text = '{"version": 2, "eval": {"id": "e"}, "samples": [1, 2]}'
    assert head_before(Trickle(text, 3), "samples") == {"version": 2, "eval": {"id": "e"}}
    assert head_before(io.StringIO('{"messages": [1], "samples": []}'), "samples") is None
    assert head_before(io.StringIO("[1, 2]"), "samples") is None


def test_text_that_stops_being_json_is_an_error_where_it_stops():
    reading = members(io.StringIO('{"a": 1, "items": [1, 2, {"b": nonsense'), "items")
    assert next(reading) == ("a", 1)
    key, items = next(reading)
    assert key == "items" and next(items) == 1 and next(items) == 2
    with pytest.raises(JsonStreamError, match="not JSON"):
        next(items)
