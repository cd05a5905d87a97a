"""Escaping for HTML, in one place: everything a tool returns is untrusted text.

``esc`` is how any value's text reaches HTML anywhere in workbench; ``pretty_json`` is the
readable JSON people are shown (escape it before it becomes HTML). Terminal escape sequences
never reach a page raw: ``esc`` drops them (a view that draws their colours splits them out
first) and shows any other control character as its Unicode picture (``␛``, ``␇``).
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

TERMINAL_ESCAPE = re.compile(
    r"\x1b(?:\[([0-9;?]*)([A-Za-z])|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_]?)"
)
"""One terminal escape sequence: CSI (ESC [ params letter), OSC (ESC ] … BEL or ESC \\), or ESC
and one character."""

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""Control characters a page would not show (tab, newline and carriage return are text)."""


def _picture(found: re.Match[str]) -> str:
    code = ord(found.group())
    return "\u2421" if code == 0x7F else chr(0x2400 + code)


def esc(value: object) -> str:
    """HTML-escape any value's text, quotes included; terminal escape sequences dropped and
    other control characters shown as their pictures."""
    text = str(value)
    if _CONTROL.search(text) is not None:
        text = _CONTROL.sub(_picture, TERMINAL_ESCAPE.sub("", text))
    return html.escape(text, quote=True)


def pretty_json(value: Any) -> str:
    """Readable JSON for people: indented, unicode kept."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=repr)
