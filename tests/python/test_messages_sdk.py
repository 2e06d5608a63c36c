"""The official Anthropic Python SDK against `windlass serve`'s Messages
surface (/v1/messages), in front of the scripted chat-completions upstream:
messages.create, messages.stream (its accumulator is strict about the
event grammar) with text and a client tool round trip, count_tokens,
Anthropic's errors, and a server-run tool on a real MCP server
(tests/mcp/fixture_server.py), named by the request's `mcp_servers` and
attached by the operator's `[server.messages] mcp_servers`."""

import json
import sys
import tempfile
from pathlib import Path

import anthropic
import pytest

from conftest import Fake, Windlass, ROOT

FIXTURE = ROOT / "tests" / "mcp" / "fixture_server.py"

WEATHER = {
    "name": "get_weather",
    "description": "Current weather of a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


@pytest.fixture(scope="module")
def setup():
    tmp = tempfile.TemporaryDirectory()
    config = Path(tmp.name) / "windlass.toml"
    config.write_text(
        f"""
[server.messages]
mcp_servers = []

[[mcp.servers]]
label = "calc"
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(FIXTURE))}, "--stdio"]
require_approval = "never"
"""
    )
    fake = Fake()
    w = Windlass(fake.upstream, "--config", str(config))
    client = anthropic.Anthropic(base_url=w.base, api_key="test", max_retries=0)
    yield client, fake, w
    w.close()
    fake.close()
    tmp.cleanup()


def test_create_text(setup):
    client, fake, _ = setup
    fake.script({"text": "Hello from Windlass", "usage": [11, 4]})
    msg = client.messages.create(
        model="m",
        max_tokens=64,
        system=[{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        messages=[{"role": "user", "content": "hi"}],
        metadata={"user_id": "user-7"},
        # The SDK (2.x) no longer has sampling arguments; the API takes them.
        extra_body={"temperature": 0.2},
    )
    assert msg.type == "message" and msg.role == "assistant"
    assert msg.content[0].type == "text" and msg.content[0].text == "Hello from Windlass"
    assert msg.stop_reason == "end_turn"
    assert (msg.usage.input_tokens, msg.usage.output_tokens) == (11, 4)
    assert msg._request_id
    sent = fake.requests()[-1]
    assert sent["messages"][0] == {"role": "system", "content": "Be brief."}
    assert sent["max_tokens"] == 64 and sent["temperature"] == 0.2
    assert sent.get("safety_identifier") == "user-7"


def test_stream_text(setup):
    client, fake, _ = setup
    fake.script({"text": "Streaming through the gateway", "chunk_chars": 4, "usage": [9, 5]})
    with client.messages.stream(
        model="m", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        types = [e.type for e in stream]
        final = stream.get_final_message()
    assert types[0] == "message_start" and types[-1] == "message_stop"
    assert "content_block_delta" in types and "message_delta" in types
    assert final.content[0].text == "Streaming through the gateway"
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens == 5


def test_stream_client_tool_round_trip(setup):
    client, fake, _ = setup
    fake.script(
        {"text": "Checking.", "tool_calls": [{"name": "get_weather", "arguments": '{"city":"Paris"}', "id": "toolu_01"}]}
    )
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    with client.messages.stream(model="m", max_tokens=128, messages=messages, tools=[WEATHER]) as stream:
        first = stream.get_final_message()
    assert first.stop_reason == "tool_use"
    use = [b for b in first.content if b.type == "tool_use"][0]
    assert use.id == "toolu_01" and use.name == "get_weather" and use.input == {"city": "Paris"}

    fake.script({"text": "It is 18C in Paris."})
    messages += [
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "18C, sunny"}]},
    ]
    with client.messages.stream(model="m", max_tokens=128, messages=messages, tools=[WEATHER]) as stream:
        second = stream.get_final_message()
    assert second.stop_reason == "end_turn"
    assert second.content[0].text == "It is 18C in Paris."
    sent = fake.requests()[-1]["messages"]
    tool_msgs = [m for m in sent if m["role"] == "tool"]
    assert tool_msgs and tool_msgs[0]["tool_call_id"] == "toolu_01" and "18C" in tool_msgs[0]["content"]


def test_count_tokens(setup):
    client, _, _ = setup
    short = client.messages.count_tokens(model="m", messages=[{"role": "user", "content": "hello"}])
    long = client.messages.count_tokens(
        model="m", messages=[{"role": "user", "content": "hello there " * 50}], tools=[WEATHER]
    )
    assert short.input_tokens > 0
    assert long.input_tokens > short.input_tokens


def test_errors(setup):
    client, fake, _ = setup
    before = len(fake.requests())
    with pytest.raises(anthropic.BadRequestError) as e:
        client.messages.create(
            model="m",
            max_tokens=16,
            messages=[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_zz", "content": "x"}]}],
        )
    assert e.value.status_code == 400
    assert e.value.body["error"]["type"] == "invalid_request_error"
    assert "toolu_zz" in e.value.body["error"]["message"]
    with pytest.raises(anthropic.BadRequestError) as e:
        client.messages.create(
            model="m",
            max_tokens=16,
            messages=[{"role": "user", "content": "hi"}],
            tools=[{"type": "web_search_20250305", "name": "web_search"}],
        )
    assert "tools.0.type" in e.value.body["error"]["message"]
    with pytest.raises(anthropic.NotFoundError):
        client.get("/v1/messages/nope", cast_to=object)
    assert len(fake.requests()) == before, "nothing reached the upstream"


def test_mcp_toolset_runs_inside_the_request(setup):
    """The MCP connector as the SDK types it (beta `mcp-client-2025-11-20`): a
    toolset naming the operator's configured `calc` server; the call runs in
    Windlass and comes back as mcp_tool_use / mcp_tool_result blocks, which
    the beta stream accumulator builds (input from input_json_delta)."""
    client, fake, _ = setup
    fake.script(
        {"tool_calls": [{"name": "calc__add", "arguments": '{"a":17,"b":25}'}]},
        {"text": "17 + 25 = 42"},
    )
    with client.beta.messages.stream(
        model="m",
        max_tokens=128,
        messages=[{"role": "user", "content": "What is 17 + 25?"}],
        tools=[
            {
                "type": "mcp_toolset",
                "mcp_server_name": "calc",
                "default_config": {"enabled": False},
                "configs": {"add": {"enabled": True}},
            }
        ],
        betas=["mcp-client-2025-11-20"],
    ) as stream:
        final = stream.get_final_message()
    kinds = [b.type for b in final.content]
    assert kinds == ["mcp_tool_use", "mcp_tool_result", "text"], kinds
    use, result = final.content[0], final.content[1]
    assert use.name == "add" and use.server_name == "calc" and use.input == {"a": 17, "b": 25}
    assert result.tool_use_id == use.id and not result.is_error
    assert "42" in result.content[0].text
    assert final.stop_reason == "end_turn"
    # The tool's real answer went back to the model, and only `add` was offered.
    sent = fake.requests()[-1]
    assert any(m["role"] == "tool" and "42" in m["content"] for m in sent["messages"])
    assert [t["function"]["name"] for t in sent["tools"]] == ["calc__add"]


@pytest.fixture(scope="module")
def attached():
    """The operator attaches its `calc` server to every Messages request."""
    tmp = tempfile.TemporaryDirectory()
    config = Path(tmp.name) / "windlass.toml"
    config.write_text(
        f"""
[server.messages]
mcp_servers = ["calc"]
store = true

[[mcp.servers]]
label = "calc"
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(FIXTURE))}, "--stdio"]
require_approval = "never"
"""
    )
    fake = Fake()
    w = Windlass(fake.upstream, "--config", str(config))
    client = anthropic.Anthropic(base_url=w.base, api_key="test", max_retries=0)
    yield client, fake, w
    w.close()
    fake.close()
    tmp.cleanup()


def test_operator_attached_server_and_stored_trace(attached):
    client, fake, w = attached
    fake.script(
        {"tool_calls": [{"name": "calc__add", "arguments": '{"a":2,"b":3}'}]},
        {"text": "5"},
    )
    msg = client.beta.messages.create(model="m", max_tokens=64, messages=[{"role": "user", "content": "2+3?"}])
    assert [b.type for b in msg.content] == ["mcp_tool_use", "mcp_tool_result", "text"]
    assert "5" in msg.content[1].content[0].text
    # `store = true`: the response and its trace are kept under the message id.
    import urllib.request

    with urllib.request.urlopen(f"{w.base}/v1/responses/{msg.id}/trace", timeout=5) as r:
        trace = json.load(r)
    assert "calc" in json.dumps(trace)
