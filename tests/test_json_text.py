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
