"""One direction: the core's imports form no loop, and no core module imports or names the
widgets (they register their views with the core instead)."""

from __future__ import annotations

import ast
from pathlib import Path

import workbench
from tests.architecture.support import parse

PACKAGE = Path(workbench.__file__).parent
FACADE = "workbench"  # the top-level package re-exports; it is not part of the flow


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _core_modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        name = _module_name(path)
        if name == FACADE or name.startswith("workbench.widgets"):
            continue
        found[name] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, name: str, modules: set[str]) -> set[str]:
    """Every workbench module that ``path`` imports when it runs (module level or inside a
    function), leaving out ``if TYPE_CHECKING:`` blocks."""
    tree = parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from package import submodule` depends on the submodule, not the package
            names = {f"{base}.{alias.name}" for alias in node.names}
            submodules = names & modules
            found.update(submodules)
            if submodules != names:
                found.add(base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {module for module in found if module in modules and module != name}


def test_the_core_imports_form_no_loop():
    modules = _core_modules()
    graph = {name: _imports(path, name, set(modules)) for name, path in modules.items()}
    cycles = []
    state: dict[str, int] = {}

    def walk(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                walk(nxt, [*stack, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name, [name])
    assert cycles == []


def test_no_core_module_imports_or_names_the_widgets():
    offenders = [
        name
        for name, path in _core_modules().items()
        if any(
            needle in path.read_text()
            for needle in ("workbench.widgets", "from workbench import widgets")
        )
    ]
    assert offenders == []
