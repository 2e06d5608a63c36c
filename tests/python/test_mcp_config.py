"""`windlass serve --config` with configured MCP servers, as an operator runs
it: a server that is down does not stop startup, the operator view shows
each server's state, and requests use a configured server by label."""

import json
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import Fake, Windlass, ROOT

FIXTURE = ROOT / "tests" / "mcp" / "fixture_server.py"


@pytest.fixture(scope="module")
def setup():
    tmp = tempfile.TemporaryDirectory()
    config = Path(tmp.name) / "windlass.toml"
    config.write_text(
        f"""
[mcp]
call_timeout_secs = 20

[[mcp.servers]]
label = "dead"
url = "http://127.0.0.1:1/mcp"

[[mcp.servers]]
label = "calc"
command = {json.dumps(sys.executable)}
args = [{json.dumps(str(FIXTURE))}, "--stdio"]
require_approval = "never"
"""
    )
    fake = Fake()
    w = Windlass(fake.upstream, "--config", str(config))
    from openai import OpenAI

    client = OpenAI(base_url=w.base + "/v1", api_key="test", max_retries=0)
    yield client, fake, w
    w.close()
    fake.close()
    tmp.cleanup()


def servers(base: str) -> dict:
    with urllib.request.urlopen(base + "/v1/mcp/servers", timeout=5) as r:
        body = json.load(r)
    assert body["object"] == "list"
    return {s["label"]: s for s in body["data"]}


def test_operator_view_shows_each_server(setup):
    _, _, w = setup
    deadline = time.time() + 30
    while True:
        s = servers(w.base)
        if s["calc"]["state"] == "connected" and s["dead"]["state"] == "unavailable":
            break
        assert time.time() < deadline, s
        time.sleep(0.1)
    assert s["calc"]["transport"] == "stdio"
    assert "add" in {t["name"] for t in s["calc"]["tools"]}
    assert s["dead"]["transport"] == "http" and s["dead"]["last_error"]


def test_configured_server_by_label(setup):
    client, fake, _ = setup
    fake.script(
        {"tool_calls": [{"name": "calc__add", "arguments": '{"a":20,"b":22}'}]},
        {"text": "42"},
    )
    r = client.responses.create(
        model="m", input="20+22?", tools=[{"type": "mcp", "server_label": "calc"}]
    )
    assert r.status == "completed", r
    call = [o for o in r.output if o.type == "mcp_call"][0]
    # The configured `require_approval = "never"` applied: no approval request.
    assert (call.name, call.output) == ("add", "42")


def test_down_server_fails_the_request_cleanly(setup):
    from openai import APIStatusError

    client, _, _ = setup
    with pytest.raises(APIStatusError) as e:
        client.responses.create(model="m", input="hi", tools=[{"type": "mcp", "server_label": "dead"}])
    assert e.value.status_code == 424
    assert e.value.body["code"] == "mcp_list_tools_failed"
