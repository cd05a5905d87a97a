"""Declaring a tool: from a plain Python function to what each model provider is shown.

``ToolSpec`` is a declaration (name, description, input and output schema, safety metadata);
``Tool`` is a declared tool with its body, argument binding and preflight. Schemas come from a
function's signature and docstring (a ``ToolContext`` parameter is left out) or from a
hand-written JSON Schema. ``export_tools`` writes the tool list in every provider's dialect and
``check_exports`` lists what each provider would refuse or change.
"""

from workbench.declare._client_views import (
    ClientViews,
    client_views,
    structured_chars,
    structured_json,
    structured_note,
)
from workbench.declare._exports import (
    TARGETS,
    Target,
    check_exports,
    dialect_verdicts,
    export_tool,
    export_tools,
    mcp_output_schema,
    verdict_table,
)
from workbench.declare._framework_views import FrameworkView, FrameworkViews, framework_views
from workbench.declare._frameworks import from_framework, is_framework_tool
from workbench.declare._names import check_name, suggest_name
from workbench.declare._schema import BindError
from workbench.declare._spec import DEFAULT_TIMEOUT_S, DeclareWarning, Permission, ToolSpec
from workbench.declare._structured import (
    Resolve,
    UnavailableResult,
    own_result,
    served_output_schema,
    structured_content,
)
from workbench.declare._tool import Invoker, Tool, tool_from_function, tool_from_schema

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "TARGETS",
    "BindError",
    "ClientViews",
    "DeclareWarning",
    "FrameworkView",
    "FrameworkViews",
    "Invoker",
    "Permission",
    "Resolve",
    "Target",
    "Tool",
    "ToolSpec",
    "UnavailableResult",
    "check_exports",
    "check_name",
    "client_views",
    "dialect_verdicts",
    "export_tool",
    "export_tools",
    "framework_views",
    "from_framework",
    "is_framework_tool",
    "mcp_output_schema",
    "own_result",
    "served_output_schema",
    "structured_chars",
    "structured_content",
    "structured_json",
    "structured_note",
    "suggest_name",
    "tool_from_function",
    "tool_from_schema",
    "verdict_table",
]
