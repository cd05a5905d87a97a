"""Meet a model: a provider's model uses a registry's tools, every call an ordinary card.

``workbench.run`` starts a ``Run``; ``workbench.compare_runs`` puts two versions of a tool set
side by side. One module per provider (``openai_chat``, ``openai_responses``, ``anthropic``,
``gemini``), each reached through its official SDK, imported only when used (extras
``openai``, ``anthropic``, ``gemini``). ``local_server`` is a scripted stand-in for the
providers' HTTP APIs on 127.0.0.1, for demos and tests without a key or a network.
"""

from workbench.models._compare import RunComparison, compare_runs
from workbench.models._display import ending_html, run_html, usage_text
from workbench.models._run import ReceiptEdit, Run, RunCompaction, SentResult, run
from workbench.models._types import MissingKey, ModelError, ToolRequest, ToolResult, Turn, Usage

__all__ = [
    "MissingKey",
    "ModelError",
    "ReceiptEdit",
    "Run",
    "RunCompaction",
    "RunComparison",
    "SentResult",
    "ToolRequest",
    "ToolResult",
    "Turn",
    "Usage",
    "compare_runs",
    "ending_html",
    "run",
    "run_html",
    "usage_text",
]
