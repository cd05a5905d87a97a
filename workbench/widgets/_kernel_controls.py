"""A live view's controls as they appear in its saved form: drawn, disabled, and saying why.

A saved notebook shows each view's static HTML (see ``_saved_notebook``). Its buttons would do
nothing there, since no kernel runs behind them, so they are drawn disabled, with a tooltip
that says so and how to get them back: a control never fails silently.
"""

from __future__ import annotations

from workbench.widgets._html import esc

NEEDS_KERNEL = "Needs the kernel that made this view: run the cell again to use it."


def kernel_controls_html(*labels: str) -> str:
    """Disabled buttons named ``labels`` (``wb-needs-kernel``), each with the tooltip
    :data:`NEEDS_KERNEL`; empty when there are none."""
    if not labels:
        return ""
    tip = esc(NEEDS_KERNEL)
    buttons = "".join(
        f"<button class='wb-needs-kernel' disabled title='{tip}'>{esc(label)}</button>"
        for label in labels
    )
    return f"<div class='wb-kernel-controls' title='{tip}'>{buttons}</div>"


__all__ = ["NEEDS_KERNEL", "kernel_controls_html"]
