"""The receipt a model saw beside another text of the same call, the difference highlighted.

For a history row: the recorded receipt (for an imported call, byte for byte what the model
received) beside workbench's own rendering of the row's canonical record. For a replay: the
original receipt beside the replay's, and the two canonical records. The HTML comes from
``workbench.transcripts`` (every segment escaped); this view only holds and republishes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from workbench.families import compare_receipts, diff_html
from workbench.transcripts import rule_of

if TYPE_CHECKING:
    from workbench.registry import Replay


def row_diff_html(row: Mapping[str, Any]) -> str:
    """The receipt-versus-rendering diff of one history row, titled; for an imported row the
    title names the rule that recognised its envelope. Identical texts are only said to be
    the same: the history view shows the receipt in its inspector's Receipt pane."""
    from workbench.widgets._html import esc

    diff = compare_receipts(row)
    rule = rule_of(row)
    seen = "receipt the model saw" if rule is not None else "receipt recorded"
    read_as = f" (read by the rule {rule})" if rule is not None else ""
    # The same text is the Receipt pane just above: the verdict alone, so an opened call
    # shows its receipt once and the view stays a screen tall.
    if diff.same:
        verdict, body = "the same (the Receipt pane above)", ""
    else:  # the count in the title: one line less in the opened view
        verdict = f"different, {diff.changed_chars:,} character(s)"
        body = diff_html(diff, verdict=False)
    return (
        "<div class='wb-receipt-compare'><div class='wb-receipt-compare-title'>"
        f"{esc(seen)}{esc(read_as)} vs workbench's rendering: {verdict}</div>{body}</div>"
    )


class ReceiptDiffView(widgets.HTML):  # type: ignore[misc]
    """A receipt diff (``wb-receipt-diff-view``): ``show_row`` for a history row,
    ``show_replay`` for a replay once it has ended, ``clear`` for nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.add_class("wb-receipt-diff-view")

    def show_row(self, row: Mapping[str, Any]) -> None:
        """The row's recorded receipt beside workbench's rendering of its envelope."""
        self.value = row_diff_html(row)

    def show_replay(self, replay: Replay) -> None:
        """The original's receipt and canonical record beside the replay's."""
        self.value = replay.to_html()

    def clear(self, note: str = "") -> None:
        """Show only ``note`` (escaped)."""
        from workbench.widgets._html import esc

        self.value = f"<div class='wb-receipt-diff-note'>{esc(note)}</div>" if note else ""
