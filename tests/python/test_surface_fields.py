"""Issue 24 through the official OpenAI Python SDK, against `windlass serve`
in front of the scripted upstream: token counting, stream obfuscation,
`truncation: "auto"`, `context_management`, stored prompts, WebSocket
`generate: false` and background completion webhooks verified with the
Standard Webhooks reference library."""

import json
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from conftest import Windlass

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def _config(tmp: Path, text: str) -> str:
    path = tmp / "windlass.toml"
    path.write_text(text)
    return str(path)


@pytest.fixture(scope="module")
def small(fake, tmp_path_factory):
    """A gateway whose model has a 400-token context (the fake has no tokenizer: estimates)."""
    cfg = _config(tmp_path_factory.mktemp("small"), "[upstream]\ncontext_length = 400\ntokenize = \"none\"\n")
    w = Windlass(fake.upstream, "--config", cfg)
    yield w
    w.close()


@pytest.fixture(scope="module")
def small_client(small):
    from openai import OpenAI

    return OpenAI(base_url=small.base + "/v1", api_key="test", max_retries=0)


def _post(base: str, path: str, body: dict) -> dict:
    req = urllib.request.Request(
        base + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.load(r)


def long_conversation(turns: int) -> list:
    items = []
    for i in range(turns):
        items.append({"role": "user", "content": f"question {i}"})
        items.append({"role": "assistant", "content": f"answer {i}: " + "lorem ipsum dolor sit amet " * 12})
    items.append({"role": "user", "content": "the newest question"})
    return items


def test_input_tokens_counts_the_whole_input(client, fake):
    before = len(fake.requests())
    small = client.responses.input_tokens.count(model="m", input="hello")
    assert small.object == "response.input_tokens"
    assert small.input_tokens > 0
    assert small.model_extra.get("count_method") == "estimate"
    bigger = client.responses.input_tokens.count(
        model="m", input="hello", instructions="Answer in the voice of a pirate. " * 20
    )
    assert bigger.input_tokens > small.input_tokens + 50
    assert len(fake.requests()) == before, "counting called the model"


def test_stream_obfuscation_is_on_by_default_and_off_when_asked(client, fake):
    fake.script({"text": "Hello there, obfuscated world."}, {"text": "Hello there, plain world."})
    events = list(client.responses.create(model="m", input="hi", stream=True))
    deltas = [e for e in events if e.type == "response.output_text.delta"]
    assert deltas and all(isinstance(getattr(e, "obfuscation", None), str) for e in deltas)
    assert all(len(e.obfuscation) > 0 for e in deltas)
    assert getattr(events[-1], "obfuscation", None) is None, "only delta events are padded"
    events = list(
        client.responses.create(
            model="m", input="hi", stream=True, stream_options={"include_obfuscation": False}
        )
    )
    deltas = [e for e in events if e.type == "response.output_text.delta"]
    assert deltas and all(getattr(e, "obfuscation", None) is None for e in deltas)
    assert events[-1].response.output_text == "Hello there, plain world."
    # A background stream (followed from its log) is padded the same way.
    fake.script({"text": "Hello from the background."})
    events = list(client.responses.create(model="m", input="hi", stream=True, background=True))
    deltas = [e for e in events if e.type == "response.output_text.delta"]
    assert deltas and all(isinstance(getattr(e, "obfuscation", None), str) for e in deltas)


def test_truncation_auto_lets_a_conversation_longer_than_the_context_complete(small_client, fake):
    fake.script({"text": "Answered."})
    r = small_client.responses.create(model="m", input=long_conversation(10), truncation="auto")
    assert r.status == "completed" and r.truncation == "auto"
    sent = [m["content"] for m in fake.requests()[-1]["messages"]]
    assert sent[-1] == "the newest question"
    assert "question 0" not in sent
    assert sum(len(t) for t in sent) // 4 <= 350


def test_context_management_compacts_and_shows_the_compaction_item(client, fake):
    fake.script({"text": "SUMMARY: answers about lorem ipsum."}, {"text": "From the summary."})
    r = client.responses.create(
        model="m",
        input=long_conversation(6),
        context_management=[{"type": "compaction", "compact_threshold": 300}],
    )
    assert [i.type for i in r.output] == ["compaction", "message"]
    assert r.output[0].id.startswith("cmp_")
    turn = [m["content"] for m in fake.requests()[-1]["messages"]]
    assert not any(t.startswith("answer ") for t in turn)
    assert any("SUMMARY: answers about lorem ipsum." in t for t in turn)


def test_a_prompt_template_sends_the_same_upstream_request_as_its_expansion(client, windlass, fake):
    prompt = _post(
        windlass.base,
        "/v1/prompts",
        {
            "instructions": "You answer for {{company}}.",
            "input": [{"type": "message", "role": "user", "content": "Order {{order}} is late."}],
        },
    )
    assert prompt["id"].startswith("pmpt_")
    fake.script({"text": "Sorry."}, {"text": "Sorry."})
    r = client.responses.create(
        model="m",
        input="Where is it?",
        prompt={"id": prompt["id"], "variables": {"company": "Acme", "order": "A-17"}},
    )
    assert r.prompt.id == prompt["id"] and r.prompt.variables["order"] == "A-17"
    templated = fake.requests()[-1]
    client.responses.create(
        model="m",
        instructions="You answer for Acme.",
        input=[
            {"type": "message", "role": "user", "content": "Order A-17 is late."},
            {"type": "message", "role": "user", "content": "Where is it?"},
        ],
    )
    assert fake.requests()[-1] == templated


def test_websocket_generate_false_warms_up_without_the_model(client, fake):
    fake.script({"text": "teal"})
    with client.responses.connect() as connection:
        before = len(fake.requests())
        connection.response.create(model="m", input="remember: teal", generate=False, store=False)
        warm = []
        for event in connection:
            warm.append(event)
            if event.type == "response.completed":
                break
        assert [e.type for e in warm] == ["response.created", "response.completed"]
        assert warm[-1].response.output == []
        assert len(fake.requests()) == before
        connection.response.create(
            model="m", input="which colour?", previous_response_id=warm[-1].response.id, store=False
        )
        for event in connection:
            if event.type == "response.completed":
                assert event.response.output_text == "teal"
                break
    sent = [m["content"] for m in fake.requests()[-1]["messages"] if m["role"] == "user"]
    assert sent == ["remember: teal", "which colour?"]


class _Hook(BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["content-length"]))
        _Hook.received.append((dict(self.headers), body))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *_):
        pass


