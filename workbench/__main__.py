"""``python -m workbench check MODULE:REGISTRY`` (also the ``workbench`` console script).

Checks every tool's exports for the chosen providers, its resilience matrix and a dry run, prints
a table (or ``--json``), and exits 0 when nothing fails, 1 when something does, 2 when the
command itself is wrong (a bad argument, a registry that cannot be loaded, an unknown tool).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from workbench.declare import TARGETS, Target


def _targets(text: str) -> list[Target]:
    chosen = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [part for part in chosen if part not in TARGETS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"unknown target {', '.join(unknown) or '(none)'}; choose from {', '.join(TARGETS)}"
        )
    return [target for target in TARGETS if target in chosen]


_EPILOG = """\
example:
  workbench check my_tools:registry            every tool, every provider
  workbench check my_tools:registry --json     the same report as JSON

exit status: 0 when nothing fails, 1 when a check fails, 2 when the command is wrong
(a bad argument, a registry that cannot be loaded, an unknown tool)."""


def parser() -> argparse.ArgumentParser:
    """The command line: ``check`` is the one command."""
    root = argparse.ArgumentParser(
        prog="workbench",
        description="See what a model sees of a registry's tools, from the command line.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = root.add_subparsers(dest="command", required=True)
    check = commands.add_parser(
        "check",
        help="check a registry's exports, resilience and dry runs",
        description="Exports for each provider, the resilience matrix and a dry run per tool.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("registry", help="MODULE:REGISTRY, e.g. workbench.mcp.demo:registry")
    check.add_argument(
        "--targets",
        type=_targets,
        default=list(TARGETS),
        help=f"comma-separated providers (default: {','.join(TARGETS)})",
    )
    check.add_argument(
        "--tool",
        action="append",
        dest="tools",
        metavar="NAME",
        help="check only this tool (repeatable)",
    )
    check.add_argument("--allow", metavar="FILE", help="allow-list of accepted findings")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.add_argument(
        "--fail-on",
        choices=("error", "warning"),
        default="error",
        help="the least severe finding that fails the check (default: error)",
    )
    check.add_argument("--no-resilience", action="store_true", help="skip the resilience matrix")
    check.add_argument("--no-dry-run", action="store_true", help="skip the dry runs")
    return root


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = parser().parse_args(argv)
    from workbench.check import AllowList, check_registry, load_registry

    try:
        allow = AllowList.read(args.allow) if args.allow else None
    except (OSError, ValueError) as exc:
        print(f"workbench check: cannot read the allow-list: {exc}", file=sys.stderr)
        return 2
    try:
        tools = load_registry(args.registry)
    except Exception as exc:  # the user's module may raise anything while it loads
        print(f"workbench check: cannot load {args.registry}: {exc}", file=sys.stderr)
        return 2
    try:
        report = check_registry(
            tools,
            targets=args.targets,
            names=args.tools,
            allow=allow,
            resilience=not args.no_resilience,
            dry_runs=not args.no_dry_run,
        )
    except KeyError as exc:  # an unknown --tool
        print(f"workbench check: {exc.args[0]}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report.to_json(args.fail_on), indent=2, ensure_ascii=False))
    else:
        print(report.to_text(args.fail_on))
    return 1 if report.failures(args.fail_on) else 0


if __name__ == "__main__":
    sys.exit(main())
