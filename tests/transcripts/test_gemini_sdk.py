"""Gemini transcripts as google-genai itself dumps them: ``model_dump()`` keeps every unset field
as ``null`` (``"function_call": null`` beside a ``text``) and writes snake_case keys, or camelCase
with ``by_alias=True``. Each run is built with the SDK's own types, dumped each way, read back by
``wb.transcripts.load``, and every receipt must come back exactly as the SDK object held it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.genai import types as g

import workbench as wb

CALLS = [
    ("list_files", {"path": "."}, {"output": "a.txt\nb.txt"}),
    ("read_file", {"path": "a.txt"}, {"output": "alpha"}),
    ("read_file", {"path": "missing.txt"}, {"error": "no such file: missing.txt"}),
    ("word_count", {"text": "one two"}, {"words": 2, "chars": 7}),
    ("search", {"query": "x", "limit": 3}, {"matches": [], "note": None}),
]
DUMPS = {
    "nulls kept, snake_case": {"mode": "json"},
    "nulls kept, camelCase": {"mode": "json", "by_alias": True},
    "nulls dropped, camelCase": {"mode": "json", "by_alias": True, "exclude_none": True},
}


def expected_receipt(response: dict[str, Any]) -> str:
    if len(response) == 1 and isinstance(next(iter(response.values())), str):
        return next(iter(response.values()))
    return json.dumps(response, ensure_ascii=False)


def contents(with_ids: bool) -> list[g.Content]:
    """A run: the person asks, the model calls each tool once per turn, each is answered."""
    run = [g.Content(role="user", parts=[g.Part(text="Look around, please.")])]
    for index, (name, args, response) in enumerate(CALLS):
        call_id = f"call-{index}" if with_ids else None
        run.append(
            g.Content(
                role="model",
                parts=[
                    g.Part(text=f"Calling {name}."),
                    g.Part(function_call=g.FunctionCall(id=call_id, name=name, args=args)),
                ],
            )
        )
        answer = g.FunctionResponse(id=call_id, name=name, response=response)
        run.append(g.Content(role="user", parts=[g.Part(function_response=answer)]))
    run.append(g.Content(role="model", parts=[g.Part(text="Done.")]))
    return run


def declarations() -> g.Tool:
    return g.Tool(
        function_declarations=[
            g.FunctionDeclaration(
                name=name,
                description=f"The {name} tool.",
                parameters_json_schema={"type": "object", "properties": {}},
            )
            for name in sorted({name for name, _, _ in CALLS})
        ]
    )


def load(tmp_path: Path, data: Any) -> wb.History:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return wb.transcripts.load(path)


def receipts_of(history: wb.History) -> list[tuple[str, str]]:
    frame = history.to_dataframe()
    return list(zip(frame["tool"], frame["receipt"], strict=True))


EXPECTED = [(name, expected_receipt(response)) for name, _, response in CALLS]


@pytest.mark.parametrize("dump", list(DUMPS))
@pytest.mark.parametrize("with_ids", [True, False], ids=["with ids", "without ids"])
def test_a_list_of_sdk_contents_round_trips_every_receipt(tmp_path, dump, with_ids):
    data = [content.model_dump(**DUMPS[dump]) for content in contents(with_ids)]
    if dump.startswith("nulls kept"):
        assert data[1]["parts"][0].get("function_call", "absent") is None or (
            data[1]["parts"][0].get("functionCall", "absent") is None
        )
    history = load(tmp_path, data)
    assert history.format == "gemini" and history.unreadable == []
    assert receipts_of(history) == EXPECTED
    frame = history.to_dataframe()
    assert list(frame["arguments"]) == [args for _, args, _ in CALLS]


@pytest.mark.parametrize("dump", list(DUMPS))
def test_a_request_object_with_sdk_tools_round_trips(tmp_path, dump):
    options = DUMPS[dump]
    request = {
        "model": "gemini-2.5-flash",
        "contents": [content.model_dump(**options) for content in contents(with_ids=True)],
        "tools": [declarations().model_dump(**options)],
    }
    history = load(tmp_path, request)
    assert history.unreadable == []
    assert receipts_of(history) == EXPECTED


@pytest.mark.parametrize("dump", list(DUMPS))
def test_request_and_response_pairs_built_by_the_sdk_round_trip(tmp_path, dump):
    """A run logged call by call: each request repeats the conversation so far and each
    response is a ``GenerateContentResponse`` dumped whole (its unset fields as nulls)."""
    options = DUMPS[dump]
    run = contents(with_ids=False)
    pairs = []
    for end in range(1, len(run), 2):
        request = {"contents": [content.model_dump(**options) for content in run[:end]]}
        reply = g.GenerateContentResponse(
            candidates=[g.Candidate(content=run[end], finish_reason=g.FinishReason.STOP)],
            response_id="resp-1",
        )
        pairs.append({"request": request, "response": reply.model_dump(**options)})
    history = load(tmp_path, pairs)
    assert history.unreadable == []
    assert receipts_of(history) == EXPECTED


def test_code_the_model_ran_round_trips_with_nulls_kept(tmp_path):
    run = [
        g.Content(
            role="model",
            parts=[
                g.Part(executable_code=g.ExecutableCode(code="print(6*7)", language="PYTHON")),
                g.Part(
                    code_execution_result=g.CodeExecutionResult(
                        outcome=g.Outcome.OUTCOME_OK, output="42\n"
                    )
                ),
            ],
        )
    ]
    history = load(tmp_path, [content.model_dump(mode="json") for content in run])
    assert history.unreadable == []
    assert receipts_of(history) == [("code_execution", "42\n")]
