"""Reading a JSON document a value at a time gives exactly what ``json.loads`` gives, however
the text is cut into the pieces a file hands over."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.transcripts._json_stream import (
    CHUNK,
    JsonReader,
    JsonStreamError,
    array_head,
    each,
    frame_of,
    head_before,
    members,
    names,
    spanned_items,
    spanned_members,
)

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


class Counted(io.StringIO):
    """A text file that counts the characters handed over."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.handed = 0

    def read(self, size: int | None = -1) -> str:
        text = super().read(size)
        self.handed += len(text)
        return text


def test_a_list_whose_first_item_does_not_fit_is_refused_before_the_rest_is_read():
    pair = {"request": {"messages": []}, "response": {"choices": []}}
    text = json.dumps([pair] + [{"role": "user", "content": "x" * 100}] * 20_000)
    handle = Counted(text)
    assert array_head(handle, 50, lambda item: "request" not in item) is None
    assert handle.handed < len(text) // 10  # one read ahead of the first item, not the file
    whole = Counted(text)
    assert array_head(whole, 2) == [pair, {"role": "user", "content": "x" * 100}]
    assert whole.handed == len(text)  # a list that fits is read through: all of it is checked


RUN = frozenset({"messages"})
STOP = frozenset({"choices"})


def test_objects_with_stray_commas_or_names_are_not_json():
    for text in ('{"a": 1,}', '{"a": 1 "b": 2}', "{1: 2}", '{"a" 1}'):
        with pytest.raises(JsonStreamError):
            list(members(io.StringIO(text), "items"))
        with pytest.raises(JsonStreamError):
            head_before(io.StringIO(text), "samples")
    assert list(members(io.StringIO("{}"), "items")) == []
    assert frame_of(io.StringIO('{"model": "m", "messages": [1, 2, 3]}'), RUN, 2) == (
        {"model": "m", "messages": [1, 2]},
        ("messages",),
    )
    assert frame_of(io.StringIO('{"messages": [1], "choices": [2]}'), RUN, 2, STOP) is None


def test_a_frame_reads_a_run_that_goes_on_under_a_second_key_only_in_that_order():
    keys, sequels = frozenset({"input", "output"}), {"input": "output"}
    text = '{"input": [1, 2, 3], "model": "m", "output": [4, 5, 6]}'
    assert frame_of(io.StringIO(text), keys, 2, sequels=sequels) == (
        {"input": [1, 2], "model": "m", "output": [4, 5]},
        ("input", "output"),
    )
    assert frame_of(io.StringIO(text), keys, 2) is None  # two runs, without the sequel
    backwards = '{"output": [4], "input": [1]}'
    assert frame_of(io.StringIO(backwards), keys, 2, sequels=sequels) is None
    read = [
        (name, list(value) if name in ("input", "output") else value)
        for name, value in members(io.StringIO(text), "input", "output")
    ]
    assert read == [("input", [1, 2, 3]), ("model", "m"), ("output", [4, 5, 6])]


def test_how_much_of_a_list_is_kept_can_follow_its_first_item():
    text = json.dumps([{"request": {}}] + [{"n": n} for n in range(100)])
    kept = array_head(io.StringIO(text), lambda first: 3 if "request" in first else 50)
    assert kept == [{"request": {}}, {"n": 0}, {"n": 1}]


def test_the_buffer_holds_about_the_longest_value_not_the_file():
    longest = 20_000
    items = [f"{n:05d}" + "x" * (longest - 5) for n in range(600)]  # 12 MB of text
    reader = JsonReader(io.StringIO(json.dumps(items)))
    held = 0

    def read() -> str:
        nonlocal held
        value = reader.value()
        held = max(held, len(reader.buffer))
        return value

    assert list(each(reader, read)) == items
    # Each value cut by the end of the buffer doubles what of it is held: the buffer stays
    # within twice the longest value and a read (it grew past 500,000 here, with the file, once).
    assert held <= 2 * (longest + 4) + CHUNK, held


@settings(max_examples=100)
@given(
    items=st.lists(_VALUES, max_size=6),
    size=st.integers(min_value=1, max_value=7),
    indent=st.sampled_from([None, 1]),
)
def test_each_value_comes_with_its_text_and_where_that_starts(items, size, indent):
    document = {f"k{n}": item for n, item in enumerate(items)}
    text = json.dumps({"items": items, "object": document}, indent=indent)
    reader = JsonReader(Trickle(text, size), offset=0)
    seen = []
    for name in names(reader):
        if name == "items":
            for value, value_text, start in spanned_items(reader):
                assert text[start : start + len(value_text)] == value_text
                assert json.loads(value_text) == value
                seen.append(value)
        else:
            for (key, key_text), (value, value_text, start) in spanned_members(reader):
                assert json.loads(key_text) == key
                assert text[start : start + len(value_text)] == value_text
                assert json.loads(value_text) == value == document[key]
    assert seen == items
