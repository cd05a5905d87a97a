"""Declaring the built-in tools on a registry, confined to one root."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.builtins.artifact_read import make_artifact_read
from workbench.builtins.file_read import make_file_read
from workbench.builtins.jobs import Jobs
from workbench.builtins.process import make_process
from workbench.builtins.shell import make_shell_exec
from workbench.context import owner_for
from workbench.declare import Permission, Tool
from workbench.registry import Registry

BACKGROUND_WINDOW_S = 0.5


@dataclass(frozen=True)
class Builtins:
    """The registered built-in tools, their root, and the background jobs they started."""

    shell_exec: Tool
    process: Tool
    file_read: Tool
    artifact_read: Tool
    root: Path
    jobs: Jobs

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The four tools, in registration order."""
        return (self.shell_exec, self.process, self.file_read, self.artifact_read)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self.tools)


def register(
    tools: Registry,
    *,
    root: str | os.PathLike[str],
    listing_limit: int = 200,
    background_window: float = BACKGROUND_WINDOW_S,
    shell_permission: Permission = "always_allow",
) -> Builtins:
    """Declare the built-ins on ``tools``, confined to ``root`` (an existing directory).

    ``listing_limit`` bounds a directory listing's entries; ``background_window`` is how long a
    background command's first output is collected before ``shell_exec`` returns;
    ``shell_permission="always_ask"`` makes every command wait for Allow. Registering again on
    the same registry replaces the built-ins (and their job table).
    """
    base = Path(root).resolve()
    if not base.is_dir():
        raise NotADirectoryError(f"the built-ins' root {str(root)!r} is not an existing directory")
    if listing_limit < 1:
        raise ValueError("listing_limit must be at least 1")
    jobs = Jobs(owner_for(tools), tools.terminate_grace)
    budget = tools.budgets.file_chars
    reader: dict[str, Any] = {"family": "file", "read_only": True, "idempotent": True}
    declared: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
        "shell_exec": (
            make_shell_exec(base, jobs, background_window),
            {"family": "command", "streaming": True, "timeout": None, "destructive": True}
            | {"open_world": True, "permission": shell_permission},
        ),
        "process": (make_process(jobs), {"family": "command", "timeout": None}),
        "file_read": (make_file_read(base, listing_limit, budget), reader),
        "artifact_read": (make_artifact_read(tools.artifacts, budget), reader),
    }
    shell_exec, process, file_read, artifact_read = (
        tools.register(body, name=name, replace=True, **meta)
        for name, (body, meta) in declared.items()
    )
    return Builtins(shell_exec, process, file_read, artifact_read, base, jobs)
