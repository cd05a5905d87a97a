"""Parsing Python source in tests, whatever an earlier test did to this interpreter.

CPython 3.11's AST builder keeps a recursion counter that a ``RecursionError`` elsewhere in
the process (another test's deep recursion, a thread compiling at the same moment) can leave
miscounted; ``ast.parse`` then fails with "AST constructor recursion depth mismatch", which
says nothing about the source. The source is then parsed in a fresh interpreter and its tree
handed back (AST nodes pickle), so a check of the code never fails for that reason.
"""

from __future__ import annotations

import ast
import pickle
import subprocess
import sys

_FRESH = (
    "import ast, pickle, sys; "
    "sys.stdout.buffer.write(pickle.dumps(ast.parse(sys.stdin.buffer.read())))"
)


def parse(source: str) -> ast.Module:
    """``ast.parse(source)``, in a fresh interpreter when this one's AST builder is off."""
    try:
        return ast.parse(source)
    except SystemError as exc:
        if "recursion depth mismatch" not in str(exc):
            raise
    done = subprocess.run(
        [sys.executable, "-c", _FRESH],
        input=source.encode("utf-8"),
        capture_output=True,
        check=True,
    )
    tree = pickle.loads(done.stdout)
    assert isinstance(tree, ast.Module)
    return tree
