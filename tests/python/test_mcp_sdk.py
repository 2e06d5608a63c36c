"""The official OpenAI Python SDK with MCP tools: `windlass serve` in front of
the scripted upstream, calling a real MCP server (tests/mcp/fixture_server.py)."""

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Fake, Windlass, _free_port, ROOT

FIXTURE = ROOT / "tests" / "mcp" / "fixture_server.py"


@pytest.fixture(scope="module")
def mcp_url():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, str(FIXTURE), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    import socket
    import time

    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.1)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def setup(mcp_url):
    fake = Fake()
    w = Windlass(fake.upstream, "--mcp-allow-host", "127.0.0.1")
    from openai import OpenAI

    client = OpenAI(base_url=w.base + "/v1", api_key="test", max_retries=0)
    yield client, fake, mcp_url
    w.close()
    fake.close()


def calc(url: str, approval: str | None = "never") -> dict:
    tool = {"type": "mcp", "server_label": "calc", "server_url": url}
    if approval:
        tool["require_approval"] = approval
    return tool


def test_stream_helper_accepts_mcp_events(setup):
    client, fake, url = setup
    fake.script(
        {"tool_calls": [{"name": "calc__add", "arguments": '{"a":17,"b":25}'}]},
        {"text": "17 + 25 = 42"},
    )
    with client.responses.stream(model="m", input="What is 17 + 25?", tools=[calc(url)]) as stream:
        types = [e.type for e in stream]
        final = stream.get_final_response()
    assert final.status == "completed"
    kinds = [i.type for i in final.output]
    assert kinds == ["mcp_list_tools", "mcp_call", "message"], kinds
    listed = {t.name for t in final.output[0].tools}
    assert {"add", "echo"} <= listed
    call = final.output[1]
    assert (call.server_label, call.name, call.output, call.status) == ("calc", "add", "42", "completed")
    assert final.output_text == "17 + 25 = 42"
    order = []
    for t in types:  # argument deltas collapsed to one entry
        if "mcp" in t and (not order or order[-1] != t):
            order.append(t)
    assert order == [
        "response.mcp_list_tools.in_progress",
        "response.mcp_list_tools.completed",
        "response.mcp_call_arguments.delta",
        "response.mcp_call_arguments.done",
        "response.mcp_call.in_progress",
        "response.mcp_call.completed",
    ], order
    # The upstream saw a plain tool call and its result, under the qualified name.
    second = fake.requests()[-1]
    tool_names = [t["function"]["name"] for t in second["tools"]]
    assert "calc__add" in tool_names
    assert second["messages"][-1]["role"] == "tool"
    assert second["messages"][-1]["content"] == "42"


def test_approval_round_trip_with_the_stream_helper(setup):
    """Default settings: the approval request ends the response `completed`."""
    client, fake, url = setup
    fake.script({"tool_calls": [{"name": "calc__add", "arguments": '{"a":4,"b":5}'}]})
    with client.responses.stream(model="m", input="4+5?", tools=[calc(url, None)]) as stream:
        types = [e.type for e in stream]
        first = stream.get_final_response()
    assert first.status == "completed" and types[-1] == "response.completed"
    req = first.output[-1]
    assert req.type == "mcp_approval_request" and req.name == "add"
    assert req.arguments == '{"a":4,"b":5}'

    fake.script({"text": "It is 9."})
    with client.responses.stream(
        model="m",
        previous_response_id=first.id,
        tools=[calc(url, None)],
        input=[{"type": "mcp_approval_response", "approval_request_id": req.id, "approve": True}],
    ) as stream:
        types = [e.type for e in stream]
        second = stream.get_final_response()
    assert second.status == "completed"
    assert [i.type for i in second.output] == ["mcp_call", "message"]
    assert second.output[0].approval_request_id == req.id
    assert second.output[0].output == "9"
    assert "response.mcp_call.completed" in types
    assert second.output_text == "It is 9."


def test_approval_round_trip_with_create(setup):
    """The opt-in mode (per request header): the approval ends `requires_action`."""
    client, fake, url = setup
    fake.script({"tool_calls": [{"name": "calc__add", "arguments": '{"a":2,"b":3}'}]})
    first = client.responses.create(
        model="m",
        input="2+3?",
        tools=[calc(url, None)],
        extra_headers={"X-Windlass-Client-Tools-Status": "requires_action"},
    )
    assert first.status == "requires_action"
    req = first.output[-1]
    assert req.type == "mcp_approval_request" and req.name == "add"

    fake.script({"text": "It is 5."})
    second = client.responses.create(
        model="m",
        previous_response_id=first.id,
        tools=[calc(url, None)],
        input=[{"type": "mcp_approval_response", "approval_request_id": req.id, "approve": True}],
    )
    assert second.status == "completed"
    kinds = [i.type for i in second.output]
    # The parent's tool list is reused: no second mcp_list_tools.
    assert kinds == ["mcp_call", "message"], kinds
    assert second.output[0].approval_request_id == req.id
    assert second.output[0].output == "5"
