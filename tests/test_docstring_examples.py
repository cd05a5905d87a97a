"""Every example in a docstring (the reference shows them) runs and prints what it shows."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
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
