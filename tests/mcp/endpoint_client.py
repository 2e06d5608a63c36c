"""Drives Windlass's MCP endpoint with the official `mcp` Python SDK (2.x),
as any agent would: connect, list tools, call some. Used by
crates/windlass-tools/tests/mcp_endpoint.rs.

usage: endpoint_client.py URL TOKEN MODE CALLS_JSON
  MODE        auto (the current protocol revision, probed) or legacy (the
              initialize handshake with a session)
  CALLS_JSON  a list of [tool, arguments]

Prints one JSON object: the protocol version, the tool names and, per call,
its text and error flag (or the exception a refused request raised).
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def flag(result):
    for name in ("is_error", "isError"):
        if hasattr(result, name):
            return bool(getattr(result, name))
    return False


async def main():
    url, token, mode, calls = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    out = {"calls": []}
    async with http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode, cache=None) as client:
            out["protocol"] = client.protocol_version
            listed = await client.list_tools()
            out["tools"] = sorted(t.name for t in listed.tools)
            out["listed"] = listed.model_dump(mode="json", by_alias=True)
            for tool, arguments in calls:
                try:
                    r = await client.call_tool(tool, arguments)
                    text = "".join(getattr(c, "text", "") for c in r.content)
                    out["calls"].append({"tool": tool, "text": text, "error": flag(r)})
                except Exception as e:  # a JSON-RPC error from the server
                    out["calls"].append({"tool": tool, "exception": str(e)})
    print(json.dumps(out))


asyncio.run(main())
