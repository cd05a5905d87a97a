"""Servers of the official ``mcp`` SDK that the edge tests start as processes over stdio
(``python -m tests.mcp.sdk_servers NAME``), for what the reference servers cannot show:

- ``big``: a resource of ``BIG_CHARS`` characters (``big://text``) whose text needs escaping;
- ``many``: ``MANY`` resources listed ``PAGE`` to a page (the low-level server, by cursor), and
  a prompt with ``ARGUMENTS`` arguments whose completions are counted on ``count://completions``
  (and no tools);
- ``sampler``: a tool that asks its client for a sampling reply the handshake era's way
  (``ctx.session.create_message``), as SDK 2.x servers do;
- ``levels``: a server that logs, keeping the level ``logging/setLevel`` asked for, and a tool
  that logs one message at every level.
"""

from __future__ import annotations

import sys
import warnings

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPDeprecationWarning

BIG_CHARS = 5_000_000
MANY = 100_000
PAGE = 100
ARGUMENTS = 10_000
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def big() -> MCPServer:
    app = MCPServer("big")
    line = "<b>row</b> & more\n"

    @app.resource("big://text", mime_type="text/plain")
    def text() -> str:
        return line * (BIG_CHARS // len(line))

    return app


def many() -> Server:
    completions = 0

    async def list_resources(
        ctx: object, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        page = [
            types.Resource(uri=f"many://{i}", name=f"item {i}")
            for i in range(start, min(start + PAGE, MANY))
        ]
        after = start + PAGE
        return types.ListResourcesResult(
            resources=page, next_cursor=str(after) if after < MANY else None
        )

    async def read_resource(
        ctx: object, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        text = str(completions) if str(params.uri) == "count://completions" else "?"
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=str(params.uri), text=text)]
        )

    async def list_prompts(
        ctx: object, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        arguments = [types.PromptArgument(name=f"a{i}") for i in range(ARGUMENTS)]
        return types.ListPromptsResult(prompts=[types.Prompt(name="wide", arguments=arguments)])

    async def complete(ctx: object, params: types.CompleteRequestParams) -> types.CompleteResult:
        nonlocal completions
        completions += 1
        value = params.argument.value
        return types.CompleteResult(completion=types.Completion(values=[value + "x"]))

    async def list_tools(
        ctx: object, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])

    return Server(
        "many",
        on_list_tools=list_tools,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_completion=complete,
    )


def sampler() -> MCPServer:
    app = MCPServer("sampler")

    @app.tool()
    async def ask(topic: str, ctx: Context) -> str:
        """Ask the client's model about ``topic``."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            result = await ctx.session.create_message(
                messages=[
                    types.SamplingMessage(
                        role="user", content=types.TextContent(type="text", text=topic)
                    )
                ],
                max_tokens=20,
            )
        content = result.content
        return f"the model said: {getattr(content, 'text', content)}"

    return app


def levels() -> Server:
    asked: list[types.LoggingLevel] = []

    async def set_level(ctx: object, params: types.SetLevelRequestParams) -> types.EmptyResult:
        asked.append(params.level)
        return types.EmptyResult()

    async def list_tools(
        ctx: object, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        schema = {"type": "object", "properties": {}}
        return types.ListToolsResult(
            tools=[
                types.Tool(name="chatter", description="Log at every level", input_schema=schema)
            ]
        )

    async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        # As a 2025-era server should: only what setLevel asked for (everything until then).
        least = LEVELS.index(asked[-1]) if asked else 0
        for level in LEVELS[least:]:
            await ctx.session.send_log_message(level=level, data=f"a {level} message")  # type: ignore[attr-defined]
        asked_text = ",".join(asked) or "nothing"
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"setLevel asked: {asked_text}")]
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        return Server(
            "levels",
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_set_logging_level=set_level,
        )


async def serve_low_level(server: Server) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main(name: str) -> None:
    made = {"big": big, "many": many, "sampler": sampler, "levels": levels}[name]()
    if isinstance(made, MCPServer):
        made.run("stdio")
    else:
        anyio.run(serve_low_level, made)


def command(name: str) -> list[str]:
    """The argv that serves ``name`` with this Python (started in the repository's root)."""
    return [sys.executable, "-m", "tests.mcp.sdk_servers", name]


if __name__ == "__main__":
    main(sys.argv[1])
