"""HTML helpers shared by every workbench widget: escaping, safe markdown, JSON trees, the CSS.

Promise: whatever text a function here is given (tool output, arguments, error messages) comes
back escaped. No tag, attribute or event handler of the input survives; the only markup
produced is the markdown subset of :func:`markdown_html` (whose links are http(s) only) and the
structure these functions write themselves. Other widget modules import these helpers, so their
names and signatures are stable: ``esc``, ``pretty_json``, ``CSS``, ``style_tag``, ``badge``,
``details``, ``pre``, ``markdown_html``, ``json_tree_html``, ``with_html``, ``shared_style``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from workbench._html import esc, pretty_json

STATIC = Path(__file__).parent / "static"

CSS: str = (STATIC / "workbench.css").read_text(encoding="utf-8")
"""The stylesheet of every ``wb-`` class, for live widgets and static HTML alike."""

_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_SPACE_AROUND = re.compile(r"\s*([{};])\s*")


def compact_css(css: str) -> str:
    """``css`` on one line, without comments and the spaces around braces and semicolons:
    every saved card carries its stylesheet, so its size counts (a third less, saved as one
    JSON string instead of one per line). Selectors keep their spaces."""
    return _SPACE_AROUND.sub(r"\1", " ".join(_COMMENT.sub("", css).split()))


_COMPACT_CSS = compact_css(CSS)


def style_tag() -> str:
    """``<style>`` holding :data:`CSS` (compacted): put once at the top of a static form or a
    live view."""
    return f"<style>{_COMPACT_CSS}</style>"


def badge(text: object, *classes: str) -> str:
    """A small pill: ``<span class="wb-badge ...">text</span>``; ``classes`` are ours, not data."""
    names = " ".join(("wb-badge", *classes))
    return f"<span class='{esc(names)}'>{esc(text)}</span>"


def details(summary: str, body: str, *, open: bool = False, cls: str = "wb-details") -> str:
    """A collapsible block. ``summary`` and ``body`` are HTML the caller already escaped."""
    flag = " open" if open else ""
    return f"<details class='{esc(cls)}'{flag}><summary>{summary}</summary>{body}</details>"


def pre(text: object, cls: str = "") -> str:
    """Preformatted, escaped text."""
    return f"<pre class='{esc(cls)}'>{esc(text)}</pre>"


def with_html(bundle: dict[str, Any] | None, html: str) -> dict[str, Any]:
    """A widget's mimebundle plus ``text/html``, so nbconvert and GitHub show ``html`` where
    no widget manager runs (front ends with one prefer the widget view)."""
    return {**(bundle or {}), "text/html": html}


# ── markdown: escape first, then a small subset ─────────────────────────────────────────
_HOLE = "\x00"
_CODE = re.compile(r"`([^`\n]+)`")
# Escaping has already turned quotes and angle brackets into entities, so a URL cannot end
# an attribute; only the scheme needs checking, and the pattern admits http(s) alone.
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^\s)]+)\)")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_ITALIC = re.compile(r"(?<![\w*])[*_](?=\S)([^*_\n]+?)(?<=\S)[*_](?![\w*])")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+(.*)$")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")


def _inline(text: str) -> str:
    holes: list[str] = []

    def hole(html: str) -> str:
        holes.append(html)
        return f"{_HOLE}{len(holes) - 1}{_HOLE}"

    out = esc(text)
    out = _CODE.sub(lambda m: hole(f"<code>{m.group(1)}</code>"), out)
    out = _LINK.sub(
        lambda m: hole(
            f"<a href='{m.group(2)}' target='_blank' rel='noopener noreferrer nofollow'>"
            f"{_emphasis(m.group(1))}</a>"
        ),
        out,
    )
    out = _emphasis(out)
    return re.sub(f"{_HOLE}(\\d+){_HOLE}", lambda m: holes[int(m.group(1))], out)


def _emphasis(escaped: str) -> str:
    escaped = _BOLD.sub(r"<strong>\1</strong>", escaped)
    return _ITALIC.sub(r"<em>\1</em>", escaped)


def markdown_html(text: str) -> str:
    """Tool text as safe HTML: the text is escaped, then a markdown subset is applied.

    The subset: ``#`` headings, paragraphs (single newlines kept as line breaks), ``-``/``1.``
    lists, ``>`` quotes, fenced code blocks, horizontal rules, ``code``, **bold**, *italic*
    and ``[label](http(s)://...)`` links. Raw HTML is shown as text, never passed through.
    """
    lines = text.replace(_HOLE, "").splitlines()
    blocks: list[str] = []
    paragraph: list[str] = []
    items: list[str] = []
    list_tag = ""

    def close() -> None:
        nonlocal list_tag
        if paragraph:
            blocks.append("<p>" + "<br>".join(_inline(line) for line in paragraph) + "</p>")
            paragraph.clear()
        if items:
            blocks.append(f"<{list_tag}>" + "".join(items) + f"</{list_tag}>")
            items.clear()

    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line.lstrip().startswith("```"):
            close()
            code: list[str] = []
            while index < len(lines) and not lines[index].lstrip().startswith("```"):
                code.append(lines[index])
                index += 1
            index += 1
            blocks.append(f"<pre><code>{esc(chr(10).join(code))}</code></pre>")
            continue
        heading, bullet, numbered = _HEADING.match(line), _BULLET.match(line), _NUMBERED.match(line)
        if not line.strip():
            close()
        elif _RULE.match(line):
            close()
            blocks.append("<hr>")
        elif heading:
            close()
            level = len(heading.group(1))
            blocks.append(f"<h{level}>{_inline(heading.group(2))}</h{level}>")
        elif item := bullet or numbered:
            tag = "ul" if bullet else "ol"
            if paragraph or (items and tag != list_tag):
                close()
            list_tag = tag
            items.append(f"<li>{_inline(item.group(1))}</li>")
        elif line.startswith(">"):
            close()
            blocks.append(f"<blockquote>{_inline(line[1:].strip())}</blockquote>")
        else:
            if items:
                close()
            paragraph.append(line)
    close()
    return f"<div class='wb-markdown'>{''.join(blocks)}</div>"


# ── JSON as a collapsible tree ──────────────────────────────────────────────────────────
def json_tree_html(value: Any, *, open_depth: int = 1, max_nodes: int = 2_000) -> str:
    """Any JSON value as nested ``<details>``: objects and arrays collapsible, levels below
    ``open_depth`` closed, keys and values escaped. At most ``max_nodes`` nodes are drawn (a
    note says how many were left out) and nesting deeper than 64 is shown as compact JSON."""
    budget = [max_nodes]

    def leaf(key: str, item: Any) -> str:
        kind = "null" if item is None else type(item).__name__
        kind = {"str": "string", "bool": "boolean", "int": "number", "float": "number"}.get(
            kind, kind
        )
        text = json.dumps(item, ensure_ascii=False, default=repr)
        if len(text) > 2_000:
            text = text[:2_000] + "…"
        return f"<div>{key}<span class='wb-json-{kind}'>{esc(text)}</span></div>"

    def node(key: str, item: Any, depth: int) -> str:
        budget[0] -= 1
        if not isinstance(item, dict | list) or not item or depth >= 64:
            return leaf(key, item)
        pairs = list(item.items()) if isinstance(item, dict) else list(enumerate(item))
        noun = ("key", "keys") if isinstance(item, dict) else ("item", "items")
        brackets = "{…}" if isinstance(item, dict) else "[…]"
        shape = f"{brackets} {len(pairs)} {noun[len(pairs) != 1]}"
        parts: list[str] = []
        for child_key, child in pairs:
            if budget[0] <= 0:
                parts.append(f"<div class='wb-json-meta'>… {len(pairs) - len(parts)} more</div>")
                break
            label = f"<span class='wb-json-key'>{esc(child_key)}</span>: "
            parts.append(node(label, child, depth + 1))
        flag = " open" if depth < open_depth else ""
        summary = f"{key}<span class='wb-json-meta'>{esc(shape)}</span>"
        return f"<details{flag}><summary>{summary}</summary><div>{''.join(parts)}</div></details>"

    return f"<div class='wb-json'>{node('', value, 0)}</div>"


_shared_style: Any = None


def shared_style() -> Any:
    """One ``ipywidgets.HTML`` holding :func:`style_tag`, shared as a child by every live
    widget that needs the stylesheet: its text crosses the wire once per kernel, not once per
    widget. Recreated if it was closed."""
    global _shared_style
    import ipywidgets

    if _shared_style is None or getattr(_shared_style, "comm", None) is None:
        _shared_style = ipywidgets.HTML(style_tag())
        _shared_style.add_class("wb-style")
    return _shared_style


__all__ = [
    "CSS",
    "badge",
    "compact_css",
    "details",
    "esc",
    "json_tree_html",
    "markdown_html",
    "pre",
    "pretty_json",
    "shared_style",
    "style_tag",
    "with_html",
]
