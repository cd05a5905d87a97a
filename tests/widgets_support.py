"""Helpers shared by the widget tests: waiting on conditions, and reading a widget's HTML."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

# Any tag or event handler that would run if tool text reached the page unescaped.
XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
LIVE_MARKUP = re.compile(r"<(img|script|iframe|svg)\b|\bon\w+\s*=\s*[\"']?window", re.I)


def wait_until(predicate: Callable[[], object], timeout: float = 5.0) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return bool(predicate())


def assert_escaped(html: str) -> None:
    """The payload is in ``html`` as text, never as live markup."""
    assert "&lt;img src=x onerror=" in html or "&lt;script&gt;" in html, html[:500]
    assert not LIVE_MARKUP.search(html), LIVE_MARKUP.search(html)
