"""The live output pane of a card: a bounded tail of a call's interleaved streams.

``OutputTail`` keeps the last lines a card shows; appending a chunk costs time proportional to
the chunk, never to the output so far, so a tool printing 100 MB costs the kernel no more per
chunk than one printing 100 bytes. ``OutputPane`` is the anywidget that draws a tail in the
browser (``textContent`` only: output is shown, never interpreted as HTML; ANSI colour codes
become classes of the spans holding the text).
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

import anywidget
import traitlets

from workbench.output import Stream
from workbench.widgets._ansi import ansi_html
from workbench.widgets._html import esc

MAX_LINES = 200
MAX_CHARS = 20_000
STREAMS: tuple[Stream, ...] = ("stdout", "stderr", "log")


class OutputTail:
    """The last ``max_lines`` lines and at most ``max_chars`` characters of a call's output,
    streams interleaved in arrival order. ``append`` is O(len(chunk)) amortised."""

    def __init__(self, max_lines: int = MAX_LINES, max_chars: int = MAX_CHARS) -> None:
        self.max_lines = max_lines
        self.max_chars = max_chars
        self.chunks = 0
        self._segments: deque[tuple[str, str, int]] = deque()
        self._chars = 0
        self._lines = 0

    def append(self, stream: str, text: str) -> None:
        """Add one chunk of one stream."""
        if not text:
            return
        self.chunks += 1
        if len(text) > self.max_chars:
            text = text[-self.max_chars :]
        newlines = text.count("\n")
        self._segments.append((stream, text, newlines))
        self._chars += len(text)
        self._lines += newlines
        # Whole chunks go once what remains still fills the window; `segments` trims the edge.
        while len(self._segments) > 1:
            _, first, first_lines = self._segments[0]
            if self._chars - len(first) < self.max_chars and self._lines - first_lines < (
                self.max_lines
            ):
                break
            self._segments.popleft()
            self._chars -= len(first)
            self._lines -= first_lines

    def segments(self) -> list[tuple[str, str]]:
        """The tail as ``(stream, text)`` runs, neighbours of one stream merged, cut to the
        limits at the start. Costs O(window), whatever was appended before."""
        runs: list[list[str]] = []
        for stream, text, _ in self._segments:
            if runs and runs[-1][0] == stream:
                runs[-1][1] += text
            else:
                runs.append([stream, text])
        chars = lines = 0
        kept: list[tuple[str, str]] = []
        for stream, text in reversed(runs):
            room = self.max_chars - chars
            if len(text) > room:
                text = text[len(text) - room :]
            # A trailing newline ends a line rather than starting one, so it is not counted.
            body = text[:-1] if not kept and text.endswith("\n") else text
            newlines = body.count("\n")
            if lines + newlines >= self.max_lines:
                cut = len(body)
                for _ in range(self.max_lines - lines):
                    cut = body.rfind("\n", 0, cut)
                text = text[cut + 1 :]
                kept.append((stream, text))
                break
            kept.append((stream, text))
            chars += len(text)
            lines += newlines
            if chars >= self.max_chars:
                break
        return [(stream, text) for stream, text in reversed(kept) if text]


def omitted_note(omitted: int, total: int) -> str:
    """What the pane says about output it does not show."""
    if omitted <= 0:
        return ""
    return f"… {omitted:,} more bytes in the artifact ({total:,} bytes of output so far)"


def output_html(segments: list[tuple[str, str]], note: str) -> str:
    """The static form of a pane: the note, then each run escaped in its stream's colour with
    its ANSI colours drawn, scrolled to the newest line."""
    if not segments and not note:
        return ""
    runs = "".join(
        f"<span class='wb-{stream if stream in STREAMS else 'other'}'>{ansi_html(text)}</span>"
        for stream, text in segments
    )
    head = f"<div class='wb-output-note'>{esc(note)}</div>" if note else ""
    return (
        f"<div class='wb-output-pane'>{head}<div class='wb-output-scroll'>"
        f"<pre class='wb-output'>{runs}</pre></div></div>"
    )


class OutputPane(anywidget.AnyWidget):
    """The browser side of an ``OutputTail``: stdout, stderr and log runs, told apart by
    colour, scrolled to the newest line unless the person scrolled up."""

    _esm = Path(__file__).parent / "static" / "output.js"

    segments = traitlets.List(
        traitlets.Tuple(traitlets.Unicode(), traitlets.Unicode()),
        help="The tail shown: (stream, text) runs in arrival order.",
    ).tag(sync=True)
    note = traitlets.Unicode(
        "", help="What is not shown: how many more bytes the artifact holds."
    ).tag(sync=True)
