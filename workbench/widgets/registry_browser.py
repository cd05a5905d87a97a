"""The registry browser: every tool, what a model sees of it, and a form to call it.

For each tool: its metadata badges, its model-visible schema, its exports (OpenAI, Anthropic,
MCP), the resilience matrix, what each provider would refuse, what each agent framework would
send for the function it was declared from (``wb.declare.framework_views``), and an Invoke tab
with a form generated from the schema or a raw-JSON box for the malformed arguments models
really send.
Invoke calls ``Registry.invoke`` and shows the call's card below; the browser adds no logic.
The browser follows its registry: a tool registered or unregistered later (a closed MCP
connection removes its tools) shows there a moment after.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import ipywidgets as widgets

from workbench.declare import Target, export_tool, verdict_table
from workbench.widgets._html import badge, details, esc, pre, pretty_json
from workbench.widgets._kernel_controls import kernel_controls_html
from workbench.widgets._schema_form import SchemaForm
from workbench.widgets._static import style_tag, table_html
from workbench.widgets._timer import call_later
from workbench.widgets._view import LiveView

if TYPE_CHECKING:
    import pandas as pd

    from workbench.declare import ToolSpec
    from workbench.registry import Registry
    from workbench.runtime import Call

Tone = Literal["safe", "danger", "warn", "info"]
Mode = Literal["form", "raw"]
TABS: tuple[str, ...] = ("Invoke", "Schema", "OpenAI", "Anthropic", "MCP", "Resilience")
# Short titles: at 1024 px, longer ones wrap the tab bar onto a second row.
TABS += ("Checks", "Frameworks")
FRAMEWORKS_TAB = TABS.index("Frameworks")
RESILIENCE_COLUMNS = ("case", "input", "outcome", "arguments", "coercions", "field", "message")
CHECK_COLUMNS = ("target", "severity", "problem", "fix")
EXPORT_TABS: tuple[Target, ...] = ("openai", "anthropic", "mcp")
# A burst of changes (a connection registering its tools one by one) is one reload.
FOLLOW_DELAY_S = 0.1
_PERMISSION_TONES: dict[str, Tone] = {"always_allow": "info", "always_ask": "warn"}


def badges(spec: ToolSpec, permission: str) -> list[tuple[str, Tone]]:
    """The metadata badges of a tool, ``(label, tone)``; ``permission`` is the one in force."""
    found: list[tuple[str, Tone]] = []
    if spec.read_only:
        found.append(("read-only", "safe"))
    if spec.destructive:
        found.append(("destructive", "danger"))
    if spec.idempotent:
        found.append(("idempotent", "info"))
    if spec.open_world:
        found.append(("open world", "warn"))
    found.append((f"permission: {permission}", _PERMISSION_TONES.get(permission, "danger")))
    found.append((f"ownership: {spec.ownership}", "info"))
    found.append((f"family: {spec.family}", "info"))
    if spec.streaming:
        found.append(("streaming", "info"))
    if spec.serial:
        found.append(("serial", "info"))
    if spec.interrupt == "block":
        found.append(("not interruptible", "warn"))
    found.append(("no timeout" if spec.timeout is None else f"timeout {spec.timeout:g} s", "info"))
    found.extend((f"effect: {effect}", "warn") for effect in spec.effects)
    return found


def badges_html(spec: ToolSpec, permission: str) -> str:
    """The badges as escaped HTML spans."""
    return " ".join(badge(label, f"wb-badge-{tone}") for label, tone in badges(spec, permission))


def _json_html(value: Any) -> str:
    return pre(pretty_json(value), "wb-json-text")


def resilience_html(frame: pd.DataFrame) -> str:
    """The resilience matrix as a summary line and an escaped table."""
    outcomes = frame["outcome"].value_counts().to_dict() if not frame.empty else {}
    summary = ", ".join(f"{outcomes.get(o, 0)} {o}" for o in ("accepted", "coerced", "refused"))
    table = table_html(frame, columns=RESILIENCE_COLUMNS, css_class="wb-table wb-resilience")
    return (
        f"<p class='wb-resilience-summary'>{len(frame)} cases sent through the preflight only: "
        f"{esc(summary)}.</p><div class='wb-registry-scroll'>{table}</div>"
    )


class RegistryBrowser(LiveView, widgets.VBox):  # type: ignore[misc]
    """Every tool of ``tools`` with its badges, schema, exports and checks, and a form that
    invokes it (``wb-registry``). Cards of the calls made appear below the form."""

    shared_stylesheet = False  # its static HTML starts with its own stylesheets

    def __init__(self, tools: Registry) -> None:
        self.tools = tools
        self.calls: list[Call] = []
        self.form = SchemaForm({})
        self.checks: pd.DataFrame  # check_exports(), read by reload()
        self.overview = widgets.HTML()
        self.picker = widgets.Dropdown(description="Tool")
        self.reload_button = widgets.Button(description="Reload tools", icon="refresh")
        self.header = widgets.HTML()
        self.mode = widgets.ToggleButtons(options=[("Form", "form"), ("Raw JSON", "raw")])
        self.form_box = widgets.VBox()
        self.raw = widgets.Textarea(
            placeholder='Sent exactly as typed, e.g. {"limit": "5"} or {"pattern": *.py}',
            rows=4,
            layout=widgets.Layout(width="100%"),
        )
        self.raw.add_class("wb-raw-args")
        self.invoke_button = widgets.Button(description="Invoke", button_style="primary")
        self.invoke_button.add_class("wb-invoke")
        self.output = widgets.Output()
        self.panels = {name: widgets.HTML() for name in TABS[1:]}
        invoke_panel = widgets.VBox([self.mode, self.form_box, self.invoke_button, self.output])
        self.tabs = widgets.Tab(children=[invoke_panel, *self.panels.values()], titles=list(TABS))
        super().__init__(
            [
                widgets.HTML(style_tag("registry.css")),
                self.overview,
                widgets.HBox([self.picker, self.reload_button]),
                self.header,
                self.tabs,
            ]
        )
        self.add_class("wb-registry")
        self._showing = True
        self.picker.observe(self._picked, names="value")
        self.tabs.observe(lambda _: self._fill_frameworks(), names="selected_index")
        self.mode.observe(lambda _: self._show_mode(), names="value")
        self.invoke_button.on_click(lambda _: self.invoke())
        self.reload_button.on_click(lambda _: self.reload())
        self.removed: list[str] = []
        self._shown_names: list[str] = []
        self._reload_pending = False
        self.reload()
        self.stop_following = tools.on_change(self._registry_changed)

    def _registry_changed(self) -> None:
        if self._reload_pending:
            return
        self._reload_pending = True

        def reload() -> None:
            self._reload_pending = False
            try:
                self.reload()
            except KeyError:
                # A tool went while this read the registry: that change scheduled the next
                # reload (this one had already cleared the flag), which reads it whole.
                return

        call_later(FOLLOW_DELAY_S, reload)

    def reload(self) -> None:
        """Read the registry again: its tools, their export checks, the overview."""
        self.checks = self.tools.check_exports()
        names = self.tools.names()
        gone = [name for name in self._shown_names if name not in names]
        self.removed = [*(n for n in self.removed if n not in names), *gone]
        self._shown_names = names
        with self.hold_sync():
            self.overview.value = self._overview_html()
            self.invoke_button.disabled = not names
            current = self.picker.value if self.picker.value in names else None
            self._showing = False  # one show_tool below, not one per picker change
            self.picker.options = names
            self.picker.value = current or next(iter(names), None)
            self._showing = True
        self.show_tool(self.picker.value)
        self._republish()

    def _picked(self, _change: object) -> None:
        if self._showing:
            self.show_tool(self.picker.value)

    def show_tool(self, name: str | None) -> None:
        """Show one tool: header, form, schema, exports, resilience and export checks."""
        if name is None or name not in self.tools:
            self.header.value = "<p class='wb-registry-empty'>No tools registered.</p>"
            self.form = SchemaForm({})
            self.form_box.children = ()
            return
        spec = self.tools.spec(name)
        self.form = SchemaForm(spec.input_schema)
        problems = self.checks[self.checks["tool"] == name]
        with self.hold_sync():
            self.header.value = self._tool_html(spec)
            self.raw.value = ""
            self.panels["Schema"].value = _json_html(spec.input_schema) + (
                ""
                if spec.output_schema is None
                else "<b>Output schema</b>" + _json_html(spec.output_schema)
            )
            for target, title in zip(EXPORT_TABS, ("OpenAI", "Anthropic", "MCP"), strict=True):
                self.panels[title].value = _json_html(export_tool(spec, target))
            self.panels["Resilience"].value = resilience_html(self.tools.resilience(name))
            verdicts = verdict_table(self.checks, [name]).reset_index()
            self.panels["Checks"].value = table_html(
                verdicts, css_class="wb-table wb-verdicts"
            ) + table_html(
                problems,
                columns=CHECK_COLUMNS,
                css_class="wb-table wb-checks",
                empty="Every provider accepts this tool as declared.",
            )
            self.panels["Frameworks"].value = ""  # made when the tab is opened
            self._show_mode()
        self._fill_frameworks()

    def _fill_frameworks(self) -> None:
        """The Frameworks tab, when it is open: what each framework would send for the
        function the tool was declared from (made then: the frameworks take a moment to
        import)."""
        panel = self.panels["Frameworks"]
        if self.tabs.selected_index != FRAMEWORKS_TAB or panel.value:
            return
        name = self.picker.value
        tool = self.tools.get(name) if name is not None else None
        if tool is None:
            return
        if tool.declared_from is None:
            panel.value = (
                "<p class='wb-registry-empty'>This tool was not declared from a Python function "
                "(a hand-written schema, another framework's tool or an MCP server's), so there "
                "is no function for the other frameworks to read.</p>"
            )
            return
        from workbench.declare import framework_views

        panel.value = framework_views(tool.declared_from)._repr_html_()

    def _show_mode(self) -> None:
        if self.mode.value == "raw":
            if not self.raw.value:  # start from the form's arguments, ready to be broken
                self.raw.value = pretty_json(self.form.arguments())
            self.form_box.children = (self.raw,)
        else:
            self.form_box.children = (self.form.widget,)

    def arguments(self) -> Any:
        """What Invoke sends: the form's arguments, or in raw mode the text exactly as typed."""
        return self.raw.value if self.mode.value == "raw" else self.form.arguments()

    def invoke(self) -> Call:
        """Invoke the selected tool with ``arguments()`` and show the call's card below."""
        from workbench.widgets.call_card import card

        call = self.tools.invoke(self.picker.value, self.arguments())
        self.calls.append(call)
        # The saved form shows the call's card as it ended.
        card(call).listeners.append(self._republish)
        # The call's own mime bundle is its live card in a kernel, static HTML elsewhere;
        # appending it (rather than `with output: display(...)`) works from any thread.
        bundle = call._repr_mimebundle_() or {"text/plain": repr(call)}
        self.output.outputs = (
            *self.output.outputs,
            {"output_type": "display_data", "data": bundle, "metadata": {}},
        )
        self._republish()
        return call

    def _tool_html(self, spec: ToolSpec) -> str:
        return (
            f"<div class='wb-tool-header'><b class='wb-tool-name'>{esc(spec.name)}</b> "
            f"{badges_html(spec, self.tools.permission(spec.name))}"
            f"<div class='wb-tool-description'>{esc(spec.description)}</div></div>"
        )

    def _overview_html(self) -> str:
        rows = []
        for spec in self.tools.specs():
            problems = int((self.checks["tool"] == spec.name).sum())
            first_line = next(iter(spec.description.strip().splitlines()), "")
            rows.append(
                f"<tr><td><b>{esc(spec.name)}</b></td>"
                f"<td>{badges_html(spec, self.tools.permission(spec.name))}</td>"
                f"<td>{esc(first_line)}</td><td>{problems or ''}</td></tr>"
            )
        removed = ""
        if self.removed:
            names = ", ".join(self.removed[:12]) + (" …" if len(self.removed) > 12 else "")
            removed = (
                f"<p class='wb-registry-removed'>{len(self.removed)} "
                f"tool{'s' * (len(self.removed) != 1)} unregistered since this browser opened "
                f"(closing an MCP connection unregisters its tools): {esc(names)}</p>"
            )
        if not rows:
            return f"<p class='wb-registry-empty'>No tools registered.</p>{removed}"
        return removed + (
            "<table class='wb-table wb-registry-overview'><thead><tr><th>tool</th>"
            "<th>metadata</th><th>description</th><th>export problems</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
        )

    def static_html(self) -> str:
        """The static, escaped HTML form: every tool with its badges and schema, the export
        checks, and the calls made here."""
        tools = "".join(
            details(self._tool_html(spec), _json_html(spec.input_schema), cls="wb-tool")
            for spec in self.tools.specs()
        )
        checks = table_html(
            self.checks, css_class="wb-table wb-checks", empty="No export problems."
        )
        verdicts = table_html(
            verdict_table(self.checks, self.tools.names()).reset_index(),
            css_class="wb-table wb-verdicts",
            empty="No tools registered.",
        )
        cards = self._calls_html()
        # The calls' cards need the cards' stylesheet; every stylesheet goes first.
        cards_style = style_tag("workbench.css") if cards else ""
        return (
            f"{style_tag('registry.css')}{cards_style}<div class='wb-registry wb-static'>"
            f"{self._overview_html()}{kernel_controls_html('Invoke', 'Reload tools')}"
            f"{tools}<h4>Dialect verdicts</h4>{verdicts}"
            f"<h4>Export checks</h4>{checks}{cards}</div>"
        )

    def _calls_html(self) -> str:
        """The cards of the calls made here, as their static forms."""
        if not self.calls:
            return ""
        from workbench.widgets.call_card import card

        cards = "".join(card(call).static_html() for call in self.calls)
        return f"<h4>Calls made here</h4>{cards}"
