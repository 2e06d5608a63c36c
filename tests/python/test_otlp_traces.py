"""Traces over OTLP/HTTP: the real `windlass serve` exports its spans to a
real OTLP receiver; one response is one trace with a span per model turn and
per tool call, continuing the client's W3C `traceparent`, which also
reaches the upstream. Model-call and tool spans are named after the
OpenTelemetry GenAI conventions: `chat {model}` and `execute_tool {tool}`."""

import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT, Fake, Windlass, _free_port
from otlp_receiver import Receiver

TOOLS = [{"type": "mcp", "server_label": "windlass"}]
FIXTURE = ROOT / "tests" / "mcp" / "fixture_server.py"


@pytest.fixture(scope="module")
def setup():
    tmp = tempfile.TemporaryDirectory()
    work = Path(tmp.name) / "work"
    work.mkdir()
    (work / "notes.txt").write_text("seven\n")
    config = Path(tmp.name) / "windlass.toml"
    config.write_text(
        f'[builtins]\nenabled = ["read_file"]\nwork_dir = {json.dumps(str(work))}\n'
        '[otlp]\nservice_name = "windlass-test"\n'
    )
    receiver = Receiver()
    # A real MCP server over streamable HTTP whose `headers` tool reports
    # the HTTP headers it received.
    mcp_port = _free_port()
    mcp = subprocess.Popen(
        [sys.executable, str(FIXTURE), "--port", str(mcp_port), "--header-tool"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    config.write_text(
        config.read_text()
        + f'[[mcp.servers]]\nlabel = "hdr"\nurl = "http://127.0.0.1:{mcp_port}/mcp"\n'
        'require_approval = "never"\n'
    )
    fake = Fake()
    old = dict(os.environ)
    # The standard variable names the collector; batches leave quickly.
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
    os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "100"
    try:
        w = Windlass(fake.upstream, "--config", str(config))
    finally:
        os.environ.clear()
        os.environ.update(old)
    yield w, fake, receiver
    w.close()
    mcp.terminate()
    mcp.wait(timeout=10)
    fake.close()
    receiver.close()
    tmp.cleanup()


def create(w, body, headers=None):
    req = urllib.request.Request(
        w.base + "/v1/responses",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", **(headers or {})},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r), dict(r.headers)


def script_tool_then_answer(fake):
    fake.script(
        {"tool_calls": [{"name": "windlass__read_file", "arguments": '{"path":"notes.txt"}'}], "usage": [11, 3]},
        {"text": "It says seven.", "usage": [20, 4]},
    )


def trace_of(spans, trace_id):
    return [s for s in spans if s.trace_id == trace_id]


def test_one_response_is_one_trace_continuing_the_clients(setup):
    w, fake, receiver = setup
    trace_id, parent = secrets.token_hex(16), secrets.token_hex(8)
    script_tool_then_answer(fake)
    before = len(fake.request_headers())
    resp, _ = create(
        w,
        {"model": "m", "input": "what does notes.txt say?", "tools": TOOLS},
        {"traceparent": f"00-{trace_id}-{parent}-01"},
    )
    assert resp["status"] == "completed", resp

    spans = receiver.wait_for(
        lambda s: any(x.name == "request" for x in trace_of(s, trace_id))
    )
    mine = trace_of(spans, trace_id)
    by_name = {}
    for s in mine:
        by_name.setdefault(s.name, []).append(s)
    assert len(by_name["request"]) == 1, mine
    assert len(by_name["response"]) == 1, mine
    assert len(by_name["chat m"]) == 2, mine
    assert len(by_name["execute_tool windlass__read_file"]) == 1, mine
    assert "model_turn" not in by_name and "tool_call" not in by_name, mine
    request, response = by_name["request"][0], by_name["response"][0]
    # The client's span is the parent of the request span; the rest nest.
    assert request.parent_span_id == parent
    assert response.parent_span_id == request.span_id
    assert response.attrs["id"] == resp["id"]
    assert response.attrs["gen_ai.operation.name"] == "invoke_agent"
    assert response.attrs["gen_ai.usage.input_tokens"] == 31
    assert response.attrs["gen_ai.usage.output_tokens"] == 7
    assert response.resource["service.name"] == "windlass-test"
    turns = sorted(by_name["chat m"], key=lambda s: s.attrs["turn"])
    for t in turns:
        assert t.parent_span_id == response.span_id
        assert t.attrs["gen_ai.operation.name"] == "chat"
        assert t.attrs["gen_ai.request.model"] == "m"
    assert [t.attrs["gen_ai.usage.input_tokens"] for t in turns] == [11, 20]
    tool = by_name["execute_tool windlass__read_file"][0]
    assert tool.parent_span_id == response.span_id
    assert tool.attrs["gen_ai.operation.name"] == "execute_tool"
    assert tool.attrs["gen_ai.tool.name"] == "windlass__read_file"

    # Each upstream call carried the trace, with its model turn as parent.
    sent = fake.request_headers()[before:]
    assert len(sent) == 2, sent
    parents = []
    for h in sent:
        version, tid, span_id, flags = h["traceparent"].split("-")
        assert (version, tid, flags) == ("00", trace_id, "01")
        parents.append(span_id)
    assert sorted(parents) == sorted(t.span_id for t in turns)


def test_without_traceparent_a_response_starts_its_own_trace(setup):
    w, fake, receiver = setup
    fake.script({"text": "plain"})
    resp, headers = create(w, {"model": "m", "input": "hi"}, {"x-request-id": "otlp-test-2"})
    assert resp["status"] == "completed"
    assert headers["x-request-id"] == "otlp-test-2"
    spans = receiver.wait_for(
        lambda s: any(x.name == "response" and x.attrs.get("id") == resp["id"] for x in s)
    )
    response = next(x for x in spans if x.name == "response" and x.attrs.get("id") == resp["id"])
    mine = trace_of(spans, response.trace_id)
    request = next(x for x in mine if x.name == "request")
    assert request.parent_span_id == ""
    assert request.attrs["request_id"] == "otlp-test-2"
    assert sorted(x.name for x in mine) == ["chat m", "request", "response"]


def wait_connected(w, label, timeout=60.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with urllib.request.urlopen(w.base + "/v1/mcp/servers", timeout=5) as r:
            states = {s["label"]: s["state"] for s in json.load(r)["data"]}
        if states.get(label) == "connected":
            return
        time.sleep(0.2)
    raise AssertionError(f"{label} never connected: {states}")


def test_an_http_mcp_server_gets_the_tool_calls_trace_context(setup):
    w, fake, receiver = setup
    wait_connected(w, "hdr")
    trace_id = secrets.token_hex(16)
    fake.script(
        {"tool_calls": [{"name": "hdr__headers", "arguments": "{}"}]},
        {"text": "done"},
    )
    resp, _ = create(
        w,
        {"model": "m", "input": "headers?", "tools": [{"type": "mcp", "server_label": "hdr"}]},
        {"traceparent": f"00-{trace_id}-{secrets.token_hex(8)}-01"},
    )
    assert resp["status"] == "completed", resp
    call = next(i for i in resp["output"] if i["type"] == "mcp_call")
    assert call["error"] is None, call
    got = {k: v[::-1] for k, v in json.loads(call["output"]).items()}
    version, tid, parent, flags = got["traceparent"].split("-")
    assert (version, tid, flags) == ("00", trace_id, "01")
    spans = receiver.wait_for(
        lambda s: any(x.name == "execute_tool hdr__headers" for x in trace_of(s, trace_id))
    )
    tool = next(x for x in trace_of(spans, trace_id) if x.name == "execute_tool hdr__headers")
    assert tool.attrs["gen_ai.operation.name"] == "execute_tool"
    # The MCP request's parent is the tool call's span.
    assert parent == tool.span_id
    assert tool.attrs["gen_ai.tool.name"] == "hdr__headers"
