"""Helpers shared by the widget tests: the XSS payload and a check that it stayed text."""

from __future__ import annotations

import re

# Any tag or event handler that would run if tool text reached the page unescaped.
XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
LIVE_MARKUP = re.compile(r"<(img|script|iframe|svg)\b|\bon\w+\s*=\s*[\"']?window", re.I)


def assert_escaped(html: str) -> None:
    """The payload is in ``html`` as text, never as live markup."""
    assert "&lt;img src=x onerror=" in html or "&lt;script&gt;" in html, html[:500]
    assert not LIVE_MARKUP.search(html), LIVE_MARKUP.search(html)
