"""Write real inspect_ai eval logs (``.eval`` and ``.json``) of one small tool-using run.

The run uses inspect_ai's own mock model with scripted outputs, so it needs no network and no
key: parallel tool calls, a tool that raises ``ToolError``, an output longer than inspect_ai's
``max_tool_output`` (which inspect_ai itself truncates), non-ASCII text, and a call whose
arguments could not be parsed. Usage: ``python make_inspect_logs.py LOG_DIR``.
"""

from __future__ import annotations

import sys

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import ToolCall, ToolError, tool

MODEL = "mockllm/model"


@tool
def add():  # type: ignore[no-untyped-def]
    async def execute(x: int, y: int) -> int:
        """Add two numbers.

        Args:
            x: The first number.
            y: The second number.
        """
        return x + y

    return execute


@tool
def read_note():  # type: ignore[no-untyped-def]
    async def execute(name: str) -> str:
        """Read a note by name.

        Args:
            name: The note's name.
        """
        if name == "missing":
            raise ToolError("no note called 'missing' (Notiz fehlt)")
        if name == "long":
            return "\n".join(f"Zeile {i}: Grüße aus Zürich ✓" for i in range(2_000))
        return "Einkaufsliste: Äpfel, Brötchen, 牛乳"

    return execute


def turn(*calls: ToolCall, content: str = "") -> ModelOutput:
    """One scripted model turn asking for ``calls`` (in parallel when several)."""
    message = ChatMessageAssistant(content=content, tool_calls=list(calls), model=MODEL)
    output = ModelOutput(
        model=MODEL, choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")]
    )
    # Set usage so the mock model does not count tokens (which would download a tokenizer).
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


def outputs() -> list[ModelOutput]:
    final = ModelOutput.from_content(MODEL, "Summe: 3; die Notiz fehlt.")
    final.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return [
        turn(
            ToolCall(id="call_add", function="add", arguments={"x": 1, "y": 2}),
            ToolCall(id="call_note", function="read_note", arguments={"name": "einkauf"}),
        ),
        turn(ToolCall(id="call_missing", function="read_note", arguments={"name": "missing"})),
        turn(ToolCall(id="call_long", function="read_note", arguments={"name": "long"})),
        turn(
            ToolCall(
                id="call_broken",
                function="add",
                arguments={},
                parse_error="Expecting ',' delimiter: line 1 column 9 (char 8)",
            )
        ),
        final,
    ]


def main(log_dir: str) -> None:
    task = Task(
        dataset=[Sample(input="Add 1 and 2, then read my notes.", target="3")],
        solver=[use_tools(add(), read_note()), generate()],
        scorer=includes(),
        config=GenerateConfig(max_tool_output=2_000),
    )
    for log_format in ("eval", "json"):
        model = get_model(MODEL, custom_outputs=outputs())
        [log] = inspect_eval(
            task, model=model, log_dir=log_dir, log_format=log_format, display="none"
        )
        if log.status != "success":
            raise SystemExit(f"inspect_ai run failed: {log.error}")
        print(log.location)


if __name__ == "__main__":
    main(sys.argv[1])
