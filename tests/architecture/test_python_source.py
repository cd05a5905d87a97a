"""The tests' parser falls back to a fresh interpreter only for CPython 3.11's miscounted AST
recursion depth, and gives the same tree there."""

from __future__ import annotations

import ast

import pytest

from tests.architecture import support as python_source

SOURCE = "def f(x: int) -> int:\n    return [x for _ in range(3)][0]\n"


def _broken(message: str):
    def parse(source: str) -> ast.Module:
        raise SystemError(message)

    return parse


def test_a_miscounted_recursion_depth_is_parsed_in_a_fresh_interpreter(monkeypatch):
    expected = ast.dump(ast.parse(SOURCE))
    monkeypatch.setattr(
        python_source.ast,
        "parse",
        _broken("AST constructor recursion depth mismatch (before=144, after=201)"),
    )
    assert ast.dump(python_source.parse(SOURCE)) == expected


def test_any_other_failure_of_the_parser_is_raised(monkeypatch):
    monkeypatch.setattr(python_source.ast, "parse", _broken("something else"))
    with pytest.raises(SystemError, match="something else"):
        python_source.parse(SOURCE)
