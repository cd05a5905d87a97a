"""An envelope's static form, drawn by its family's registered view (or the core's own)."""

from __future__ import annotations

from workbench import _views
from workbench.envelope import Envelope, envelope_html
from workbench.families._table import family_of


def envelope_static_html(envelope: Envelope) -> str:
    """The static form of ``envelope``: its family's registered static view, or the core's
    own plain block when no view package registered one."""
    views = _views.family_views(family_of(envelope).name)
    return envelope_html(envelope) if views is None else views.static(envelope)
