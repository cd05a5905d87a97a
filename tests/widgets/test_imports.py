"""The widget modules import one another without a circle: every import counts, at the top of a
module, inside a function or under ``TYPE_CHECKING``, so the imports form a DAG. Where a view
must show a view that imports it (a card shows a failure card, which shows its retries' cards),
it finds it where the package registered it, not by importing it."""

from __future__ import annotations

import ast
from pathlib import Path

import workbench.widgets
from tests.architecture.support import parse

WIDGETS = Path(workbench.widgets.__file__).parent
PACKAGE = "workbench.widgets"


def widget_imports(name: str, source: str, modules: set[str]) -> set[str]:
    """The widget modules (by file stem, ``__init__`` for the package) that ``source``, the
    module ``name``, imports anywhere in its text."""
    found: set[str] = set()

    def add(dotted: str, names: list[str]) -> None:
        if dotted == PACKAGE:
            for item in names:  # `from workbench.widgets import call_card` names a module
                found.add(item if item in modules else "__init__")
        elif dotted.startswith(PACKAGE + "."):
            found.add(dotted.removeprefix(PACKAGE + ".").split(".")[0])

    for node in ast.walk(parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, [])
                if alias.name == PACKAGE:
                    found.add("__init__")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1:  # relative to this package
                module = ".".join(filter(None, [PACKAGE, module]))
            elif node.level:
                continue  # above this package: no widget module
            add(module, [alias.name for alias in node.names])
    found.discard(name)
    return found


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every circle of imports, once each, as the modules along it (first one repeated last)."""
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()

    def walk(path: list[str]) -> None:
        for target in sorted(edges.get(path[-1], ())):
            if target == path[0]:
                circle = frozenset(path)
                if circle not in seen:
                    seen.add(circle)
                    found.append([*path, target])
            elif target not in path and target > path[0]:  # each circle from its least member
                walk([*path, target])

    for start in sorted(edges):
        walk([start])
    return found


def widget_graph() -> dict[str, set[str]]:
    paths = sorted(WIDGETS.glob("*.py"))
    modules = {path.stem for path in paths}
    return {
        path.stem: widget_imports(path.stem, path.read_text(encoding="utf-8"), modules)
        for path in paths
    }


def test_the_check_counts_every_form_of_import():
    modules = {"__init__", "a", "b", "c"}
    assert widget_imports("a", "from workbench.widgets.b import x", modules) == {"b"}
    assert widget_imports("a", "import workbench.widgets.b.inner", modules) == {"b"}
    assert widget_imports("a", "from workbench.widgets import b, card", modules) == {
        "b",
        "__init__",
    }
    assert widget_imports("a", "from . import c\nfrom ._x import y", modules) == {"c", "_x"}
    inside = "def f():\n    from workbench.widgets.c import y\n"
    assert widget_imports("a", inside, modules) == {"c"}
    typed = "if TYPE_CHECKING:\n    from workbench.widgets.b import B\n"
    assert widget_imports("a", typed, modules) == {"b"}
    assert widget_imports("a", "from workbench.runtime import Call", modules) == set()


def test_the_check_finds_a_circle_through_a_function_level_import():
    modules = {"results", "failure", "follow_ups", "call_card"}
    sources = {
        "results": "def view():\n    from workbench.widgets.failure import FailureCard\n",
        "failure": "from workbench.widgets.follow_ups import FollowUps\n",
        "follow_ups": "def add():\n    from workbench.widgets.call_card import card\n",
        "call_card": "from workbench.widgets.results import result_view\n",
    }
    edges = {name: widget_imports(name, text, modules) for name, text in sources.items()}
    assert cycles(edges) == [["call_card", "results", "failure", "follow_ups", "call_card"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_widget_module_imports_another_in_a_circle():
    graph = widget_graph()
    assert {"__init__", "call_card", "results", "failure", "_follow_ups"} <= set(graph)
    assert "results" in graph["call_card"] and "_follow_ups" in graph["failure"]
    assert cycles(graph) == []
