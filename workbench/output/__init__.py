"""A call's complete output, kept whole while memory stays bounded.

Each stream (stdout, stderr, log) is spooled (``Spool``): in memory while small, spilled to an
artifact file as it grows, with a bounded tail kept for live views. Artifacts (``ArtifactSink``
per call, ``ArtifactStore`` per registry) are the files a receipt can point at when it shows
only a preview. Terminal escapes in output are recognised here (``strip_ansi``, ``has_ansi``).
"""

from workbench.output._ansi import ESCAPE, has_ansi, strip_ansi
from workbench.output._artifacts import ArtifactSink, ArtifactStore
from workbench.output._spool import Spool, Stream

__all__ = [
    "ESCAPE",
    "ArtifactSink",
    "ArtifactStore",
    "Spool",
    "Stream",
    "has_ansi",
    "strip_ansi",
]
