"""Seed 000's matrix test: every built-in and every demo tool refuses unknown properties, at the
top level and in every nested object, through the preflight alone."""

from __future__ import annotations

import pytest

from workbench.mcp import demo
from workbench.preflight._resilience import baseline_arguments, refuses_unknown_properties

DEMO = demo.registry()


@pytest.mark.parametrize("name", DEMO.names())
def test_every_built_in_and_demo_tool_refuses_unknown_properties(name):
    tool = DEMO[name]
    baseline = baseline_arguments(tool.spec.input_schema)
    assert tool.preflight(baseline).ok, tool.preflight(baseline).error
    assert refuses_unknown_properties(tool.preflight, baseline)
    matrix = DEMO.resilience(name)
    unknown = matrix[matrix["case"].str.contains("unknown")]
    assert not unknown.empty and set(unknown["outcome"]) == {"refused"}


def test_the_demo_registry_holds_the_built_ins_too():
    assert {"shell_exec", "process", "file_read", "artifact_read"} <= set(DEMO.names())
