"""The command family: shell commands and background jobs, rendered as shell-style receipts.

Complete output: a ``CommandOutput`` (exit code, cwd, timing; the streams themselves are the
call's spools, ``Completed.streams``), a ``JobStatus`` snapshot of a background job, or a
mapping with ``exit_code`` and complete ``stdout`` / ``stderr`` strings. Canonical ``result``
shapes (a foreground run, a background job, its status), all with ``kind: "command"``:

Foreground::

    {"kind": "command", "background": false, "exit_code": 0, "cwd": ".", "duration_ms": 12,
     "stdout_preview": "...", "stderr_preview": null, "stdout_bytes": 6, "stderr_bytes": 0,
     "truncated": false, "stdout_truncated": false, "stderr_truncated": false}

plus ``stdout_artifact`` / ``stderr_artifact`` (indices into ``artifacts``, the complete stream
written once) when a stream was cut, and ``signal`` when the shell itself died of one. A
preview is null when its stream printed nothing.

Promoted to the background::

    {"kind": "command", "background": true, "pid": 4242, "cwd": ".", "log_file": "<path>",
     "log_artifact": 0, "running": true, "exit_code": null, "duration_ms": 500,
     "initial_output_preview": "...", "initial_output_truncated": false}

A background job's status (the ``process`` tool): ``background: true`` with ``action`` ("poll" |
"wait" | "kill"), ``pid``, ``command``, ``cwd``, ``log_file``, ``log_artifact``, ``running``,
``exit_code``, ``output_preview`` / ``output_truncated`` / ``output_bytes`` (head and tail of
the log as it was), and ``waited_ms`` (wait) or ``killed`` (kill).

Receipts: ``Process exited with code 0`` / ``stdout:`` / preview (JSON output indented), then
``stderr:``; ``Command promoted to background task`` / ``Task: <pid>`` / ``Initial output:``;
``Task <pid> exited with code 0`` / ``Output:``. A cut stream names its artifact; warnings last.

Compaction (``wb.compact``): step 2 cuts previews to a short head and tail, step 3 drops a
preview an artifact or the job's log backs (the cut marker and the artifact line remain), step 4
collapses the record to ``tool_name: summary_text`` keeping ``pid``, ``log_file`` and the
``*_artifact`` indices.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from workbench.envelope import Envelope, Preview, preview
from workbench.families import _base
from workbench.families.json import JsonFamily

StreamName = Literal["stdout", "stderr"]
JobAction = Literal["poll", "wait", "kill"]
STREAMS: tuple[StreamName, ...] = ("stdout", "stderr")

SIGPIPE_EXIT = 141
SIGPIPE_WARNING = (
    "exit code 141 (SIGPIPE): a command downstream in the pipeline, such as `head`, stopped "
    "reading early; this is usually harmless"
)
EMPTY_OUTPUT_WARNING = (
    "the command exited 0 but printed nothing; a pipeline or `2>/dev/null` may have hidden a "
    "failure, so check each part on its own if output was expected"
)
COMMAND_SHOWN_CHARS = 200


@dataclass(frozen=True)
class CommandOutput(_base.CompleteOutput):
    """A finished (or promoted) command, less its output streams, which the call's spools hold.

    ``stdout`` / ``stderr`` are for tools that captured the output themselves instead of
    streaming it; they override the spools. ``log_file`` and ``log_size`` describe a background
    command's log as it was when the call returned.
    """

    family: ClassVar[str] = "command"

    command: str
    cwd: str
    exit_code: int | None
    duration_ms: int
    signal: str | None = None
    background: bool = False
    pid: int | None = None
    log_file: Path | None = None
    log_size: int = 0
    stdout: str | None = None
    stderr: str | None = None
    warnings: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class JobStatus(_base.CompleteOutput):
    """A background job as the ``process`` tool saw it; ``log_size`` fixes how much of the
    (still growing) log the snapshot covers."""

    family: ClassVar[str] = "command"

    action: JobAction
    pid: int
    command: str
    cwd: str
    running: bool
    exit_code: int | None
    log_file: Path
    log_size: int
    signal: str | None = None
    waited_ms: int | None = None
    killed: bool = False


def is_command_result(result: Any) -> bool:
    """True for a canonical command-family result."""
    return _base.has_kind(result, "command") and isinstance(result.get("background"), bool)


def diagnostic_warnings(command: str, exit_code: int | None, printed: int) -> list[str]:
    """Pipeline diagnostics: SIGPIPE is benign; silence after a pipe is suspicious."""
    if exit_code == SIGPIPE_EXIT:
        return [SIGPIPE_WARNING]
    if exit_code == 0 and printed == 0 and ("|" in command or "2>/dev/null" in command):
        return [EMPTY_OUTPUT_WARNING]
    return []


def _budget(stream: StreamName, budgets: _base.Budgets) -> int:
    return budgets.stderr_chars if stream == "stderr" else budgets.stdout_chars


def _from_mapping(value: Mapping[str, Any]) -> CommandOutput:
    exit_code = value.get("exit_code")
    return CommandOutput(
        command=str(value.get("command", "")),
        cwd=str(value.get("cwd", "")),
        exit_code=exit_code if isinstance(exit_code, int) else None,
        duration_ms=int(value.get("duration_ms") or 0),
        stdout=str(value.get("stdout") or ""),
        stderr=str(value.get("stderr") or ""),
    )


class CommandFamily:
    """Commands and background jobs; rendered as shell-style receipts."""

    name: ClassVar[str] = "command"

    def project(self, completed: _base.Completed, budgets: _base.Budgets) -> Envelope:
        value = completed.value
        if isinstance(value, Mapping) and "exit_code" in value and "kind" not in value:
            value = _from_mapping(value)
        if isinstance(value, JobStatus):
            result, warnings, summary = self._job(value, completed, budgets)
        elif isinstance(value, CommandOutput) and value.background:
            result, warnings, summary = self._promoted(value, completed, budgets)
        elif isinstance(value, CommandOutput):
            result, warnings, summary = self._foreground(value, completed, budgets)
        else:
            envelope = _base.base_envelope(completed)
            if is_command_result(envelope.result):
                return envelope.replace(
                    warnings=_base.merged_warnings(envelope.warnings, completed.warnings)
                )
            return JsonFamily().project(completed, budgets)
        return Envelope(
            tool_name=completed.tool_name,
            status="success",
            summary_text=summary,
            result=result,
            warnings=_base.merged_warnings(warnings, completed.warnings),
            artifacts=completed.sink.refs,
        )

    # ── projection ──────────────────────────────────────────────────────────────────────
    def _stream(
        self,
        value: CommandOutput,
        stream: StreamName,
        completed: _base.Completed,
        budgets: _base.Budgets,
    ) -> tuple[Preview, int, int | None]:
        """The preview of one stream, its size in bytes, and its artifact index when cut."""
        budget = _budget(stream, budgets)
        given = value.stdout if stream == "stdout" else value.stderr
        if given is not None:
            cut = preview(given, budget)
            index = completed.sink.write(f"{stream}.log", given) if cut.truncated else None
            return cut, len(given.encode("utf-8")), index
        spool = completed.streams.get(stream)
        if spool is None or spool.size == 0:
            return Preview("", truncated=False), 0, None
        cut = _base.stream_preview(spool, budget)
        return cut, spool.size, spool.artifact() if cut.truncated else None

    def _foreground(
        self, value: CommandOutput, completed: _base.Completed, budgets: _base.Budgets
    ) -> tuple[dict[str, Any], list[str], str]:
        result: dict[str, Any] = {
            "kind": "command",
            "background": False,
            "exit_code": value.exit_code,
            "cwd": value.cwd,
            "duration_ms": value.duration_ms,
        }
        if value.signal is not None:
            result["signal"] = value.signal
        cuts: dict[str, bool] = {}
        printed = 0
        for stream in STREAMS:
            cut, size, index = self._stream(value, stream, completed, budgets)
            printed += size
            result[f"{stream}_preview"] = cut.text if size else None
            result[f"{stream}_bytes"] = size
            cuts[stream] = cut.truncated
            if index is not None:
                result[f"{stream}_artifact"] = index
                short = completed.sink.shortfall(index)
                if short is not None:
                    result[f"{stream}_kept_bytes"] = short.kept
        result["truncated"] = any(cuts.values())
        result["stdout_truncated"] = cuts["stdout"]
        result["stderr_truncated"] = cuts["stderr"]
        warnings = [
            *value.warnings,
            *diagnostic_warnings(value.command, value.exit_code, printed),
        ]
        summary = f"command exited with status {value.exit_code}"
        if value.signal is not None:
            summary += f" (killed by {value.signal})"
        return result, warnings, summary

    def _log(
        self, log_file: Path, size: int, budget: int, completed: _base.Completed
    ) -> tuple[Preview, int]:
        cut = _base.file_preview(log_file, size, budget) if size else Preview("", truncated=False)
        return cut, completed.sink.adopt(log_file)

    def _promoted(
        self, value: CommandOutput, completed: _base.Completed, budgets: _base.Budgets
    ) -> tuple[dict[str, Any], list[str], str]:
        assert value.log_file is not None and value.pid is not None
        budget = budgets.initial_output_chars
        cut, index = self._log(value.log_file, value.log_size, budget, completed)
        result: dict[str, Any] = {
            "kind": "command",
            "background": True,
            "pid": value.pid,
            "cwd": value.cwd,
            "log_file": completed.sink.store.ref(value.log_file).path,
            "log_artifact": index,
            "running": value.exit_code is None,
            "exit_code": value.exit_code,
            "duration_ms": value.duration_ms,
            "initial_output_preview": cut.text if value.log_size else None,
            "initial_output_truncated": cut.truncated,
        }
        return result, list(value.warnings), f"command promoted to background task {value.pid}"

    def _job(
        self, value: JobStatus, completed: _base.Completed, budgets: _base.Budgets
    ) -> tuple[dict[str, Any], list[str], str]:
        cut, index = self._log(value.log_file, value.log_size, budgets.log_chars, completed)
        command = value.command
        if len(command) > COMMAND_SHOWN_CHARS:
            command = command[: COMMAND_SHOWN_CHARS - 1] + "…"
        result: dict[str, Any] = {
            "kind": "command",
            "background": True,
            "action": value.action,
            "pid": value.pid,
            "command": command,
            "cwd": value.cwd,
            "log_file": completed.sink.store.ref(value.log_file).path,
            "log_artifact": index,
            "running": value.running,
            "exit_code": value.exit_code,
            "output_preview": cut.text if value.log_size else None,
            "output_truncated": cut.truncated,
            "output_bytes": value.log_size,
        }
        if value.signal is not None:
            result["signal"] = value.signal
        if value.action == "wait":
            result["waited_ms"] = value.waited_ms or 0
        if value.action == "kill":
            result["killed"] = value.killed
        if value.killed:
            summary = f"task {value.pid} killed"
        elif value.running:
            summary = f"task {value.pid} is running"
        else:
            summary = f"task {value.pid} exited with status {value.exit_code}"
        return result, [], summary

    # ── rendering ───────────────────────────────────────────────────────────────────────
    def render(self, envelope: Envelope, budgets: _base.Budgets) -> str:
        result = envelope.result
        if not result.get("background"):
            lines = self._render_foreground(envelope, result, budgets)
        elif "action" in result:
            lines = self._render_job(envelope, result)
        else:
            lines = self._render_promoted(envelope, result)
        return _base.finish(lines, envelope, budgets)

    def _render_foreground(
        self, envelope: Envelope, result: Mapping[str, Any], budgets: _base.Budgets
    ) -> list[str]:
        status = f"Process exited with code {result.get('exit_code')}"
        if result.get("signal"):
            status += f" (killed by {result['signal']})"
        lines = [status]
        shown = False
        for stream in STREAMS:
            text = result.get(f"{stream}_preview")
            if not isinstance(text, str) or not text:
                continue
            shown = True
            cut = bool(result.get(f"{stream}_truncated"))
            lines.append(f"{stream}:")
            lines.append(_readable(text, cut, _budget(stream, budgets)))
            if cut:
                lines.append(_base.stream_artifact_note(envelope, result, stream))
        if not shown:
            lines.append("(no output)")
        return lines

    def _render_promoted(self, envelope: Envelope, result: Mapping[str, Any]) -> list[str]:
        pid = result.get("pid")
        lines = ["Command promoted to background task", f"Task: {pid}"]
        if not result.get("running"):
            lines.append(f"Already exited with code {result.get('exit_code')}")
        lines.append(f"Log file: {result.get('log_file')}")
        lines += _output_lines(
            "Initial output",
            result.get("initial_output_preview"),
            bool(result.get("initial_output_truncated")),
            result.get("log_file"),
            None,
        )
        lines.append(f"Use the process tool with pid {pid} to poll, wait for or kill it.")
        return lines

    def _render_job(self, envelope: Envelope, result: Mapping[str, Any]) -> list[str]:
        pid, code = result.get("pid"), result.get("exit_code")
        action, signal = result.get("action"), result.get("signal")
        if action == "kill" and result.get("killed"):
            status = f"Task {pid} was killed" + (f" by {signal}" if signal else "")
            if code is not None:
                status += f" (exit code {code})"
        elif result.get("running"):
            waited = result.get("waited_ms")
            status = f"Task {pid} is still running"
            if action == "wait" and isinstance(waited, int):
                status += f" after waiting {waited / 1000:g} s"
        else:
            verb = "had already exited" if action == "kill" else "exited"
            status = f"Task {pid} {verb} with code {code}"
            if signal:
                status += f" (killed by {signal})"
        lines = [status, f"Command: {result.get('command')}"]
        lines += _output_lines(
            "Output",
            result.get("output_preview"),
            bool(result.get("output_truncated")),
            result.get("log_file"),
            result.get("output_bytes"),
        )
        return lines

    # ── compaction ──────────────────────────────────────────────────────────────────────
    def compact(self, envelope: Envelope, step: int, budgets: _base.Budgets) -> Envelope | None:
        """Step 2 cuts each output preview to a short head and tail; step 3 replaces a preview
        whose complete output an artifact or the job's log holds by the cut marker alone; step
        4 collapses the record to ``tool_name: summary_text``, keeping ``pid``, ``log_file``
        and the ``*_artifact`` _base.references. Exit codes, cwd and flags are small and stay until
        step 4."""
        result = envelope.result
        if step == _base.CompactStep.COLLAPSE_TO_LINE:
            kept = _base.references(result)
            return _base.collapse(envelope, self.name, _base.summary_line(envelope, kept), kept)
        if step == _base.CompactStep.SHRINK_PREVIEWS:
            changed = _base.reduce_previews(
                result, _preview_fields(envelope), max_chars=budgets.compact_preview_chars
            )
        elif step == _base.CompactStep.DROP_TO_ARTIFACTS:
            changed = _base.reduce_previews(result, _preview_fields(envelope), drop_backed=True)
        else:
            return None
        if changed is None:
            return None
        if not changed.get("background"):
            changed["truncated"] = True
        return _base.with_result(envelope, changed)


def _preview_fields(envelope: Envelope) -> list[_base.PreviewField]:
    """The output previews of a command result, each with whether an artifact backs it."""
    result = envelope.result
    if not result.get("background"):
        return [
            (
                f"{stream}_preview",
                f"{stream}_truncated",
                _base.artifact_path(envelope, result.get(f"{stream}_artifact")) is not None,
            )
            for stream in STREAMS
        ]
    logged = (
        isinstance(result.get("log_file"), str)
        or _base.artifact_path(envelope, result.get("log_artifact")) is not None
    )
    name = "output" if "action" in result else "initial_output"
    return [(f"{name}_preview", f"{name}_truncated", logged)]


def _output_lines(label: str, text: Any, cut: bool, log_file: Any, size: Any) -> list[str]:
    if not isinstance(text, str) or not text:
        return [f"{label}: (none yet)" if label == "Initial output" else f"{label}: (none)"]
    lines = [f"{label}:", text.rstrip("\n")]
    if cut:
        lines.append(_base.artifact_note("log", str(log_file) if log_file else None, size))
    return lines


def _readable(text: str, cut: bool, budget: int) -> str:
    """Output as the model should read it: JSON objects and arrays indented (not escaped)
    when they are whole and stay within budget; anything else verbatim."""
    stripped = text.strip()
    if not cut and stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
        try:
            value = json.loads(stripped)
        except ValueError:
            return text.rstrip("\n")
        pretty = json.dumps(value, indent=2, ensure_ascii=False)
        if len(pretty) <= budget:
            return pretty
    return text.rstrip("\n")
