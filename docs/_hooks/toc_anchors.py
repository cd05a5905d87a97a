"""A mkdocs hook: each entry of a notebook page's table of contents reads as its heading does
and links to the heading's own id.

mkdocs-jupyter builds a notebook page's table of contents from its markdown with the inline code
left out, while nbconvert gives each heading an id that keeps it: the heading "``invalid_args``:
the arguments do not fit the schema" is ``#invalid_args-the-arguments-do-not-fit-the-schema`` on
the page and ": the arguments do not fit the schema" linking to ``#the-arguments-do-not-fit-the-
schema`` in the contents, a link that leads nowhere. Here an entry whose anchor is no id on the
page takes the id and the words of the heading that reads as it does once its code is left out.
"""

from __future__ import annotations

import html
import re
from typing import Any

_HEADING = re.compile(r"<h[1-6][^>]*\bid=\"([^\"]+)\"[^>]*>(.*?)</h[1-6]>", re.S)
_PERMALINK = re.compile(r"<a class=\"anchor-link\".*?</a>", re.S)
_CODE = re.compile(r"<code>.*?</code>", re.S)
_TAG = re.compile(r"<[^>]+>")
_ID = re.compile(r"\bid=\"([^\"]+)\"")


def _text(markup: str) -> str:
    """What a piece of HTML reads as: its text, without tags or extra spaces."""
    return " ".join(html.unescape(_TAG.sub("", markup)).split())


def on_page_content(content: str, page: Any, **_: Any) -> str:
    ids = set(_ID.findall(content))
    headings: dict[str, tuple[str, str]] = {}  # the text without code -> (id, the heading)
    for anchor, inner in _HEADING.findall(content):
        words = _PERMALINK.sub("", inner).strip()
        headings.setdefault(_text(_CODE.sub("", words)), (anchor, words))
    entries = list(page.toc or [])
    while entries:
        entry = entries.pop()
        entries.extend(entry.children)
        found = headings.get(_text(entry.title))
        if entry.id not in ids and found is not None:
            entry.id, entry.title = found
    return content
