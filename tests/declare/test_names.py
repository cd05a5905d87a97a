"""Tool name rules of seed 002: each rule refused with a message naming it, valid names kept."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.declare._names import MAX_NAME_LENGTH, check_name, suggest_name


@pytest.mark.parametrize("name", ["search_files", "a", "x9", "read_file_v2", "a" * 64])
def test_valid_names_are_returned_unchanged(name):
    assert check_name(name) == name


def test_empty_name_is_refused_naming_the_rule():
    with pytest.raises(ValueError, match="must not be empty"):
        check_name("")


@pytest.mark.parametrize("name", ["search files", "search\tfiles", " search", "search\n"])
def test_names_with_spaces_are_refused_naming_the_rule(name):
    with pytest.raises(ValueError, match="must not contain spaces"):
        check_name(name)


def test_names_longer_than_64_characters_are_refused_naming_the_rule():
    assert MAX_NAME_LENGTH == 64
    with pytest.raises(ValueError, match="longer than 64 characters"):
        check_name("a" * 65)


@pytest.mark.parametrize(
    "name",
    ["SearchFiles", "search-files", "search.files", "9lives", "_private", "café", "a/b", "ünï"],
)
def test_names_that_are_not_ascii_snake_case_are_refused_naming_the_rule(name):
    with pytest.raises(ValueError, match="not ASCII snake_case"):
        check_name(name)


def test_every_broken_rule_is_named_at_once():
    with pytest.raises(ValueError) as caught:
        check_name("Search Files " + "x" * 64)
    message = str(caught.value)
    assert "spaces" in message
    assert "longer than 64" in message
    assert "snake_case" in message


def test_a_non_string_name_is_refused():
    with pytest.raises(ValueError, match="must be a string"):
        check_name(42)


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [
        ("Search Files", "search_files"),
        ("searchFiles", "search_files"),
        ("search-files.v2", "search_files_v2"),
        ("9lives", "tool_9lives"),
        ("!!!", ""),
    ],
)
def test_suggestions_are_valid_snake_case(name, suggestion):
    assert suggest_name(name) == suggestion


def test_the_message_suggests_a_valid_name():
    with pytest.raises(ValueError, match="try 'search_files'"):
        check_name("Search Files")


@given(st.text(max_size=80))
def test_check_name_accepts_exactly_the_snake_case_pattern(name):
    valid = re.fullmatch(r"[a-z][a-z0-9_]{0,63}", name) is not None
    try:
        assert check_name(name) == name
        assert valid
    except ValueError:
        assert not valid


@given(st.text(max_size=120))
def test_suggestions_always_pass_the_rules_or_are_empty(name):
    suggestion = suggest_name(name)
    assert suggestion == "" or check_name(suggestion) == suggestion
