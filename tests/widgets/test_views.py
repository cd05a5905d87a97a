"""Every family has a result view, a compact form and a static HTML form, from one table keyed
by the family registry; the widgets register them with the core, which never names the widgets."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import ipywidgets
import pytest

import workbench as wb
from tests.widgets.support import XSS, assert_escaped
from workbench import _views
from workbench.families import FAMILIES, family_of
from workbench.runtime._display import call_html
from workbench.widgets import call_card, result_view
from workbench.widgets.results import family_views

PACKAGE = Path(wb.__file__).parent


def envelopes_of_every_family(tools, root: Path) -> dict[str, wb.Envelope]:
    """One real envelope per family, each carrying the XSS payload somewhere it is shown."""
    wb.builtins.register(tools, root=root)
    (root / f"{XSS.replace('/', '')}.txt").write_text(XSS)
    (root / "notes.txt").write_text(f"first\n{XSS}\n")

    @tools.tool
    def data() -> dict:
        return {"name": XSS}

    @tools.tool(family="text")
    def say() -> str:
        return f"# heading\n{XSS}"

    def run(name: str, args: dict | None = None) -> wb.Envelope:
        return tools.invoke(name, args).wait(10)

    found = {
        "json": run("data"),
        "text": run("say"),
        "command": run("shell_exec", {"command": f"printf '%s' '{XSS}'"}),
        "file": run("file_read", {"path": "notes.txt"}),
        "listing": run("file_read", {"path": "."}),
        "failure": run("shell_exec", {"command": "true", "timeout": XSS}),
    }
    compacted = wb.compact(tools.history, budget_chars=10)
    found["compacted"] = next(
        envelope for envelope in compacted.envelopes if family_of(envelope).name == "compacted"
    )
    return found


def test_the_view_table_is_keyed_by_the_family_registry():
    assert set(family_views()) == set(FAMILIES)
    assert _views.families_without_views(FAMILIES) == []
    for name, views in family_views().items():
        assert _views.family_views(name) is views


def test_every_family_has_a_result_view_a_compact_form_and_a_static_form(tools, tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    envelopes = envelopes_of_every_family(tools, root)
    assert set(envelopes) == set(FAMILIES)  # the test itself covers every family
    for name, envelope in envelopes.items():
        assert family_of(envelope).name == name
        views = _views.family_views(name)
        assert views is not None, name

        view = result_view(envelope)
        assert isinstance(view, ipywidgets.Widget), name
        shown = view.static_html()
        assert shown == views.static(envelope), name

        compact = views.compact(envelope)
        assert compact.startswith(f"<div class='wb-compact wb-compact-{name}'>"), name
        assert "\n" not in compact and "<pre" not in compact, name
        assert (envelope.tool_name or "tool") in compact, name

        static = views.static(envelope)
        marker = {"failure": "wb-failure", "listing": "wb-listing"}.get(name, f"wb-result-{name}")
        assert re.match(rf"<div class='([\w-]+ )?{marker}'>", static), (name, static[:200])
        if name != "compacted":  # a collapsed line keeps the tool and summary only
            assert_escaped(static)


def test_a_compacted_envelope_shows_its_line_and_where_it_came_from(tools, tmp_path):
    envelope = envelopes_of_every_family(tools, tmp_path)["compacted"]
    html = result_view(envelope).static_html()
    assert "wb-compacted-line" in html and "collapsed by compaction" in html
    assert envelope.result["line"].split(":")[0] in html


def test_a_call_finds_its_card_through_the_registration(tools):
    @tools.tool
    def one() -> int:
        return 1

    call = tools.invoke("one")
    call.wait(5)
    factory = _views.view("card")
    assert factory is not None
    assert isinstance(factory(call), call_card.CallCard)
    assert factory(call) is call_card.card(call)  # one card per call


def test_the_static_form_of_a_failed_call_is_the_failure_card(tools):
    @tools.tool
    def fetch(url: str) -> dict:
        """Fetch a page."""
        return wb.failure(
            "not_found", "no page there", field="url", expected="a URL", recovery_hint="retry"
        )

    call = tools.invoke("fetch", {"url": "x"})
    call.wait(5)
    html = call_html(call)
    assert "class='wb-failure'" in html and "<dt>field</dt><dd><code>url</code></dd>" in html
    assert "<dt>expected</dt>" in html and "<dt>recovery hint</dt>" in html
    # Outside a kernel the bundle is static, and it is this form.
    assert call._repr_mimebundle_()["text/html"] == html


# ── one direction: no core module imports or names the widgets ──────────────────────────
def widget_mentions(source: str) -> list[str]:
    """Where ``source`` imports ``workbench.widgets`` or names it in a string."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("workbench.widgets")]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.startswith("workbench.widgets") or (
                module == "workbench" and any(a.name == "widgets" for a in node.names)
            ):
                found.append(f"from {module} import …")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and "workbench.widgets" in node.value
        ):
            found.append(repr(node.value[:60]))
    return found


def core_modules() -> list[Path]:
    """Every module of the package but the widgets and the top-level facade."""
    return sorted(
        path
        for path in PACKAGE.rglob("*.py")
        if "widgets" not in path.relative_to(PACKAGE).parts and path != PACKAGE / "__init__.py"
    )


def test_the_check_finds_a_core_module_reaching_for_the_widgets():
    # What the core did before it looked views up: the check must catch each form.
    assert widget_mentions('importlib.import_module("workbench.widgets")')
    assert widget_mentions("from workbench.widgets.call_card import card")
    assert widget_mentions("import workbench.widgets")
    assert widget_mentions("from workbench import widgets")
    assert not widget_mentions("from workbench import _views")


def test_no_core_module_imports_or_names_the_widgets():
    modules = core_modules()
    assert PACKAGE / "runtime" / "_display.py" in modules and PACKAGE / "_views.py" in modules
    # Parsed in a fresh interpreter: Python 3.11's AST builder can be left with a miscounted
    # recursion depth by an earlier test's RecursionError in this process ("AST constructor
    # recursion depth mismatch"), which says nothing about the modules read here.
    code = (
        "import json, sys; from pathlib import Path; "
        "from tests.widgets.test_views import core_modules, widget_mentions, PACKAGE; "
        "print(json.dumps({str(p.relative_to(PACKAGE)): f for p in core_modules() "
        "if (f := widget_mentions(p.read_text(encoding='utf-8')))}))"
    )
    root = PACKAGE.parent
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {}


@pytest.mark.parametrize("module", ["workbench.runtime._display", "workbench._views"])
def test_the_display_modules_import_without_the_widgets(module):
    code = f"import {module}, sys; print('workbench.widgets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_importing_the_widgets_registers_them():
    for key in ("card", "history", "registry"):
        assert _views.view(key) is not None, key
