"""Workbench's widgets talk to the page outside any cell's reply, so headless runs keep no state.

A front end with a widget manager (JupyterLab, Notebook 7) takes every widget message by its
comm, whatever request it answers. A headless runner (nbclient, so ``nbconvert --execute`` and
papermill too) keeps only the messages that answer the cell it is running, and with its
default ``store_widget_state=True`` saves the state of every widget model it saw in the
notebook. An output whose model has saved state is then exported as a widget view, which only
a widget manager fetched from a CDN can draw: offline, every card would be blank, though each
carries its static HTML beside its view.

So every widget message of a workbench view (the view, its children, the widgets it adds
later) is sent with no parent request: the page still draws and updates the live view, a
headless runner never records the model, and its export shows the static HTML. A widget counts
as a view's when its comm is opened while code of ``workbench.widgets`` runs. Other
libraries' widgets are left as they are: their state is still saved.
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

VIEW_PACKAGE = "workbench.widgets"
NO_PARENT: dict[str, Any] = {}
"""The parent header of a view's widget messages: no request, so no cell records them."""


def _opened_by_a_view() -> bool:
    """True when code of :data:`VIEW_PACKAGE` is on the stack that opens a comm."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if module.startswith(VIEW_PACKAGE) and module != __name__:
            return True
        frame = frame.f_back
    return False


def detach_view_comms() -> bool:
    """In an IPython kernel, open a view's comms as :class:`DetachedComm` from now on; True
    when that is in place (idempotent). Outside a kernel (a script, pytest), nothing changes:
    there is no page and no runner to tell apart."""
    try:
        import comm
        from ipykernel.comm.comm import BaseComm
        from ipykernel.jsonutil import json_clean as _json_clean
        from ipykernel.kernelbase import Kernel
    except ImportError:  # no ipykernel: no kernel, so no page to send widget messages to
        return False
    json_clean: Any = _json_clean
    kernel_factory = comm.create_comm
    if getattr(kernel_factory, "detaches_views", False):
        return True
    if getattr(kernel_factory, "__module__", "") != "ipykernel.ipkernel":
        return False  # another kernel's comms: left as they are

    class DetachedComm(BaseComm):
        """An ipykernel comm whose messages answer no request (see the module)."""

        def publish_msg(
            self,
            msg_type: str,
            data: dict[str, Any] | None = None,
            metadata: dict[str, Any] | None = None,
            buffers: list[Any] | None = None,
            **keys: Any,
        ) -> None:
            if not Kernel.initialized():
                return
            kernel: Any = self.kernel or Kernel.instance()
            self.kernel = kernel
            content = json_clean(dict(data=data or {}, comm_id=self.comm_id, **keys))
            kernel.session.send(
                kernel.iopub_socket,
                msg_type,
                content,
                metadata=json_clean(metadata or {}),
                parent=NO_PARENT,
                ident=self.topic,
                buffers=buffers,
            )

    detached: Any = DetachedComm

    def create_comm(*args: Any, **kwargs: Any) -> Any:
        if _opened_by_a_view():
            return detached(*args, **kwargs)
        return kernel_factory(*args, **kwargs)

    create_comm.detaches_views = True  # type: ignore[attr-defined]
    comm.create_comm = create_comm
    return True


__all__ = ["NO_PARENT", "detach_view_comms"]
