"""jsonschema is imported where the preflight first needs it, without the format package that
builds a parser grammar on import (seconds, paid by the first refused arguments of a session)."""

from __future__ import annotations

import subprocess
import sys

FIRST_REFUSAL = """
import sys, time
import workbench as wb
from workbench.preflight import Preflight

schema = {
    "type": "object",
    "properties": {"n": {"anyOf": [{"type": "integer", "minimum": 3}, {"type": "null"}]}},
    "required": ["n"],
}
started = time.perf_counter()
result = Preflight(schema, tool_name="t")({"n": 1})
took = time.perf_counter() - started
assert result.error is not None
print("jsonschema" in sys.modules, "rfc3987_syntax" in sys.modules)
import rfc3987_syntax  # still imports by name afterwards
print(rfc3987_syntax.__name__, file=sys.stderr)
print(f"{took:.3f}", file=sys.stderr)
"""


def test_the_first_refusal_imports_jsonschema_without_its_slow_format_parser():
    done = subprocess.run(
        [sys.executable, "-c", FIRST_REFUSAL], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]
    assert done.stderr.splitlines()[0] == "rfc3987_syntax"


def test_a_schema_checked_at_declaration_takes_the_same_import():
    code = (
        "import sys\nfrom workbench.declare import tool_from_schema\n"
        "tool_from_schema(None, name='t', description='d', input_schema="
        "{'type': 'object', 'properties': {'a': {'type': 'string'}}}, meta={})\n"
        "print('jsonschema' in sys.modules, 'rfc3987_syntax' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]
