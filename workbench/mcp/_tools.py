"""Tool declarations across MCP: a spec as a listed MCP tool; a listed tool as workbench metadata.

Serving, a tool is listed as ``tools.export("mcp")`` exports it (name, description,
``inputSchema``, ``annotations``, ``outputSchema`` when it declares one), with the runtime
metadata MCP has no field for under ``_meta["workbench.dev/spec"]``. The one difference: a tool
whose family reshapes its value (command, listing, file) advertises no ``outputSchema``, since
its structured content could not be what the schema declares (``served_output_schema``).

Connecting, MCP's hints become workbench metadata (``read_only``, ``destructive``,
``idempotent``, ``open_world`` on the ``ToolSpec``) with MCP's own defaults for absent hints
(``destructiveHint`` true unless read-only, ``openWorldHint`` true). They also set the default
permission: ``destructiveHint: true`` → ``always_ask``, ``readOnlyHint: true`` →
``always_allow``, otherwise the registry's default; the person overrides it per tool with
``tools.set_permission``. A workbench server's ``_meta`` restores the rest: permission, effects,
interrupt, streaming, serial, family, timeout, and the output schema as declared. Other
servers' tools are of the text family: their receipt is the text content a host would show, and
their ``outputSchema`` is kept as the spec's ``output_schema`` (re-served as it was listed, with
the server's structured content).

A tool that requires MCP task augmentation (``execution.taskSupport: "required"``) is
registered as a task (``Imported.task``): its calls run through ``tasks/*`` (``_tasks``). Where
the SDK in use cannot send such a call, it is registered as unavailable, and every call fails
at once, not retryable, saying why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.declare import check_name, export_tool, suggest_name
from workbench.declare import served_output_schema as output_schema
from workbench.families import FAMILIES

if TYPE_CHECKING:
    import mcp_types

    from workbench.declare import Permission, ToolSpec

SPEC_META_KEY = "workbench.dev/spec"
"""The ``_meta`` key of a served tool that carries workbench's runtime metadata."""

REMOTE_TIMEOUT_MARGIN_S = 5.0
"""How much longer than a workbench server's own budget a connected call waits, so the server's
timeout envelope (with its output) normally arrives before the local budget runs out."""


def listed_tool(spec: ToolSpec, permission: Permission) -> dict[str, Any]:
    """The ``tools/list`` entry of a served tool (wire field names).

    ``permission`` is the registry's effective policy for it, run-time overrides included.
    """
    tool = export_tool(spec, "mcp")
    advertised = output_schema(spec)
    if advertised is None:
        tool.pop("outputSchema", None)
    else:
        tool["outputSchema"] = advertised
    meta = spec.metadata()
    meta["permission"] = permission
    meta["effects"] = list(spec.effects)
    if advertised is not None:
        # As declared, before MCP's wrapping: a connecting workbench wraps it the same way.
        meta["output_schema"] = spec.output_schema
    tool["_meta"] = {SPEC_META_KEY: meta}
    return tool


@dataclass(frozen=True)
class Imported:
    """How one listed MCP tool is registered locally: its name, schema and metadata."""

    remote_name: str
    name: str
    description: str
    input_schema: dict[str, Any]
    meta: dict[str, Any]
    workbench: bool
    """True when a workbench server listed it: its results carry canonical records."""
    output_schema: dict[str, Any] | None = None
    """The server's ``outputSchema``: another server's as it listed it, a workbench server's
    as its author declared it (before MCP's wrapping)."""
    unavailable: str | None = None
    """Why the tool cannot be called from here (it is registered, and every call says this)."""
    task: bool = False
    """True when the tool runs only as an MCP task (``execution.taskSupport: "required"``)."""


def local_name(remote_name: str, prefix: str | None) -> str:
    """The local name of a remote tool: prefixed, and made snake_case when it is not.

    Raises ``ValueError`` when no valid name can be derived.
    """
    name = f"{prefix or ''}{remote_name}"
    try:
        return check_name(name)
    except ValueError:
        return check_name(suggest_name(name))


