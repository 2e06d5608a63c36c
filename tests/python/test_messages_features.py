"""The official Anthropic Python SDK against `windlass serve`'s Messages
surface for what issue 27's review added: `stop_sequences` / `top_k` (and
`stop_reason: "stop_sequence"`), `thinking.display: "omitted"`, a
`web_search_20250305` server tool run by Windlass's web search over a local
SearXNG-shaped backend (blocks in JSON, in the stream accumulator, and sent
back), `context_management` as Claude Code sends it plus compaction, and the
MCP connector's `mcp_servers` naming a real MCP server by URL."""

import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anthropic
import pytest

from conftest import Fake, Windlass, ROOT

FIXTURE = ROOT / "tests" / "mcp" / "fixture_server.py"


class _Searx(BaseHTTPRequestHandler):
    """SearXNG's JSON API, answering every query with two results."""

    def do_GET(self):
        body = json.dumps(
            {
                "results": [
                    {"url": "https://tokio.rs/", "title": "Tokio", "content": "An asynchronous runtime for Rust."},
                    {"url": "https://docs.rs/tokio", "title": "tokio - docs.rs", "content": "API docs."},
                ]
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def setup():
    searx = ThreadingHTTPServer(("127.0.0.1", 0), _Searx)
    threading.Thread(target=searx.serve_forever, daemon=True).start()
    tmp = tempfile.TemporaryDirectory()
    config = Path(tmp.name) / "windlass.toml"
    config.write_text(
        f"""
[web_search]
provider = "searxng"
url = "http://127.0.0.1:{searx.server_address[1]}"
allow_hosts = ["127.0.0.1"]
"""
    )
    fake = Fake()
    # Request-declared MCP servers (`mcp_servers`) on loopback are allowed.
    w = Windlass(fake.upstream, "--config", str(config), "--mcp-allow-host", "127.0.0.1")
    client = anthropic.Anthropic(base_url=w.base, api_key="test", max_retries=0)
    yield client, fake
    w.close()
    fake.close()
    searx.shutdown()
    tmp.cleanup()


def test_stop_sequences_and_top_k(setup):
    client, fake = setup
    fake.script({"text": "one two three", "stop_sequence": "END"})
    msg = client.messages.create(
        model="m",
        max_tokens=64,
        stop_sequences=["END"],
        messages=[{"role": "user", "content": "count, then say END"}],
        extra_body={"top_k": 40},
    )
    assert msg.stop_reason == "stop_sequence"
    assert msg.stop_sequence == "END"
    sent = fake.requests()[-1]
    assert sent["stop"] == ["END"] and sent["top_k"] == 40

    fake.script({"text": "one two three", "stop_sequence": "END", "chunk_chars": 3})
    with client.messages.stream(
        model="m", max_tokens=64, stop_sequences=["END"], messages=[{"role": "user", "content": "again"}]
    ) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "stop_sequence" and final.stop_sequence == "END"
    assert final.content[0].text == "one two three"


def test_thinking_display_omitted(setup):
    client, fake = setup
    fake.script({"text": "42", "reasoning": "six times seven", "reasoning_signature": "sig"})
    msg = client.messages.create(
        model="m",
        max_tokens=4000,
        thinking={"type": "enabled", "budget_tokens": 2000, "display": "omitted"},
        messages=[{"role": "user", "content": "6*7?"}],
    )
    assert [b.type for b in msg.content] == ["thinking", "text"]
    assert msg.content[0].thinking == ""
    fake.script({"text": "42", "reasoning": "six times seven"})
    with client.messages.stream(
        model="m",
        max_tokens=4000,
        thinking={"type": "enabled", "budget_tokens": 2000, "display": "omitted"},
        messages=[{"role": "user", "content": "6*7?"}],
    ) as stream:
        types = [(e.type, getattr(getattr(e, "delta", None), "type", None)) for e in stream]
        final = stream.get_final_message()
    assert ("content_block_delta", "thinking_delta") not in types
    assert final.content[0].type == "thinking" and final.content[0].thinking == ""
    assert final.content[1].text == "42"


WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}


def test_web_search_server_tool(setup):
    client, fake = setup
    fake.script(
        {"tool_calls": [{"name": "web_search", "arguments": '{"query":"tokio runtime"}'}]},
        {"text": "Tokio is at https://tokio.rs/."},
    )
    with client.messages.stream(
        model="m", max_tokens=200, tools=[WEB_SEARCH], messages=[{"role": "user", "content": "What is tokio?"}]
    ) as stream:
        final = stream.get_final_message()
    kinds = [b.type for b in final.content]
    assert kinds == ["server_tool_use", "web_search_tool_result", "text"], kinds
    use, result = final.content[0], final.content[1]
    assert use.name == "web_search" and use.input == {"query": "tokio runtime"}
    assert result.tool_use_id == use.id
    assert [r.url for r in result.content] == ["https://tokio.rs/", "https://docs.rs/tokio"]
    assert result.content[0].title == "Tokio"
    assert final.stop_reason == "end_turn"
    # The search's results were the tool output the model read.
    seen = [m for m in fake.requests()[-1]["messages"] if m["role"] == "tool"]
    assert seen and "https://tokio.rs/" in seen[0]["content"]

    # The client sends the turn back (as the SDK returned it): the model
    # reads the same results, and no search runs again.
    fake.script({"text": "You're welcome."})
    again = client.messages.create(
        model="m",
        max_tokens=200,
        tools=[WEB_SEARCH],
        messages=[
            {"role": "user", "content": "What is tokio?"},
            {"role": "assistant", "content": final.content},
            {"role": "user", "content": "thanks"},
        ],
    )
    assert again.content[0].text == "You're welcome."
    replayed = [m for m in fake.requests()[-1]["messages"] if m["role"] == "tool"]
    assert replayed[0]["content"] == seen[0]["content"]


def test_unserved_server_tool_is_refused(setup):
    client, fake = setup
    before = len(fake.requests())
    with pytest.raises(anthropic.BadRequestError) as e:
        client.messages.create(
            model="m",
            max_tokens=16,
            messages=[{"role": "user", "content": "hi"}],
            tools=[{"type": "code_execution_20250522", "name": "code_execution"}],
        )
    assert e.value.body["error"]["type"] == "invalid_request_error"
    assert "code interpreter" in e.value.body["error"]["message"]
    assert len(fake.requests()) == before


def test_context_management_as_claude_code_sends_it(setup):
    client, fake = setup
    fake.script({"text": "still here"})
    msg = client.beta.messages.create(
        model="m",
        max_tokens=4000,
        thinking={"type": "enabled", "budget_tokens": 2000},
        context_management={"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
        betas=["context-management-2025-06-27"],
        messages=[{"role": "user", "content": "hi"}],
    )
    assert msg.content[-1].text == "still here"
    with pytest.raises(anthropic.BadRequestError) as e:
        client.beta.messages.create(
            model="m",
            max_tokens=64,
            context_management={
                "edits": [{"type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 30000}}]
            },
            betas=["context-management-2025-06-27"],
            messages=[{"role": "user", "content": "hi"}],
        )
    assert "compact_20260112" in e.value.body["error"]["message"]


def test_compaction_block_round_trip(setup):
    client, fake = setup
    filler = "lorem ipsum dolor sit amet " * 40
    history = []
    for i in range(6):
        history += [
            {"role": "user", "content": f"question {i}: {filler}"},
            {"role": "assistant", "content": f"answer {i}: {filler}"},
        ]
    history.append({"role": "user", "content": "the newest question"})
    fake.script({"text": "SUMMARY: six answers."}, {"text": "From the summary."})
    edits = {"edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 300}}]}
    msg = client.beta.messages.create(
        model="m",
        max_tokens=200,
        context_management=edits,
        betas=["compact-2026-01-12"],
        messages=history,
    )
    assert [b.type for b in msg.content] == ["compaction", "text"]
    assert msg.content[0].content == "SUMMARY: six answers."
    fake.script({"text": "ok"})
    client.beta.messages.create(
        model="m",
        max_tokens=200,
        messages=[
            {"role": "user", "content": "the newest question"},
            {"role": "assistant", "content": msg.content},
            {"role": "user", "content": "and then?"},
        ],
    )
    texts = [m["content"] for m in fake.requests()[-1]["messages"] if isinstance(m["content"], str)]
    assert any("SUMMARY: six answers." in t for t in texts)
    assert not any(t.startswith("answer ") for t in texts)


@pytest.fixture(scope="module")
def mcp_url():
    """The MCP fixture server over streamable HTTP, with its `headers` tool."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, str(FIXTURE), "--port", str(port), "--header-tool"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(timeout=10)


def test_mcp_servers_connector_by_url(setup, mcp_url):
    """The connector as Anthropic documents it: a server by URL with its
    token and allowed tools; calls run in Windlass and come back as
    mcp_tool_use / mcp_tool_result blocks (JSON and stream)."""
    client, fake = setup
    server = {
        "type": "url",
        "name": "calc",
        "url": mcp_url,
        "authorization_token": "tok-123",
        "tool_configuration": {"allowed_tools": ["add", "headers"]},
    }
    fake.script(
        {"tool_calls": [{"name": "calc__add", "arguments": '{"a":17,"b":25}'}]},
        {"text": "17 + 25 = 42"},
    )
    msg = client.beta.messages.create(
        model="m",
        max_tokens=128,
        messages=[{"role": "user", "content": "What is 17 + 25?"}],
        mcp_servers=[server],
        betas=["mcp-client-2025-04-04"],
    )
    assert [b.type for b in msg.content] == ["mcp_tool_use", "mcp_tool_result", "text"]
    use, result = msg.content[0], msg.content[1]
    assert use.name == "add" and use.server_name == "calc" and use.input == {"a": 17, "b": 25}
    assert result.tool_use_id == use.id and not result.is_error and "42" in result.content[0].text
    offered = sorted(t["function"]["name"] for t in fake.requests()[-1]["tools"])
    assert offered == ["calc__add", "calc__headers"]

    # The token reaches the server as a bearer token (the fixture's
    # `headers` tool answers with the values it got, reversed).
    fake.script({"tool_calls": [{"name": "calc__headers", "arguments": "{}"}]}, {"text": "seen"})
    with client.beta.messages.stream(
        model="m",
        max_tokens=128,
        messages=[{"role": "user", "content": "Which headers?"}],
        mcp_servers=[server],
        betas=["mcp-client-2025-04-04"],
    ) as stream:
        final = stream.get_final_message()
    assert [b.type for b in final.content] == ["mcp_tool_use", "mcp_tool_result", "text"]
    assert "321-kot reraeB" in final.content[1].content[0].text
