"""Inlining references never multiplies a schema without bound: Gemini has no ``$ref``, so models
that refer to each other are inlined, and strict mode inlines a ``$ref`` that has siblings. Each
converter keeps its output under ``MAX_NODES`` schema nodes, says what it gave up, and refuses
when it cannot."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

from google.genai import types as genai

from workbench.declare._exports import check_exports
from workbench.declare._gemini import MAX_NODES, RECURSION_DEPTH, to_gemini
from workbench.declare._openai_strict import to_openai_strict
from workbench.declare._spec import ToolSpec


def nodes(value: Any) -> int:
    """How many dicts ``value`` holds (itself included)."""
    if isinstance(value, dict):
        return 1 + sum(nodes(v) for v in value.values())
    if isinstance(value, list):
        return sum(nodes(v) for v in value)
    return 0


def chain(models: int, *, back: bool) -> dict[str, Any]:
    """``models`` models, each with two properties of the next model's type (the last one's
    pointing back at the first when ``back``): inlined whole, it doubles at every model."""
    defs: dict[str, Any] = {}
    for i in range(models):
        following = {"$ref": f"#/$defs/M{(i + 1) % models}"}
        last = i == models - 1
        properties = {"name": {"type": "string"}}
        if back or not last:
            properties |= {"left": following, "right": dict(following)}
        defs[f"M{i}"] = {"type": "object", "properties": properties}
    return {"type": "object", "properties": {"root": {"$ref": "#/$defs/M0"}}, "$defs": defs}


def test_models_that_refer_to_each_other_are_inlined_less_deeply_to_stay_in_bounds():
    schema = chain(6, back=True)  # at full depth: 18 levels of doubling, ~500,000 nodes
    conversion = to_gemini(schema)
    assert 0 < nodes(conversion.schema) <= MAX_NODES
    assert not conversion.refused
    problems = [change.problem for change in conversion.changes]
    assert any(
        f"`M0` is inlined 1 level deep (not {RECURSION_DEPTH}: that would make more than "
        f"{MAX_NODES:,} schema nodes)" in problem
        for problem in problems
    ), problems
    declaration = {"name": "walk", "description": "", "parameters": conversion.schema}
    dumped = genai.FunctionDeclaration.model_validate(declaration).model_dump(
        by_alias=True, exclude_none=True, mode="json"
    )
    assert dumped == declaration


def test_a_recursion_that_fits_keeps_its_full_depth():
    conversion = to_gemini(chain(1, back=True))
    problems = [change.problem for change in conversion.changes]
    assert problems == [
        f"recursive `M0` is inlined {RECURSION_DEPTH} levels deep (Gemini has no $ref); deeper "
        "`root.left.left.left`, `root.left.left.right`, `root.left.right.left`, "
        "… left out"
    ]


def test_models_too_many_to_inline_even_once_are_refused_with_the_reason():
    schema = chain(15, back=False)  # no recursion: 2**14 copies of the last model
    rows = check_exports([ToolSpec(name="walk", input_schema=schema)], targets=["gemini"])
    refused = rows[rows["severity"] == "error"]["problem"].tolist()
    assert refused == [
        f"inlining the schema's references makes more than {MAX_NODES:,} schema nodes, even "
        "with each model inlined once (Gemini has no $ref)"
    ]
    assert to_gemini(schema).schema == {}


def test_a_strict_schema_with_the_same_models_inlines_nothing_and_stays_small():
    conversion = to_openai_strict(chain(15, back=False))  # $defs stay: one copy of each model
    assert nodes(conversion.schema) < 10 * 15


_ROOT_BEHIND_ALL_OF = textwrap.dedent(
    """
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))
    from workbench.declare._openai_strict import to_openai_strict
    inner = {"$ref": "#", "description": "again", "minLength": 3}
    chained = {"allOf": [{"allOf": [inner]}]}
    schema = {
        "type": "object",
        "properties": {"p": chained, "q": json.loads(json.dumps(chained))},
        "required": ["p", "q"],
        "additionalProperties": False,
    }
    conversion = to_openai_strict(schema)
    print(json.dumps({"schema": conversion.schema, "refused": conversion.refused,
                      "problems": [change.problem for change in conversion.changes]}))
    """
)


def test_a_reference_to_the_root_behind_nested_all_of_is_refused_not_inlined_forever():
    # Found by the property test: two properties, each a chain of one-element allOf ending in
    # {"$ref": "#"} with a sibling. Before, each level inlined the root twice, untracked, to 64
    # levels. Run in a child under a 1.5 GB address-space limit so that a regression fails here
    # instead of taking the machine's memory.
    child = subprocess.run(
        [sys.executable, "-c", _ROOT_BEHIND_ALL_OF],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    answer = json.loads(child.stdout)
    assert answer["refused"] is True
    assert nodes(answer["schema"]) < 50
    assert any("refers to # from inside itself" in problem for problem in answer["problems"])
