"""``dumps_made_once`` writes what ``json.dumps`` writes with the same options, raises what it
raises, and does so too on a Python built without the C accelerator."""

from __future__ import annotations

import json
import math

import pytest

from workbench._json_text import dumps_made_once

PLAIN = [
    None,
    True,
    0,
    -(10**30),
    1.5,
    1e300,
    "",
    'é ☃ 𝄞 \x00 "quoted" \\',
    [],
    {},
    {"b": [1, {"a": None}], "a": "x", "é": [[[]]]},
    [1.0, -0.0, "two", [3, [4, [5]]]],
]


@pytest.fixture(params=["c", "python"])
def accelerated(request, monkeypatch):
    """Both builds: with the C encoder, and as a Python without ``_json`` has it."""
    if request.param == "python":
        monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    return request.param


@pytest.mark.parametrize("allow_nan", [True, False])
@pytest.mark.parametrize("value", PLAIN)
def test_plain_data_is_written_as_json_dumps_writes_it(accelerated, allow_nan, value):
    dumps = dumps_made_once(allow_nan=allow_nan)
    expected = json.dumps(value, ensure_ascii=False, check_circular=False, allow_nan=allow_nan)
    assert dumps(value) == expected
    assert dumps(value) == expected  # made once, used again: nothing kept between calls


def test_nan_and_the_infinities_are_written_or_refused_as_asked(accelerated):
    values = [math.nan, math.inf, -math.inf]
    assert dumps_made_once(allow_nan=True)(values) == "[NaN, Infinity, -Infinity]"
    for value in values:
        with pytest.raises(ValueError):
            dumps_made_once(allow_nan=False)([value])


def test_a_value_with_no_json_form_raises_type_error_naming_its_type(accelerated):
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        dumps_made_once(allow_nan=True)({"tags": {1, 2}})


def test_a_cycle_raises_recursion_error(accelerated):
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(RecursionError):
        dumps_made_once(allow_nan=False)(cycle)


# ── the accelerated pair: orjson where installed, the same answer as the standard library ──

import dataclasses  # noqa: E402
import datetime  # noqa: E402
import enum  # noqa: E402
import uuid  # noqa: E402

from workbench import _json_text  # noqa: E402
from workbench._json_text import exact_fast_dumps, loads  # noqa: E402
from workbench.history.row._record import plain_json  # noqa: E402


class _Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class _Point:
    x: int


# Values orjson writes differently from the standard library, refuses, or writes as something
# else than they are: each must be left to the standard path.
NOT_FOR_THE_FAST_PATH = [
    [math.nan],
    {"at": math.inf},
    (1, 2),
    {1: "an integer key"},
    10**30,
    "\ud800 a lone surrogate",
    datetime.datetime(2026, 12, 2, 3, 4, 5),
    _Colour.RED,
    uuid.UUID(int=7),
    _Point(1),
    {"tags": {1, 2}},
]


@pytest.fixture(params=["orjson", "standard"])
def accelerator(request, monkeypatch):
    """Both: with orjson, and as a machine without it has it."""
    pytest.importorskip("orjson") if request.param == "orjson" else None
    if request.param == "standard":
        monkeypatch.setattr(_json_text, "_orjson", None)
    return request.param


@pytest.mark.parametrize("value", PLAIN)
def test_the_fast_text_reads_back_as_the_standard_text_does(accelerator, value):
    fast = exact_fast_dumps(value)
    if accelerator == "standard":
        assert fast is None
        return
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        assert fast is None  # orjson refuses an integer past 64 bits
        return
    assert fast is not None
    assert json.loads(fast) == json.loads(json.dumps(value, ensure_ascii=False))


@pytest.mark.parametrize("value", NOT_FOR_THE_FAST_PATH, ids=repr)
def test_a_value_orjson_would_change_is_left_to_the_standard_path(accelerator, value):
    assert exact_fast_dumps(value) is None
    warnings: list[str] = []
    stored = plain_json(value, warnings)
    # What the standard path alone stores, warnings included.
    monkeypatched: list[str] = []
    saved, _json_text._orjson = _json_text._orjson, None
    try:
        assert stored == plain_json(value, monkeypatched)
    finally:
        _json_text._orjson = saved
    assert warnings == monkeypatched


def test_a_text_past_the_checked_limit_is_left_to_the_standard_path(accelerator):
    assert exact_fast_dumps("x" * (_json_text.CHECKED_TEXT_LIMIT + 1)) is None


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 2.5, null, true], "é": "☃"}',
        "[NaN, Infinity, -Infinity]",
        "123456789012345678901234567890",
        "[-9223372036854775809, 9223372036854775807, 18446744073709551616]",
        "[0.1, 2.2250738585072014e-308, 5e-324, 1.7976931348623157e308, 9007199254740993]",
        '["1234567890123456789 in a string", 0.12345678901234567890123]',
        '"\\ud800"',
        "1e400",
    ],
)
def test_loads_reads_what_json_loads_reads(accelerator, text):
    assert repr(loads(text)) == repr(json.loads(text))


def test_loads_raises_what_json_loads_raises(accelerator):
    with pytest.raises(json.JSONDecodeError):
        loads('{"a": ')
