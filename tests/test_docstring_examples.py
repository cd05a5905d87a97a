"""Every example in a docstring (the reference shows them) runs and prints what it shows."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import pkgutil
from pathlib import Path

import pytest

import workbench


def modules_with_examples() -> list[str]:
    found = []
    for module in pkgutil.walk_packages(workbench.__path__, "workbench."):
        if ".widgets" in module.name or module.name.endswith("__main__"):
            continue
        source = importlib.util.find_spec(module.name)
        if source and source.origin and ">>>" in Path(source.origin).read_text(encoding="utf-8"):
            found.append(module.name)
    return found


def test_the_envelope_helpers_show_an_example_each():
    assert "workbench.envelope._builders" in modules_with_examples()


@pytest.mark.parametrize("name", modules_with_examples())
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# What a newcomer reaches for first, in the order the README tour meets it: each shows an
# example in its reference entry (run by the test above).
FIRST_MET = (
    "Registry",
    "Call",
    "ToolContext",
    "ToolFailure",
    "History",
    "compact",
    "wire_schema",
    "transcripts.load",
    "mcp.connect",
    "declare.framework_views",
)


@pytest.mark.parametrize("name", FIRST_MET)
def test_the_names_a_newcomer_meets_first_show_an_example(name):
    found: object = workbench
    for part in name.split("."):
        found = getattr(found, part)
    assert ">>>" in (inspect.getdoc(found) or ""), f"wb.{name} shows no example"
