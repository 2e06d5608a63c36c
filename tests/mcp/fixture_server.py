"""MCP fixture server for Windlass integration tests, built on the official `mcp`
Python SDK. Runs with mcp 2.x (`MCPServer`) and mcp 1.x (`FastMCP`).

usage: fixture_server.py (--port N | --stdio) [--stateless] [--json] [--page-size K]
  --port N       streamable HTTP on http://127.0.0.1:N/mcp
  --stdio        stdio transport
  --stateless    stateless streamable HTTP (no Mcp-Session-Id)
  --json         plain JSON responses instead of SSE streams
  --page-size K  tools/list returns K tools per page, with nextCursor
  --dynamic      adds `grow()`: registers a tool `extra` and sends tools/list_changed
  --header-tool  adds `headers()`: the HTTP request headers it received, values reversed
  --list-rendezvous DIR --list-peers N
                 tools/list first marks DIR, then answers only once N servers have
                 marked it (an error after 10 s): servers listed one after another
                 never get there, servers listed concurrently do
"""

import argparse
import asyncio
import os

from pydantic import BaseModel

import mcp.types as types

try:  # mcp 2.x renamed FastMCP to MCPServer
    from mcp.server.mcpserver import MCPServer as Server

    V2 = True
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server

    V2 = False

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, default=8093)
p.add_argument("--stdio", action="store_true")
p.add_argument("--stateless", action="store_true")
p.add_argument("--json", action="store_true")
p.add_argument("--page-size", type=int, default=0)
p.add_argument("--header-tool", action="store_true")
p.add_argument("--dynamic", action="store_true")
p.add_argument("--list-rendezvous", default="")
p.add_argument("--list-peers", type=int, default=2)
args = p.parse_args()

http = dict(host="127.0.0.1", port=args.port, stateless_http=args.stateless, json_response=args.json)
# 1.x takes the HTTP settings in the constructor, 2.x in run().
mcp = Server("windlass-fixture") if V2 else Server("windlass-fixture", **http)

# A 1x1 transparent PNG, base64.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII="


class Weather(BaseModel):
    city: str
    temperature_c: float
    conditions: str


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers"""
    return a + b


@mcp.tool()
def echo(text: str) -> str:
    """Echo the given text back"""
    return text


@mcp.tool()
async def slow(ms: int) -> str:
    """Sleep ms milliseconds, then answer"""
    await asyncio.sleep(ms / 1000)
    return f"slept {ms}"


@mcp.tool()
def crash() -> str:
    """Kill the server process mid-call"""
    os._exit(1)


@mcp.tool()
def fail(message: str) -> types.CallToolResult:
    """Return a tool error (isError true) carrying the message"""
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], isError=True)


@mcp.tool()
def multi() -> types.CallToolResult:
    """Return two text parts, an image and structured content"""
    return types.CallToolResult(
        content=[
            types.TextContent(type="text", text="first part"),
            types.TextContent(type="text", text="second part"),
            types.ImageContent(type="image", data=PNG, mimeType="image/png"),
        ],
        structuredContent={"total": 3},
    )


@mcp.tool()
def weather(city: str) -> Weather:
    """Current weather for a city (structured output)"""
    return Weather(city=city, temperature_c=21.5, conditions="sunny")


if args.header_tool:
    if V2:
        from mcp.server.mcpserver import Context
    else:
        from mcp.server.fastmcp import Context

    @mcp.tool()
    def headers(ctx: Context) -> dict:
        """The HTTP headers of this call: lower-case names, values reversed (so
        a test can tell secrets arrived without the output repeating them)"""
        request = ctx.request_context.request
        return {k.lower(): v[::-1] for k, v in request.headers.items()} if request is not None else {}


if args.dynamic:
    if V2:
        from mcp.server.mcpserver import Context
    else:
        from mcp.server.fastmcp import Context

    def extra() -> str:
        """A tool that appeared at runtime"""
        return "extra"

    @mcp.tool()
    async def grow(ctx: Context) -> str:
        """Adds the tool `extra` and tells the client its tool list changed"""
        mcp.add_tool(extra)
        await ctx.request_context.session.send_tool_list_changed()
        return "grown"


def page(tools, cursor):
    """One page of tools/list: the cursor is the offset of the page."""
    if args.page_size <= 0:
        return types.ListToolsResult(tools=tools)
    start = int(cursor or 0)
    end = start + args.page_size
    return types.ListToolsResult(tools=tools[start:end], nextCursor=str(end) if end < len(tools) else None)


async def rendezvous():
    """Marks the rendezvous folder, then waits for `--list-peers` marks."""
    if not args.list_rendezvous:
        return
    open(os.path.join(args.list_rendezvous, str(os.getpid())), "w").close()
    for _ in range(1000):
        if len(os.listdir(args.list_rendezvous)) >= args.list_peers:
            return
        await asyncio.sleep(0.01)
    raise RuntimeError("tools/list rendezvous: the other servers were not listed meanwhile")


if args.page_size > 0 or args.list_rendezvous:
    if V2:
        # Replace the low-level tools/list handler (handlers get the request params).
        async def list_tools_v2(ctx, params):
            await rendezvous()
            return page(await mcp.list_tools(), params.cursor if params else None)

        mcp._lowlevel_server.add_request_handler("tools/list", types.PaginatedRequestParams, list_tools_v2)
    else:
        # Re-register the low-level handler with the request-taking signature.
        # The SDK also calls it with None to refresh its tool cache: answer all then.
        async def list_tools_v1(req: types.ListToolsRequest) -> types.ListToolsResult:
            tools = await mcp.list_tools()
            if req is None:
                return types.ListToolsResult(tools=tools)
            await rendezvous()
            return page(tools, req.params.cursor if req.params else None)

        mcp._mcp_server.list_tools()(list_tools_v1)


if __name__ == "__main__":
    if args.stdio:
        mcp.run("stdio")
    elif V2:
        mcp.run("streamable-http", **http)
    else:
        mcp.run("streamable-http")
