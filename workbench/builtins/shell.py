"""The ``shell_exec`` built-in: its model-visible declaration and argument handling.

How commands run (pipefail, process groups, streaming, idle timeout, background jobs) lives in
``workbench.builtins.commands``; this module only turns arguments into a run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated

from pydantic import Field

from workbench.builtins.commands import run_foreground, start_background
from workbench.builtins.jobs import Jobs
from workbench.builtins.paths import confine, require_existing
from workbench.context import ToolContext
from workbench.envelope import Envelope, ErrorKind, ToolFailure
from workbench.families.command import CommandOutput

ShellExec = Callable[..., Awaitable[CommandOutput | Envelope]]


def make_shell_exec(root: Path, jobs: Jobs, background_window: float) -> ShellExec:
    """The ``shell_exec`` body, bound to a root and a job table."""

    async def shell_exec(
        command: str,
        timeout: Annotated[float | None, Field(gt=0)] = None,
        background: bool = False,
        cwd: str | None = None,
        *,
        ctx: ToolContext,
    ) -> CommandOutput | Envelope:
        """Run a bash command in the workspace; returns its exit code and output.

        The command runs with `set -o pipefail`, so a failure anywhere in a pipeline shows in
        the exit code. A non-zero exit code is a normal result, not an error. There is no time
        limit; long output is cut to its head and tail and kept whole in a file you can read
        with artifact_read.

        Args:
            command: The bash command line, e.g. "ls -la src | head -20" or "pytest -q".
            timeout: Idle timeout in seconds: stop the command if it prints nothing for this
                long. Every byte of output restarts the clock. Default: no timeout.
            background: Start the command as a background task and return at once with its
                pid and log file (for servers and long jobs); manage it with the process tool.
            cwd: Directory to run in, relative to the workspace root. Default: the root.
        """
        target = confine(root, cwd if cwd is not None else ".", field="cwd")
        require_existing(target, field="cwd")
        if not target.real.is_dir():
            raise ToolFailure(
                ErrorKind.INVALID_ARGS,
                f"`cwd` was refused: `{target.display}` is a file, not a directory.",
                field="cwd",
                expected="a directory relative to the root, such as `src` or `.`",
            )
        if background:
            output = await start_background(ctx, jobs, command, target, background_window)
            if timeout is not None:
                note = "timeout was ignored: it applies to foreground commands only"
                output = replace(output, warnings=(note,))
            return output
        return await run_foreground(ctx, command, target, timeout, jobs)

    return shell_exec
