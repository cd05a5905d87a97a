"""A return annotation that cannot be resolved (a ``TypedDict`` local to a function, under
``from __future__ import annotations``) costs the tool its output schema: declaring it warns,
naming the annotation, and ``check_exports`` lists it; the same type at module level declares
the schema."""

from __future__ import annotations

import pytest
from typing_extensions import TypedDict

import workbench as wb
from workbench.declare import DeclareWarning


class Stock(TypedDict):
    item: str
    count: int


def test_a_local_return_type_warns_and_is_a_check_exports_row():
    class Inventory(TypedDict):
        items: list[str]

    tools = wb.Registry(history=":memory:")
    with pytest.warns(DeclareWarning, match="'Inventory' cannot be resolved") as caught:

        @tools.tool
        def inventory(n: int) -> Inventory:
            """List n items."""
            return {"items": [f"item {i}" for i in range(n)]}

    assert "inventory:" in str(caught[0].message) and "module level" in str(caught[0].message)
    spec = tools.spec("inventory")
    assert spec.output_schema is None and len(spec.declare_warnings) == 1
    rows = tools.check_exports()
    row = rows[(rows["tool"] == "inventory") & (rows["target"] == "mcp")]
    assert list(row["severity"]) == ["warning"]
    assert "'Inventory' cannot be resolved" in row["problem"].iloc[0]
    # The warning is the declaration's, not a part of the tool's runtime metadata.
    assert "declare_warnings" not in spec.metadata()
    assert inventory.invoke({"n": 2}).wait(10).ok


def test_a_module_level_return_type_declares_its_schema_without_a_warning(recwarn):
    tools = wb.Registry(history=":memory:")

    @tools.tool
    def stock(item: str) -> Stock:
        """Count an item."""
        return {"item": item, "count": 3}

    assert not [w for w in recwarn if issubclass(w.category, DeclareWarning)]
    assert tools.spec("stock").output_schema["required"] == ["item", "count"]
    assert not tools.check_exports()["problem"].str.contains("cannot be resolved").any()
