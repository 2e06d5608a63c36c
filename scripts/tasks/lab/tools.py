"""The lab loop's tools: the same MCP servers the gateway uses, listed and
called through the Agents SDK's MCP clients, named and rendered as Windlass
names and renders them upstream (`<label>__<tool>`, errors as `Error: ...`).
"""

import json

from agents.mcp import MCPServerStdio, MCPServerStreamableHttp


class LabTools:
    def __init__(self, mcp_url, windlass_bin, config):
        self.servers = {
            "calc": MCPServerStreamableHttp({"url": mcp_url}, name="calc", cache_tools_list=True),
            "builtins": MCPServerStdio({"command": windlass_bin, "args": ["mcp", "--config", config]},
                                       name="windlass", cache_tools_list=True,
                                       client_session_timeout_seconds=120),
        }
        self.labels = {"calc": "calc", "builtins": "windlass"}
        self.allowed = {"calc": {"add"}}
        self.tools = {}  # upstream name -> (server key, tool name, schema, description)

    async def open(self):
        for key, server in self.servers.items():
            await server.connect()
            for tool in await server.list_tools():
                if key in self.allowed and tool.name not in self.allowed[key]:
                    continue
                name = f"{self.labels[key]}__{tool.name}"
                self.tools[name] = (key, tool.name, tool.input_schema, tool.description or "")

    async def close(self):
        for server in reversed(list(self.servers.values())):
            try:
                await server.cleanup()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass

    def declared(self, offered):
        """The `tools` of a chat-completions request, as the gateway sends them."""
        out = []
        for name, (key, _tool, schema, description) in self.tools.items():
            if key in offered:
                out.append({"type": "function",
                            "function": {"name": name, "description": description, "parameters": schema}})
        return out

    def schema(self, name):
        entry = self.tools.get(name)
        return entry[2] if entry else None

    async def call(self, name, arguments):
        """Runs one call; returns (text the model sees, is_error)."""
        entry = self.tools.get(name)
        if entry is None:
            return f"Error: unknown tool {name}", True
        try:
            args = json.loads(arguments) if arguments else {}
        except ValueError as e:
            return f"Error: tool arguments are not valid JSON: {e}", True
        if not isinstance(args, dict):
            return "Error: tool arguments must be a JSON object", True
        key, tool, _schema, _d = entry
        try:
            result = await self.servers[key].call_tool(tool, args)
        except Exception as e:  # noqa: BLE001 - a failed call is an error output
            return f"Error: {e}", True
        text = "\n".join(getattr(c, "text", "") for c in result.content if getattr(c, "text", None))
        if getattr(result, "is_error", None) or getattr(result, "isError", None):
            # `windlass mcp` already starts its error text with "Error: ".
            return "Error: " + text.removeprefix("Error: "), True
        return text, False
