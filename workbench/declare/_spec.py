"""A tool's declaration: what a model sees (name, description, schema) and what the runtime obeys.

The input schema is model-visible; the safety metadata
(read-only, destructive, permission, ownership, effects, interrupt, timeout, streaming) is read by
the runtime, by exports as MCP annotations, and by people at the approval prompt.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ToolPermission = Literal["always_allow", "always_ask"]
"""What a tool declares for itself."""
Permission = Literal["always_allow", "always_ask", "always_deny"]
"""What applies to a tool at run time: its own, or a registry's override (which may deny)."""
Ownership = Literal["managed", "mcp", "custom"]
Interrupt = Literal["cancel", "block"]

DEFAULT_TIMEOUT_S = 120.0


class DeclareWarning(UserWarning):
    """Declaring a tool could not honour part of its function (the tool is still declared)."""


class ToolSpec(BaseModel):
    """The declaration of one registered tool, as ``tools.spec(name)`` returns it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}, "additionalProperties": False}
    )
    output_schema: dict[str, Any] | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False
    permission: ToolPermission = "always_allow"
    ownership: Ownership = "managed"
    effects: tuple[str, ...] = ()
    interrupt: Interrupt = "cancel"
    timeout: float | None = DEFAULT_TIMEOUT_S
    streaming: bool = False
    serial: bool = False
    family: str = "json"
    declare_warnings: tuple[str, ...] = ()
    """What declaring the tool could not honour, such as a return annotation that cannot be
    resolved (the tool then declares no output schema); ``check_exports`` lists each."""

    def metadata(self) -> dict[str, Any]:
        """The safety and runtime metadata, without the model-visible schema."""
        return self.model_dump(
            exclude={"name", "description", "input_schema", "output_schema", "declare_warnings"}
        )