def test_a_background_response_webhook_verifies_with_the_reference_library(fake, tmp_path):
    from openai import OpenAI
    from standardwebhooks.webhooks import Webhook

    hook = HTTPServer(("127.0.0.1", 0), _Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    cfg = _config(
        tmp_path,
        f'[webhooks]\nurl = "http://127.0.0.1:{hook.server_port}/hook"\nsecret = "{SECRET}"\n',
    )
    w = Windlass(fake.upstream, "--config", cfg)
    try:
        client = OpenAI(base_url=w.base + "/v1", api_key="test", max_retries=0)
        fake.script({"text": "Done later."})
        queued = client.responses.create(model="m", input="hi", background=True)
        deadline = time.time() + 30
        while not _Hook.received and time.time() < deadline:
            time.sleep(0.05)
        assert _Hook.received, "no webhook arrived"
        headers, body = _Hook.received[0]
        lower = {k.lower(): v for k, v in headers.items()}
        event = Webhook(SECRET).verify(body, lower)
        assert event["type"] == "response.completed"
        assert event["data"]["id"] == queued.id
        assert event["id"] == lower["webhook-id"]
        with pytest.raises(Exception):
            Webhook("whsec_" + "A" * 32).verify(body, lower)
        assert client.responses.retrieve(queued.id).status == "completed"
    finally:
        w.close()
        hook.shutdown()
