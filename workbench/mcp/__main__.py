"""``python -m workbench.mcp serve MODULE:REGISTRY [--http] [--host H] [--port N] [--name NAME]``.

``MODULE:REGISTRY`` names a ``Registry`` (or a function of no arguments that returns one), e.g.
``workbench.mcp.demo:registry``; the module is imported from the working directory too. Over
stdio the protocol owns stdout. Over HTTP the URL is printed on stdout, alone on its line, once
the server accepts connections (``--port 0``, the default, picks a free port).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from workbench.check import load_registry
from workbench.mcp.server import DEFAULT_NAME, serve


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m workbench.mcp")
    commands = parser.add_subparsers(dest="command", required=True)
    serving = commands.add_parser("serve", help="serve a registry as an MCP server")
    serving.add_argument("registry", help="MODULE:REGISTRY, e.g. workbench.mcp.demo:registry")
    serving.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    serving.add_argument("--host", default="127.0.0.1", help="HTTP host (default 127.0.0.1)")
    serving.add_argument("--port", type=int, default=0, help="HTTP port (default: a free one)")
    serving.add_argument("--name", default=DEFAULT_NAME, help="the server's name")
    args = parser.parse_args(argv)
    try:
        tools = load_registry(args.registry)
    except (ImportError, AttributeError, TypeError, ValueError) as exc:
        print(f"error: cannot load {args.registry}: {exc}", file=sys.stderr)
        return 2

    def announce(where: str) -> None:
        if args.http:
            print(where, flush=True)
        print(f"workbench: serving {len(tools)} tools over {where}", file=sys.stderr, flush=True)

    try:
        serve(
            tools,
            transport="http" if args.http else "stdio",
            host=args.host,
            port=args.port,
            name=args.name,
            on_ready=announce,
        )
    except KeyboardInterrupt:
        return 0  # Ctrl-C is how a person stops a server they started: a clean exit
    return 0


if __name__ == "__main__":
    sys.exit(main())
