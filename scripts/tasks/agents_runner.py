"""Runs a task with the OpenAI Agents SDK's own loop (the baseline).

The model is a chat-completions model pointing at the same llama-server,
temperature 0; the tools are the same: the rig's MCP `add` server over
streamable HTTP (only `add` allowed) and Windlass's built-ins served by
`windlass mcp --config CFG` over stdio (the same sandbox and work dir as the
gateway's). No instructions, as the gateway sends none of its own.
"""

import asyncio
import json

from agents import (Agent, MaxTurnsExceeded, ModelSettings, OpenAIChatCompletionsModel, Runner,
                    set_tracing_disabled)
from agents.items import MessageOutputItem, ToolCallItem, ToolCallOutputItem
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp, create_static_tool_filter
from openai import AsyncOpenAI

from .record import make_record


class AgentsRunner:
    def __init__(self, upstream, model, mcp_url, windlass_bin, config, max_turns=10):
        set_tracing_disabled(True)
        self.model = OpenAIChatCompletionsModel(
            model=model, openai_client=AsyncOpenAI(base_url=upstream, api_key="unused", timeout=900,
                                                   max_retries=0))
        self.mcp_url = mcp_url
        self.windlass_bin = windlass_bin
        self.config = config
        self.max_turns = max_turns

    def servers(self, offered):
        out = []
        if "calc" in offered:
            out.append(MCPServerStreamableHttp(
                {"url": self.mcp_url}, name="calc", cache_tools_list=True,
                tool_filter=create_static_tool_filter(allowed_tool_names=["add"])))
        if "builtins" in offered:
            out.append(MCPServerStdio(
                {"command": self.windlass_bin, "args": ["mcp", "--config", self.config]},
                name="windlass", cache_tools_list=True, client_session_timeout_seconds=120))
        return out

    def run(self, task, workdir):
        return asyncio.run(self.run_async(task, workdir))

    async def run_async(self, task, workdir):
        servers = self.servers(task.offered)
        for s in servers:
            await s.connect()
        try:
            agent = Agent(name="agent", model=self.model, mcp_servers=servers,
                          model_settings=ModelSettings(temperature=0))
            status, error, data = "completed", None, None
            try:
                result = await Runner.run(agent, task.prompt, max_turns=self.max_turns)
                data, answer = result, str(result.final_output or "")
            except MaxTurnsExceeded as e:
                status, data, answer = "incomplete", e.run_data, ""
            except Exception as e:  # noqa: BLE001 - one failed task must not stop the set
                status, error, answer = "failed", f"{type(e).__name__}: {e}", ""
                data = getattr(e, "run_data", None)
        finally:
            for s in reversed(servers):
                try:
                    await s.cleanup()
                except Exception:  # noqa: BLE001
                    pass
        calls, by_id, messages = [], {}, 0
        for item in (data.new_items if data else []):
            raw = item.raw_item
            if isinstance(item, ToolCallItem):
                call = {"name": getattr(raw, "name", None), "arguments": getattr(raw, "arguments", None)}
                by_id[getattr(raw, "call_id", None)] = call
                calls.append(call)
            elif isinstance(item, ToolCallOutputItem):
                cid = raw.get("call_id") if isinstance(raw, dict) else getattr(raw, "call_id", None)
                if cid in by_id:
                    by_id[cid]["output"] = item.output if isinstance(item.output, str) else json.dumps(
                        item.output, default=str)
            elif isinstance(item, MessageOutputItem):
                messages += 1
        usage = data.context_wrapper.usage if data else None
        return make_record(task, workdir, answer=answer, status=status,
                           turns=usage.requests if usage else None,
                           input_tokens=usage.input_tokens if usage else None,
                           output_tokens=usage.output_tokens if usage else None,
                           calls=calls, error=error, extra={"messages": messages})
