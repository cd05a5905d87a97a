"""Tools whose schemas providers tend to refuse or quietly change: nested models, free-form
mappings, unions, enums, recursion, optional lists, Literal, defaults of every JSON type,
constraints outside the providers' subsets, and hand-written schemas with oneOf and tuples."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

import workbench as wb


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Point(BaseModel):
    x: float
    y: float = 0.0


class Node(BaseModel):
    name: str
    children: list[Node] = []


class Circle(BaseModel):
    kind: Literal["circle"] = "circle"
    radius: float = 1.0


class Square(BaseModel):
    kind: Literal["square"] = "square"
    side: float


def nested(origin: Point, path: list[Point] | None = None) -> dict[str, Any]:
    """Walk from a point.

    Args:
        origin: Where to start.
        path: Points to visit.
    """
    return {"origin": origin.model_dump(), "path": [p.model_dump() for p in path or []]}


def mapping(meta: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
    """Attach metadata.

    Args:
        meta: Anything at all.
        labels: Label names to values.
    """
    return {"meta": meta, "labels": labels}


def union(shape: Circle | Square, value: int | str = 0) -> dict[str, Any]:
    """Measure a shape.

    Args:
        shape: A circle or a square.
        value: A number or a word.
    """
    return {"shape": shape.model_dump(), "value": value}


def enums(color: Color, mode: Literal["fast", "slow"] = "fast", level: Literal[1, 2, 3] = 1) -> str:
    """Pick options.

    Args:
        color: The colour.
        mode: How fast.
        level: How much.
    """
    return f"{color.value} {mode} {level}"


def recursive(tree: Node) -> int:
    """Count the nodes of a tree.

    Args:
        tree: The root.
    """

    def size(node: Node) -> int:
        return 1 + sum(size(child) for child in node.children)

    return size(tree)


def optional_lists(tags: list[str] | None = None, ids: list[int] = []) -> dict[str, Any]:  # noqa: B006
    """Filter by tags and ids.

    Args:
        tags: Tags to match.
        ids: Ids to match.
    """
    return {"tags": tags, "ids": ids}


def defaults(
    text: str = "x",
    count: int = 3,
    ratio: float = 0.5,
    flag: bool = False,
    nothing: None = None,
    items: list[int] = [1, 2],  # noqa: B006
    point: Point = Point(x=1.0),  # noqa: B008
) -> dict[str, Any]:
    """Echo the arguments, defaults filled in.

    Args:
        text: A string.
        count: An integer.
        ratio: A number.
        flag: A boolean.
        nothing: Always null.
        items: An array.
        point: An object.
    """
    return {
        "text": text,
        "count": count,
        "ratio": ratio,
        "flag": flag,
        "nothing": nothing,
        "items": items,
        "point": point.model_dump(),
    }


def constrained(
    code: Annotated[str, Field(min_length=2, max_length=5)],
    size: Annotated[int, Field(gt=0, multiple_of=2)],
    where: Path,
    unique: set[str] | None = None,
) -> str:
    """Constraints outside the providers' subsets.

    Args:
        code: A short code.
        size: An even positive size.
        where: A file path.
        unique: Distinct words.
    """
    return code


def no_arguments() -> str:
    """Takes nothing."""
    return "ok"


ONE_OF = {
    "type": "object",
    "properties": {
        "target": {
            "description": "An id or a name.",
            "oneOf": [{"type": "integer"}, {"type": "string", "minLength": 1}],
        },
        "pair": {
            "description": "Two numbers.",
            "type": "array",
            "prefixItems": [{"type": "number"}, {"type": "number"}],
        },
    },
    "required": ["target"],
    "additionalProperties": False,
}

FUNCTIONS = (nested, mapping, union, enums, recursive, optional_lists, defaults, constrained)


def registry() -> wb.Registry:
    """A fresh in-memory registry of every adversarial tool."""
    tools = wb.Registry(history=":memory:")
    for function in (*FUNCTIONS, no_arguments):
        tools.register(function)
    tools.register(
        lambda args: args,
        name="hand_written",
        description="A hand-written schema with oneOf and a tuple.",
        input_schema=ONE_OF,
    )
    return tools
