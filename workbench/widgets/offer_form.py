"""A form for a connected server's prompt or resource template, whose fields offer the server's
completions as the person types.

Each argument (a prompt's arguments, a template's variables) is a text box with a list of
suggestions (``ipywidgets.Combobox``, a ``<datalist>`` in the browser). The suggestions come
from ``conn.complete(...)``, with the other fields' values as context (a server may narrow one
argument by another), and the asking is bounded: when the form is made, the first
``ASKED_PER_CHANGE`` fields are asked for; when a field is typed in, that field first, then the
fields after it, ``ASKED_PER_CHANGE`` in all, within ``ASKING_BUDGET_S`` seconds together. A
form of 10,000 arguments opens at once, and says which fields it has not asked for yet. The
button gets the prompt's messages (``conn.prompt``) or reads the resource the filled-in template
names (``conn.read``). A server without completions gets a form without suggestions; a
completion that fails is named on the form, never raised into the kernel.
"""

from __future__ import annotations

import json
import re
import time
import urllib.parse
from typing import TYPE_CHECKING, Any

import ipywidgets

from workbench.widgets._html import esc, pre, shared_style
from workbench.widgets._view import LiveView

if TYPE_CHECKING:
    from workbench.mcp import Connection

ASKED_PER_CHANGE = 8
"""The most fields whose suggestions are asked for when the form is made, or when a field is
typed in."""
ASKING_BUDGET_S = 5.0
"""How long the completions asked for at once may take together."""

