"""URI templates as the offer form fills them in (RFC 6570's own examples, with string values);
the form itself is driven against server-everything in ``tests/mcp/test_offers.py``."""

from __future__ import annotations

import pytest

from workbench.widgets.offer_form import expand, template_variables

VALUES = {"var": "value", "hello": "Hello World!", "path": "/foo/bar", "x": "1024", "y": "768"}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{var}", "value"),
        ("{hello}", "Hello%20World%21"),
        ("{+path}/here", "/foo/bar/here"),
        ("X{#var}", "X#value"),
        ("X{.var}", "X.value"),
        ("{/var,x}/here", "/value/1024/here"),
        ("{;x,y}", ";x=1024;y=768"),
        ("{?x,y}", "?x=1024&y=768"),
        ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
        ("map?{x,y}", "map?1024,768"),
        ("{var:3}", "val"),
        ("{+path:6}/here", "/foo/b/here"),
        ("demo://resource/{missing}", "demo://resource/"),
    ],
)
def test_expand_follows_rfc_6570(template, expected):
    assert expand(template, VALUES) == expected


def test_template_variables_are_named_once_in_order():
    assert template_variables("a/{x}/{+path}{?x,y*,z:3}") == ["x", "path", "y", "z"]
