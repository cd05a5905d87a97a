"""ANSI colour codes in tool output (pytest, git, ``ls --color``), drawn as coloured spans.

Only SGR codes (``ESC [ … m``: colours, bold, dim, italic, underline) become styling, as
``wb-ansi-*`` classes whose colours come from JupyterLab's theme variables; every other escape
sequence (cursor movement, titles) is dropped. The text between codes is escaped, so output
can never become markup. ``static/output.js`` applies the same rules in the browser.
"""

from __future__ import annotations

from workbench.output import ESCAPE
from workbench.widgets._html import esc

_FLAGS = {1: "bold", 2: "dim", 3: "italic", 4: "underline"}
_UNSET = {22: ("bold", "dim"), 23: ("italic",), 24: ("underline",)}


class _Style:
    def __init__(self) -> None:
        self.flags: set[str] = set()
        self.fg: int | None = None
        self.bg: int | None = None

    def reset(self) -> None:
        self.flags.clear()
        self.fg = self.bg = None

    def apply(self, params: str) -> None:
        parts = params.split(";") if params else ["0"]
        codes = [int(part) if part.isdigit() else 0 for part in parts]
        index = 0
        while index < len(codes):
            code = codes[index]
            index += 1
            if code == 0:
                self.reset()
            elif code in _FLAGS:
                self.flags.add(_FLAGS[code])
            elif code in _UNSET:
                self.flags.difference_update(_UNSET[code])
            elif 30 <= code <= 37 or 90 <= code <= 97:
                self.fg = code % 10
            elif 40 <= code <= 47 or 100 <= code <= 107:
                self.bg = code % 10
            elif code == 39:
                self.fg = None
            elif code == 49:
                self.bg = None
            elif code in (38, 48) and index < len(codes):
                # 256-colour and true-colour forms: the low 16 of a palette map, the rest is
                # skipped (its parameters must not be read as codes of their own).
                mode = codes[index]
                if mode == 5 and index + 1 < len(codes):
                    colour = codes[index + 1]
                    if colour < 16:
                        setattr(self, "fg" if code == 38 else "bg", colour % 8)
                    index += 2
                elif mode == 2:
                    index += 4
                else:
                    index += 1

    def classes(self) -> str:
        names = [f"wb-ansi-{flag}" for flag in sorted(self.flags)]
        if self.fg is not None:
            names.append(f"wb-ansi-fg-{self.fg}")
        if self.bg is not None:
            names.append(f"wb-ansi-bg-{self.bg}")
        return " ".join(names)


def ansi_runs(text: str) -> list[tuple[str, str]]:
    """``text`` as ``(classes, plain text)`` runs: escape codes removed, SGR codes turned into
    the classes of the text after them (``""`` for unstyled text)."""
    style = _Style()
    runs: list[tuple[str, str]] = []
    at = 0
    for match in ESCAPE.finditer(text):
        if match.start() > at:
            runs.append((style.classes(), text[at : match.start()]))
        if match.group(2) == "m":
            style.apply(match.group(1) or "")
        at = match.end()
    if at < len(text):
        runs.append((style.classes(), text[at:]))
    return runs


def has_ansi(text: str) -> bool:
    """True when ``text`` holds an escape character."""
    return "\x1b" in text


def strip_ansi(text: str) -> str:
    """``text`` without any escape sequence."""
    return ESCAPE.sub("", text) if has_ansi(text) else text


def ansi_html(text: str) -> str:
    """``text`` escaped, its SGR colours as ``<span class='wb-ansi-…'>`` runs."""
    if not has_ansi(text):
        return esc(text)
    return "".join(
        f"<span class='{classes}'>{esc(run)}</span>" if classes else esc(run)
        for classes, run in ansi_runs(text)
    )


def ansi_pre(text: str, cls: str = "") -> str:
    """Preformatted output with its ANSI colours drawn."""
    return f"<pre class='{esc(cls)}'>{ansi_html(text)}</pre>"