_EXPRESSION = re.compile(r"\{([+#./;?&]?)([^{}]*)\}")
_SEPARATORS = {"": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&"}
_FIRST = {"": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";", "?": "?", "&": "&"}
_RESERVED = ":/?#[]@!$&'()*+,;="


def _variables(expression: str) -> list[tuple[str, int | None]]:
    """Each variable of an expression and its prefix length (``{var:3}``); an explode mark
    (``*``) changes nothing for a string value."""
    found = []
    for part in expression.split(","):
        name, _, prefix = part.rstrip("*").partition(":")
        if name:
            found.append((name, int(prefix) if prefix.isdigit() else None))
    return found


def template_variables(uri_template: str) -> list[str]:
    """The variable names of an RFC 6570 URI template, in order, each once."""
    names: list[str] = []
    for match in _EXPRESSION.finditer(uri_template):
        names += [name for name, _ in _variables(match.group(2)) if name not in names]
    return names


def expand(uri_template: str, values: dict[str, str]) -> str:
    """The URI ``uri_template`` names with ``values`` (RFC 6570 with string values: simple,
    reserved, fragment, label, path, parameter and query expressions, prefixes). A variable
    without a value is left out, as the RFC says of an undefined one."""

    def one(match: re.Match[str]) -> str:
        operator = match.group(1)
        safe = _RESERVED if operator in ("+", "#") else ""
        named = operator in (";", "?", "&")
        parts = []
        for name, prefix in _variables(match.group(2)):
            value = values.get(name)
            if value is None or (value == "" and not named):
                continue
            value = value if prefix is None else value[:prefix]
            quoted = urllib.parse.quote(value, safe=safe)
            parts.append(f"{name}={quoted}" if named and value else name if named else quoted)
        if not parts:
            return ""
        return _FIRST[operator] + _SEPARATORS[operator].join(parts)

    return _EXPRESSION.sub(one, uri_template)


class OfferForm(LiveView, ipywidgets.VBox):  # type: ignore[misc]
    """A form for ``conn``'s prompt (``prompt=`` its name) or resource template (``template=``
    its ``uriTemplate``), CSS class ``wb-offer-form``.

    ``fields`` maps each argument to its text box (``options``: the server's suggestions);
    ``suggest(name)`` asks the server again; ``submit()`` (the button) gets the prompt's
    messages or reads the resource, keeps it on ``result`` and shows it below the form. What
    is typed and what was fetched are kept in the form a saved notebook shows, as they change.
    """

    def __init__(
        self, conn: Connection, *, prompt: str | None = None, template: str | None = None
    ) -> None:
        super().__init__()
        if (prompt is None) == (template is None):
            raise ValueError("name one of prompt= (a prompt's name) or template= (a uriTemplate)")
        self.conn = conn
        self.prompt_name = prompt
        self.template = template
        self.title, self.description, arguments = self._offer()
        self.fields: dict[str, ipywidgets.Combobox] = {}
        rows = []
        # One layout and one style for every box: a form of many arguments is many widgets.
        layout = ipywidgets.Layout(width="auto")
        style = ipywidgets.widgets.widget_string.TextStyle(description_width="initial")
        for name, description, required in arguments:
            box = ipywidgets.Combobox(
                options=[],
                ensure_option=False,
                placeholder=description,
                description=name + (" *" if required else ""),
                style=style,
                layout=layout,
            )
            box.add_class("wb-offer-field")
            box.observe(lambda _change, typed=name: self._suggest_from(typed), names="value")
            box.observe(lambda _change: self._shown_changed(), names="value")
            self.fields[name] = box
            rows.append(box)
        self.note = ipywidgets.HTML()
        self.button = ipywidgets.Button(description="Get prompt" if prompt else "Read")
        self.button.on_click(lambda _button: self.submit())
        self.output = ipywidgets.HTML()
        self.output.observe(lambda _change: self._shown_changed(), names="value")
        self.result: Any = None
        header = ipywidgets.HTML(self._header_html())
        self.children = (shared_style(), header, *rows, self.note, self.button, self.output)
        self.add_class("wb-offer-form")
        self._suggest_from(None)

    def _shown_changed(self) -> None:
        """A field typed in or a result shown: the saved forms follow (a notebook saved now
        keeps the arguments typed and the prompt fetched)."""
        self._keep_saved_form()
        self._republish()

    def _offer(self) -> tuple[str, str, list[tuple[str, str, bool]]]:
        """The offer's title, description and arguments (name, description, required)."""
        if self.prompt_name is not None:
            listed = {p["name"]: p for p in self.conn.prompts()}
            if self.prompt_name not in listed:
                raise ValueError(
                    f"the server has no prompt {self.prompt_name!r}; it has "
                    f"{', '.join(listed) or 'none'}"
                )
            offer = listed[self.prompt_name]
            arguments = [
                (str(a["name"]), str(a.get("description", "")), bool(a.get("required")))
                for a in offer.get("arguments", [])
            ]
            return self.prompt_name, str(offer.get("description", "")), arguments
        assert self.template is not None
        templates = {t["uriTemplate"]: t for t in self.conn.resource_templates()}
        offer = templates.get(self.template, {})
        arguments = [(name, "", True) for name in template_variables(self.template)]
        return self.template, str(offer.get("description", "")), arguments

    def _header_html(self) -> str:
        kind = "prompt" if self.prompt_name is not None else "resource template"
        text = f"<div class='wb-label'>{esc(kind)} <code>{esc(self.title)}</code></div>"
        if self.description:
            text += f"<div class='wb-form-help'>{esc(self.description)}</div>"
        return text

    # ── suggestions ──────────────────────────────────────────────────────────────────────
    def values(self) -> dict[str, str]:
        """The values typed so far, empty ones left out."""
        return {name: box.value for name, box in self.fields.items() if box.value}

    def suggest(self, name: str, *, timeout: float | None = None) -> list[str]:
        """Ask the server for ``name``'s suggestions now (the others' values as context), put
        them on its box and return them (within ``timeout`` seconds, the completion's default
        when None). Raises what ``conn.complete`` raises."""
        box = self.fields[name]
        context = {key: value for key, value in self.values().items() if key != name}
        limit = {} if timeout is None else {"timeout": timeout}
        suggestions = self.conn.complete(
            name,
            box.value,
            prompt=self.prompt_name,
            template=self.template,
            context=context or None,
            **limit,
        )
        box.options = tuple(suggestions)
        return suggestions

    def _suggest_from(self, typed: str | None) -> None:
        """Ask for the suggestions of ``typed`` (None: of the first fields) and the fields after
        it, bounded (see the module docstring); what was not asked is said on the form."""
        if not self.conn.completes:
            return
        names = list(self.fields)
        start = 0 if typed is None else names.index(typed)
        order = names[start:] + names[:start]
        asked, problems = order[:ASKED_PER_CHANGE], []
        deadline = time.monotonic() + ASKING_BUDGET_S
        for name in asked:
            left = deadline - time.monotonic()
            if left <= 0:
                problems.append(f"{name}: no time left ({ASKING_BUDGET_S:g} s for {len(asked)})")
                continue
            try:
                self.suggest(name, timeout=left)
            except Exception as exc:  # shown on the form: a keystroke must not raise
                problems.append(f"{name}: {exc}")
        notes = []
        if problems:
            notes.append(f"no suggestions for {'; '.join(problems)}")
        if len(names) > len(asked):
            notes.append(
                f"suggestions asked for {len(asked)} of {len(names):,} fields; type in a field "
                "to ask for its own"
            )
        self.note.value = "".join(f"<div class='wb-warnings'>{esc(note)}</div>" for note in notes)

    # ── the result ───────────────────────────────────────────────────────────────────────
    def submit(self) -> Any:
        """Get the prompt's messages, or read the resource the filled-in template names; the
        result is kept on ``result``, shown below the form and returned."""
        values = self.values()
        try:
            if self.prompt_name is not None:
                self.result = self.conn.prompt(self.prompt_name, values)
            else:
                assert self.template is not None
                self.result = self.conn.read(expand(self.template, values))
        except Exception as exc:  # shown on the form, where the person pressed the button
            self.result = None
            self.output.value = f"<div class='wb-warnings'>{esc(exc)}</div>"
            return None
        self.output.value = self._result_html()
        return self.result

    def _result_html(self) -> str:
        result = self.result
        if result is None:
            return ""
        if isinstance(result, list):
            parts = []
            for message in result:
                content = message.get("content", {})
                text = content.get("text") if isinstance(content, dict) else None
                shown = text if isinstance(text, str) else json.dumps(content, indent=2)
                parts.append(f"<div class='wb-label'>{esc(message.get('role', ''))}</div>")
                parts.append(pre(shown, "wb-offer-message"))
            return "".join(parts)
        if not result.ok:
            return f"<div class='wb-warnings'>{esc(result.error.message)}</div>"
        return f"<div class='wb-label'>{esc(result.summary_text)}</div>" + pre(
            result.result["text"], "wb-offer-read"
        )

    def static_html(self) -> str:
        """The form as it is now, its fields and what they hold, as escaped HTML."""
        rows = []
        for name, box in self.fields.items():
            listed = f"wb-offer-{id(self):x}-{esc(name)}"
            options = "".join(f"<option value='{esc(option)}'>" for option in box.options)
            rows.append(
                f"<div class='wb-form-field'><label>{esc(box.description)} "
                f"<input class='wb-offer-field' list='{listed}' value='{esc(box.value)}' "
                f"readonly></label><datalist id='{listed}'>{options}</datalist></div>"
            )
        return (
            f"<div class='wb-offer-form wb-static'>{self._header_html()}{''.join(rows)}"
            f"{self.note.value}{self.output.value}</div>"
        )


__all__ = ["OfferForm", "expand", "template_variables"]
