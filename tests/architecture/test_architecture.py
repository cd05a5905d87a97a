"""The shape of the package, read from its own source: the flow in step packages, each private
module serving its own package, no import cycle, no class too large, and a facade that shows
exactly its public names: those shared/DESIGN.md promises, each from workbench itself, and an
``import workbench`` that loads nothing of Jupyter and no provider's SDK.

The imports are read with ``ast``, so an import inside a function counts as much as one at the
top of a module (it runs too); only imports under ``TYPE_CHECKING`` are left out of the cycles.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

import workbench
from tests.architecture.support import parse

PACKAGE = Path(workbench.__file__).parent

MAX_TOP_LEVEL_PRIVATE = 10
"""Top-level private modules are the few that every package shares."""

MAX_CLASS_LINES = 400
HANDLE_CLASS_LINES = 300
"""The person's handle (``Call``) and the history's facade (``History``) stay small."""

STEP_PACKAGES = (
    "envelope",
    "output",
    "context",
    "preflight",
    "declare",
    "families",
    "history",
    "runtime",
    "registry",
)


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    target: str  # dotted module name imported (a module or a package)
    line: int
    type_only: bool


def module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent / Path(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imports_of(path: Path) -> list[Import]:
    module, is_package = module_name(path)
    package = module if is_package else module.rsplit(".", 1)[0]
    found: list[Import] = []

    def add(target: str, line: int, type_only: bool) -> None:
        if target == "workbench" or target.startswith("workbench."):
            found.append(Import(module, target, line, type_only))

    def visit(node: ast.AST, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            under = type_only or (
                isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)
            )
            if isinstance(child, ast.Import):
                for alias in child.names:
                    add(alias.name, child.lineno, under)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    source = ".".join([*base, *([child.module] if child.module else [])])
                else:
                    source = child.module or ""
                for alias in child.names:
                    submodule = f"{source}.{alias.name}"
                    add(submodule if _is_module(submodule) else source, child.lineno, under)
            visit(child, under)

    visit(parse(path.read_text(encoding="utf-8")), False)
    return found


def all_imports() -> list[Import]:
    return [found for path in sorted(PACKAGE.rglob("*.py")) for found in _imports_of(path)]


def _owner(target: str) -> str | None:
    """The package a private module belongs to, or None for a public module."""
    parts = target.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index])
    return None


def _package_of(module: str) -> str:
    path = PACKAGE.parent / Path(*module.split("."))
    return module if (path / "__init__.py").is_file() else module.rsplit(".", 1)[0]


def private_imports_from_outside() -> list[str]:
    """Imports of a private module by a module of another package. The top-level package's
    private modules are the shared ones: any package may use them."""
    crossings = []
    for found in all_imports():
        owner = _owner(found.target)
        if owner is None or owner == "workbench":
            continue
        if _package_of(found.importer) != owner:
            crossings.append(f"{found.importer}:{found.line} imports {found.target}")
    return crossings


def import_cycles(*, type_only: bool) -> list[list[str]]:
    """Groups of modules that import each other in a circle (strongly connected, more than
    one). Importing a module first imports its parent packages, so an arrow to one's own
    parent package is no arrow."""
    edges: dict[str, set[str]] = defaultdict(set)
    for found in all_imports():
        if found.type_only and not type_only:
            continue
        if found.importer == found.target or found.importer.startswith(found.target + "."):
            continue
        edges[found.importer].add(found.target)
    return _strongly_connected(edges)


def _strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0

    def connect(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(edges):
        if node not in index:
            connect(node)
    return groups


def class_sizes() -> list[tuple[int, str]]:
    sizes = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module, _ = module_name(path)
        for node in ast.walk(parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno is not None
                sizes.append((node.end_lineno - node.lineno + 1, f"{module}.{node.name}"))
    return sorted(sizes, reverse=True)


def top_level_private_modules() -> list[str]:
    return sorted(
        path.stem
        for path in PACKAGE.glob("_*.py")
        if path.name not in ("__init__.py", "__main__.py")
    )


# ── the rules ────────────────────────────────────────────────────────────────────────────


def test_the_flow_is_in_step_packages():
    missing = [name for name in STEP_PACKAGES if not (PACKAGE / name / "__init__.py").is_file()]
    assert missing == []
    assert len(top_level_private_modules()) <= MAX_TOP_LEVEL_PRIVATE, top_level_private_modules()


def test_no_private_module_is_imported_from_another_package():
    assert private_imports_from_outside() == []


def test_no_import_cycle_at_run_time():
    assert import_cycles(type_only=False) == []


def test_no_class_is_too_large():
    too_large = [(size, name) for size, name in class_sizes() if size > MAX_CLASS_LINES]
    assert too_large == []
    sizes = {name: size for size, name in class_sizes()}
    assert sizes["workbench.runtime.call._call.Call"] <= HANDLE_CLASS_LINES
    assert sizes["workbench.history._history.History"] <= HANDLE_CLASS_LINES


def _public_attributes(module: object) -> set[str]:
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, type(sys))
    }


def test_workbench_shows_exactly_its_public_names():
    """Every public attribute of ``workbench`` is in ``__all__``, every name there exists and
    is public, each once, in order (the both-ways check), in a fresh interpreter where nothing
    else was imported."""
    code = (
        "import types, workbench as wb\n"
        "print(sorted(n for n, v in vars(wb).items() if not n.startswith('_') "
        "and not isinstance(v, types.ModuleType)))\n"
        "print(sorted(n for n, v in vars(wb).items() if not n.startswith('_') "
        "and isinstance(v, types.ModuleType)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names, modules = (eval(line) for line in out.stdout.splitlines())
    assert names == workbench.__all__ == sorted(workbench.__all__)
    subpackages = {info.name for info in pkgutil.iter_modules([str(PACKAGE)])}
    assert set(modules) <= subpackages


# Read from the files, not by importing: collecting this module imports nothing of workbench
# beyond the top package (each test imports its own package).
PUBLIC_PACKAGES = sorted(
    name
    for path in PACKAGE.rglob("__init__.py")
    if path.parent != PACKAGE
    and _owner(name := ".".join(("workbench", *path.parent.relative_to(PACKAGE).parts))) is None
)


@pytest.mark.parametrize("name", PUBLIC_PACKAGES)
def test_each_package_names_what_others_may_use(name):
    """A package's ``__all__`` names each name once (ruff keeps it sorted), every name in it
    exists, and every public name it holds is in it (submodules aside)."""
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert len(exported) == len(set(exported))
    assert [item for item in exported if not hasattr(module, item)] == []
    assert sorted(_public_attributes(module) - set(exported)) == []


def undocumented(module: object, exported: list[str]) -> list[str]:
    """The functions and classes ``module`` exports, and their public methods and properties,
    that carry no docstring."""
    found = []
    for item in exported:
        value = getattr(module, item)
        if not (inspect.isfunction(value) or inspect.isclass(value)):
            continue
        if not (value.__doc__ or "").strip():
            found.append(item)
        if inspect.isclass(value):
            for member, held in vars(value).items():
                function = held.fget if isinstance(held, property) else held
                if isinstance(function, staticmethod | classmethod):
                    function = function.__func__
                if member.startswith("_") or not inspect.isfunction(function):
                    continue
                if not (function.__doc__ or "").strip():
                    found.append(f"{item}.{member}")
    return found


@pytest.mark.parametrize("name", ["workbench", *PUBLIC_PACKAGES])
def test_every_public_function_class_and_method_says_what_it_promises(name):
    """What a package exports, and each public method of a class it exports, has a docstring:
    the reference pages show it, and a reader of the code starts there."""
    module = importlib.import_module(name)
    assert undocumented(module, list(getattr(module, "__all__", []))) == []


def _private(name: str) -> bool:
    """A private member's name: one leading underscore; IPython's ``_repr_*_`` protocol names
    (an underscore at both ends) are public by contract."""
    return name.startswith("_") and not name.startswith("__") and not name.endswith("_")


def private_members_used_across_packages() -> list[str]:
    """Uses of ``something._member`` (not on ``self`` or ``cls``) in one package where only
    other packages define a member of that name: another package's private attribute or
    method, reached from outside (the registry's ``_queue``, a run's ``_after_wait``)."""
    defined: dict[str, set[str]] = defaultdict(set)
    used: list[tuple[str, str, str]] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module, _ = module_name(path)
        package = _package_of(module)
        for node in ast.walk(parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        names = [item.name]
                    elif isinstance(item, ast.Assign | ast.AnnAssign):
                        targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                        names = [t.id for t in targets if isinstance(t, ast.Name)]
                    else:
                        names = []
                    for name in names:
                        if _private(name):
                            defined[name].add(package)
            if not (isinstance(node, ast.Attribute) and _private(node.attr)):
                continue
            on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            if on_self and isinstance(node.ctx, ast.Store):
                defined[node.attr].add(package)
            elif not on_self:
                used.append((package, f"{module}:{node.lineno}", node.attr))
    return [
        f"{where} uses {name}, private to {', '.join(sorted(defined[name]))}"
        for package, where, name in used
        if defined[name] and package not in defined[name]
    ]


def test_no_private_member_is_used_from_another_package():
    assert private_members_used_across_packages() == []


# ── the public surface (shared/DESIGN.md) ───────────────────────────────────────────────────

DESIGN_NAMES = {
    "Envelope",
    "ErrorKind",
    "ToolError",
    "failure",
    "failure_message",
    "from_exception",
    "is_error",
    "is_success",
    "listing",
    "success",
    "success_payload",
    "truncate_for_model",
    "run",
    "Run",
    "compare_runs",
}


def test_design_names_are_exported():
    assert sorted(DESIGN_NAMES - set(workbench.__all__)) == []


def test_every_public_name_comes_from_workbench():
    foreign = [
        name
        for name in workbench.__all__
        if not getattr(getattr(workbench, name), "__module__", "workbench").startswith("workbench")
    ]
    assert foreign == []


def test_model_runs_are_the_models_packages():
    assert workbench.run is workbench.models.run and workbench.Run is workbench.models.Run
    assert workbench.compare_runs is workbench.models.compare_runs


def test_import_workbench_imports_nothing_from_jupyter_and_no_provider_sdk():
    """The core runs in plain Python: a fresh ``import workbench`` loads no Jupyter package and
    no model provider's SDK."""
    code = (
        "import sys, workbench\n"
        "outside = {'ipywidgets', 'IPython', 'traitlets', 'anywidget', 'ipykernel',\n"
        "           'openai', 'anthropic', 'google'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in outside))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