def imported(
    tool: mcp_types.Tool,
    *,
    prefix: str | None,
    default_timeout: float | None,
    tasks: bool = False,
) -> Imported:
    """Map a listed MCP tool to what ``Registry.register`` needs (``ownership="mcp"``);
    ``tasks`` says whether this connection can run a tool that runs only as a task.

    Raises ``ValueError`` when the tool cannot be registered (no usable name).
    """
    annotations = tool.annotations
    read_only = bool(annotations and annotations.read_only_hint)
    destructive = (
        annotations.destructive_hint
        if annotations and annotations.destructive_hint is not None
        else not read_only
    )
    open_world = (
        annotations.open_world_hint
        if annotations and annotations.open_world_hint is not None
        else True
    )
    meta: dict[str, Any] = {
        "ownership": "mcp",
        "read_only": read_only,
        "destructive": destructive,
        "idempotent": bool(annotations and annotations.idempotent_hint),
        "open_world": open_world,
        "timeout": default_timeout,
    }
    if annotations is not None and annotations.destructive_hint is True:
        meta["permission"] = "always_ask"
    elif annotations is not None and annotations.read_only_hint is True:
        meta["permission"] = "always_allow"
    served = _served_meta(tool.meta)
    if served is not None:
        meta.update(_restored(served))
    else:
        # Its receipt is the server's text content; its structured content rides along in the
        # result (checked by the SDK's client against the tool's own output schema).
        meta["family"] = "text"
    name = local_name(tool.name, prefix)
    kept_schema = tool.output_schema if served is None else _declared_schema(served, tool)
    return Imported(
        remote_name=tool.name,
        name=name,
        description=tool.description or "",
        input_schema=tool.input_schema,
        meta=meta,
        workbench=served is not None,
        output_schema=kept_schema,
        unavailable=None if tasks else _unavailable(tool),
        task=_task_only(tool),
    )


def _task_only(tool: mcp_types.Tool) -> bool:
    execution = tool.execution
    return execution is not None and execution.task_support == "required"


def _unavailable(tool: mcp_types.Tool) -> str | None:
    if not _task_only(tool):
        return None
    from importlib.metadata import PackageNotFoundError, version

    try:
        sdk = f"mcp {version('mcp')}"
    except PackageNotFoundError:
        sdk = "the mcp SDK"
    return (
        f'`{tool.name}` can only run as an MCP task (execution.taskSupport is "required"), '
        f"and workbench's MCP client ({sdk}) cannot create or poll tasks, so the server was "
        "not called"
    )


def _served_meta(meta: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    served = (meta or {}).get(SPEC_META_KEY)
    return served if isinstance(served, Mapping) else None


def _declared_schema(served: Mapping[str, Any], tool: mcp_types.Tool) -> dict[str, Any] | None:
    """A workbench server's tool's output schema as its author declared it (None from a
    server that does not say, or a tool that advertises none)."""
    declared = served.get("output_schema")
    if tool.output_schema is None or not isinstance(declared, Mapping):
        return None
    return dict(declared)


def _restored(served: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata a workbench server declared that still means something locally (its
    output schema is restored apart, by ``_declared_schema``: results of an MCP tool are not
    checked against it here, the serving runtime did)."""
    restored: dict[str, Any] = {}
    if served.get("permission") in ("always_allow", "always_ask"):
        restored["permission"] = served["permission"]
    effects = served.get("effects")
    if isinstance(effects, list) and all(isinstance(effect, str) for effect in effects):
        restored["effects"] = tuple(effects)
    if served.get("interrupt") in ("cancel", "block"):
        restored["interrupt"] = served["interrupt"]
    for flag in ("streaming", "serial"):
        if isinstance(served.get(flag), bool):
            restored[flag] = served[flag]
    if served.get("family") in FAMILIES:
        restored["family"] = served["family"]
    timeout = served.get("timeout", "absent")
    if timeout is None or restored.get("streaming"):
        restored["timeout"] = None
    elif isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
        restored["timeout"] = float(timeout) + REMOTE_TIMEOUT_MARGIN_S
    return restored


__all__ = ["SPEC_META_KEY", "Imported", "imported", "listed_tool", "local_name"]
