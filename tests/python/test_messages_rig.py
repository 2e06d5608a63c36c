"""Opt-in (run by hand): the Anthropic SDK through `windlass serve` in front of
the rig's real llama.cpp model. Skipped unless WINDLASS_RIG_LLM is set, e.g.
WINDLASS_RIG_LLM=http://127.0.0.1:8081/v1 (model `qwen2.5-1.5b`, override with
WINDLASS_RIG_MODEL); WINDLASS_RIG_MCP=http://127.0.0.1:8091/mcp adds the MCP
check (the rig's `add` server)."""

import os

import pytest

from conftest import Windlass

LLM = os.environ.get("WINDLASS_RIG_LLM")
MODEL = os.environ.get("WINDLASS_RIG_MODEL", "qwen2.5-1.5b")
MCP = os.environ.get("WINDLASS_RIG_MCP")

pytestmark = pytest.mark.skipif(not LLM, reason="WINDLASS_RIG_LLM not set")

WEATHER = {
    "name": "get_weather",
    "description": "Current weather of a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


@pytest.fixture(scope="module")
def client():
    import anthropic

    w = Windlass(LLM, "--mcp-allow-host", "127.0.0.1")
    yield anthropic.Anthropic(base_url=w.base, api_key="test", max_retries=0, timeout=300)
    w.close()


def test_create_and_stream_text(client):
    msg = client.messages.create(
        model=MODEL, max_tokens=32, messages=[{"role": "user", "content": "Say hello in one word."}]
    )
    assert msg.content[0].type == "text" and msg.content[0].text.strip()
    assert msg.usage.input_tokens > 0 and msg.usage.output_tokens > 0
    with client.messages.stream(
        model=MODEL, max_tokens=32, messages=[{"role": "user", "content": "Count to three."}]
    ) as stream:
        final = stream.get_final_message()
    assert final.content[0].text.strip() and final.stop_reason in ("end_turn", "max_tokens")


def test_client_tool_round_trip(client):
    messages = [{"role": "user", "content": "What is the weather in Paris? Use the tool."}]
    with client.messages.stream(
        model=MODEL, max_tokens=128, messages=messages, tools=[WEATHER], tool_choice={"type": "any"}
    ) as stream:
        first = stream.get_final_message()
    assert first.stop_reason == "tool_use"
    use = [b for b in first.content if b.type == "tool_use"][0]
    assert use.name == "get_weather"
    messages += [
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "18C and sunny"}]},
    ]
    second = client.messages.create(model=MODEL, max_tokens=64, messages=messages, tools=[WEATHER])
    assert second.stop_reason == "end_turn" and second.content[0].text.strip()


def test_count_tokens_uses_the_model_tokenizer(client):
    n = client.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "hello"}])
    assert n.input_tokens > 0


@pytest.mark.skipif(not MCP, reason="WINDLASS_RIG_MCP not set")
def test_server_run_mcp_tool(client):
    # Streamed: a CPU model's whole answer can take longer than the
    # upstream's first-byte timeout when asked for one complete body.
    with client.beta.messages.stream(
        model=MODEL,
        max_tokens=128,
        messages=[{"role": "user", "content": "Use the add tool to add 17 and 25."}],
        mcp_servers=[{"type": "url", "name": "calc", "url": MCP}],
        betas=["mcp-client-2025-11-20"],
    ) as stream:
        msg = stream.get_final_message()
    kinds = [b.type for b in msg.content]
    assert "mcp_tool_use" in kinds and "mcp_tool_result" in kinds, kinds
    result = [b for b in msg.content if b.type == "mcp_tool_result"][0]
    assert "42" in result.content[0].text
