"""Escaping for HTML, in one place: everything a tool returns is untrusted text.

``esc`` is how any value's text reaches HTML anywhere in workbench; ``pretty_json`` is the
readable JSON people are shown (escape it before it becomes HTML).
"""

from __future__ import annotations

import html
import json
from typing import Any


def esc(value: object) -> str:
    """HTML-escape any value's text, quotes included."""
    return html.escape(str(value), quote=True)


def pretty_json(value: Any) -> str:
    """Readable JSON for people: indented, unicode kept."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=repr)
