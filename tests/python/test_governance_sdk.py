"""Governance and the loop's limits through the official OpenAI Python SDK,
against the real `windlass serve` with the built-in tools: a supervised key's
write waits for an approval, the error threshold ends a response
`incomplete`, the completion check adds exactly one turn, and
`GET /v1/responses/{id}/trace` shows every step and decision."""

import json
import tempfile
import urllib.request
from pathlib import Path

import pytest

from conftest import Fake, Windlass

BUILTINS = {"type": "mcp", "server_label": "windlass"}


def start(extra_toml: str):
    tmp = tempfile.TemporaryDirectory()
    work = Path(tmp.name) / "work"
    work.mkdir()
    (work / "notes.txt").write_text("alpha\nbeta\n")
    config = Path(tmp.name) / "windlass.toml"
    config.write_text(
        f"""
[builtins]
enabled = ["read_file", "write_file", "list_dir"]
work_dir = {json.dumps(str(work))}

[[server.keys]]
name = "super"
key = "sk-super"

[[server.keys]]
name = "full"
key = "sk-full"

[governance.keys.super]
autonomy = "supervised"
{extra_toml}
"""
    )
    fake = Fake()
    w = Windlass(fake.upstream, "--config", str(config))
    return tmp, work, fake, w


def client_for(w, key):
    from openai import OpenAI

    return OpenAI(base_url=w.base + "/v1", api_key=key, max_retries=0)


