"""Keep the saved form of a displayed widget current: its ``text/html`` follows the widget.

A notebook saves each output's mimebundle as it was published. A card published while its call
was queued would be saved as a queued card, so a widget shown through :class:`LiveDisplay`
republishes its bundle (``update_display_data``) when its static form changes. The update is
sent as a reply to the cell that showed the widget, which is where JupyterLab and Notebook 7
listen for it, and again as a reply to the kernel's latest request, which is where headless
runners (nbclient, ``nbconvert --execute``) listen once that cell has finished. An update made
before any later request arrived (a fast call ending between two cells) is published once more
when the next cell starts, since a headless runner ignores replies to a cell it saw finish.

Updates come from any thread (the kernel's, the runtime loop's when a call ends). Each one
makes its bundle and publishes it under the display's lock, so the bundle published last was
made last: a form made before a call ended cannot overwrite the one made after.
"""

from __future__ import annotations

import contextvars
import threading
import uuid
from collections.abc import Callable
from typing import Any


def _parent_msg_id() -> object:
    from IPython import get_ipython

    shell = get_ipython()
    header = getattr(getattr(shell, "display_pub", None), "parent_header", None) or {}
    return header.get("msg_id") if isinstance(header, dict) else None


class LiveDisplay:
    """One widget's display in a notebook, updatable after the cell that showed it ended."""

    def __init__(self) -> None:
        self.display_id: str | None = None
        self._shown_in: contextvars.Context | None = None
        self._pending: Callable[[], object] | None = None
        self._hooked = False
        self._lock = threading.RLock()

    @property
    def shown(self) -> bool:
        """True once :meth:`show` published the widget."""
        return self.display_id is not None

    def show(self, make_bundle: Callable[[], dict[str, Any]]) -> None:
        """Publish ``make_bundle()``, made now, as a display with an id that later updates
        address. Made and published under the display's lock: an update from another thread
        (a call ending) waits for it and comes after, where one that came between the making
        and the publishing would be overwritten by the older form."""
        from IPython.display import display

        with self._lock:
            display_id = self.display_id = self.display_id or f"wb-{uuid.uuid4().hex}"
            self._shown_in = contextvars.copy_context()
            display(make_bundle(), raw=True, display_id=display_id)  # type: ignore[no-untyped-call]

    def update(self, make_bundle: Callable[[], dict[str, Any]]) -> None:
        """Replace every output showing this display with ``make_bundle()``, made now; a no-op
        when the widget was never shown this way or no IPython kernel runs."""
        from IPython import get_ipython

        if get_ipython() is None:
            return
        with self._lock:
            shown_in, display_id = self._shown_in, self.display_id
            if display_id is None or shown_in is None:
                return
            self._publish(make_bundle(), shown_in, display_id)

    def _publish(
        self, bundle: dict[str, Any], shown_in: contextvars.Context, display_id: str
    ) -> None:
        from IPython.display import update_display

        def publish() -> object:
            update_display(bundle, raw=True, display_id=display_id)  # type: ignore[no-untyped-call]
            return _parent_msg_id()

        sent_as_reply_to = shown_in.copy().run(publish)
        # An empty context has no cell of its own: the kernel falls back to its latest request.
        latest = contextvars.Context().run(_parent_msg_id)
        if latest != sent_as_reply_to:
            contextvars.Context().run(publish)
        else:
            self._publish_on_next_cell(publish)

    def _publish_on_next_cell(self, publish: Callable[[], object]) -> None:
        """Run ``publish`` (the latest one given) once, as the next cell starts."""
        from IPython import get_ipython

        shell = get_ipython()
        events = getattr(shell, "events", None)
        self._pending = publish
        if events is None or self._hooked:
            return
        self._hooked = True

        def on_next_cell(*_: object) -> None:
            events.unregister("pre_run_cell", on_next_cell)
            self._hooked = False
            pending, self._pending = self._pending, None
            if pending is not None:
                pending()

        events.register("pre_run_cell", on_next_cell)