def trace(w, key, response_id):
    req = urllib.request.Request(
        f"{w.base}/v1/responses/{response_id}/trace",
        headers={"authorization": f"Bearer {key}"},
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


@pytest.fixture(scope="module")
def gateway():
    tmp, work, fake, w = start("[loop]\ntool_error_threshold = 2\n")
    yield work, fake, w
    w.close()
    fake.close()
    tmp.cleanup()


def write_call(path):
    args = json.dumps({"path": path, "content": "x\n"})
    return {"tool_calls": [{"name": "windlass__write_file", "arguments": args}]}


def test_a_supervised_write_runs_only_after_approval(gateway):
    work, fake, w = gateway
    client = client_for(w, "sk-super")
    fake.script(write_call("approved.txt"), {"text": "written"})
    first = client.responses.create(model="m", input="write it", tools=[BUILTINS])
    assert first.status == "completed"
    requests = [i for i in first.output if i.type == "mcp_approval_request"]
    assert [r.name for r in requests] == ["write_file"], first.output
    assert not (work / "approved.txt").exists()

    second = client.responses.create(
        model="m",
        previous_response_id=first.id,
        tools=[BUILTINS],
        input=[{"type": "mcp_approval_response", "approval_request_id": requests[0].id, "approve": True}],
    )
    assert second.status == "completed"
    calls = [i for i in second.output if i.type == "mcp_call"]
    assert len(calls) == 1 and calls[0].error is None, second.output
    assert (work / "approved.txt").read_text() == "x\n"
    assert second.output_text == "written"


def test_the_error_threshold_ends_the_response_incomplete(gateway):
    _, fake, w = gateway
    client = client_for(w, "sk-full")
    missing = {"tool_calls": [{"name": "windlass__read_file", "arguments": '{"path":"missing.txt"}'}]}
    fake.script(missing, missing)
    before = len(fake.requests())
    r = client.responses.create(model="m", input="read", tools=[BUILTINS])
    assert r.status == "incomplete"
    assert r.incomplete_details.reason == "tool_error_threshold"
    calls = [i for i in r.output if i.type == "mcp_call"]
    assert len(calls) == 2 and all(c.error for c in calls), r.output
    # No model turn after the second failure.
    assert len(fake.requests()) - before == 2


def test_trace_shows_every_step_and_decision(gateway):
    _, fake, w = gateway
    client = client_for(w, "sk-full")
    fake.script(
        {"tool_calls": [{"name": "windlass__list_dir", "arguments": "{}"}]},
        {"tool_calls": [{"name": "windlass__read_file", "arguments": '{"path":"../../etc/passwd"}'}]},
        {"text": "done"},
    )
    r = client.responses.create(model="m", input="look", tools=[BUILTINS])
    assert r.status == "completed"
    t = trace(w, "sk-full", r.id)
    assert t["response_id"] == r.id
    assert [s["index"] for s in t["steps"]] == [0, 1, 2]
    assert [s["finish_reason"] for s in t["steps"]] == ["tool_calls", "tool_calls", "stop"]
    actions = [(a["tool"], a["decision"], a["outcome"]) for a in t["actions"]]
    assert actions[0] == ("windlass__list_dir", "allow", "ok"), t["actions"]
    # The escape is refused by the governance gate before it runs, and the
    # trace names the rule that fired.
    assert actions[1] == ("windlass__read_file", "deny", "denied"), t["actions"]
    assert t["actions"][1]["rule"], t["actions"]
    assert all(a["owner"] == "mcp:windlass" for a in t["actions"]), t["actions"]
    # An unknown id is a 404 in the OpenAI shape, like GET of the response.
    with pytest.raises(urllib.error.HTTPError) as e:
        trace(w, "sk-full", "resp_unknown")
    assert e.value.code == 404


def test_the_completion_check_adds_exactly_one_turn():
    tmp, _, fake, w = start("[loop]\ncompletion_check = true\n")
    try:
        client = client_for(w, "sk-full")
        fake.script(
            {"tool_calls": [{"name": "windlass__list_dir", "arguments": "{}"}]},
            {"text": "first answer"},
            {"text": "checked answer"},
        )
        before = len(fake.requests())
        r = client.responses.create(model="m", input="list", tools=[BUILTINS])
        assert r.status == "completed"
        # One final answer: the check only confirmed, so the draft stands;
        # the check's exchange is in the trace, not in the output.
        texts = [i for i in r.output if i.type == "message"]
        assert len(texts) == 1, r.output
        assert r.output_text == "first answer"
        assert len(fake.requests()) - before == 3
        t = trace(w, "sk-full", r.id)
        assert len(t["steps"]) == 3
        assert [s["verification"] for s in t["steps"]] == [False, False, True]
        assert [(c["draft"], c["answer"]) for c in t["checks"]] == [("first answer", "checked answer")]
        # Without tools the first text answer stands: no extra turn.
        fake.script({"text": "plain"})
        plain = client.responses.create(model="m", input="hi")
        assert plain.output_text == "plain"
        assert len(fake.requests()) - before == 4
        assert len(trace(w, "sk-full", plain.id)["steps"]) == 1
    finally:
        w.close()
        fake.close()
        tmp.cleanup()


def test_approved_calls_still_spend_the_keys_rate_limit():
    tmp, work, fake, w = start("tool_rate_limit = { per_minute = 1, burst = 1 }\n")
    try:
        client = client_for(w, "sk-super")
        outcomes = []
        for name in ("one.txt", "two.txt"):
            fake.script(write_call(name), {"text": "ok"})
            first = client.responses.create(model="m", input="write", tools=[BUILTINS])
            request = [i for i in first.output if i.type == "mcp_approval_request"][0]
            second = client.responses.create(
                model="m",
                previous_response_id=first.id,
                tools=[BUILTINS],
                input=[{"type": "mcp_approval_response", "approval_request_id": request.id, "approve": True}],
            )
            call = [i for i in second.output if i.type == "mcp_call"][0]
            outcomes.append(call.error)
        # A human approval does not lift the key's limits: the second
        # approved write is over the per-tool rate (one a minute).
        assert outcomes[0] is None, outcomes
        assert "rate limit" in str(outcomes[1]), outcomes
        assert (work / "one.txt").exists() and not (work / "two.txt").exists()
    finally:
        w.close()
        fake.close()
        tmp.cleanup()
