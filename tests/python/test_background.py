"""Background mode, stream resume and conversations through the official OpenAI Python SDK,
and background responses surviving a `kill -9` of the real server process."""

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from openai import OpenAI

from conftest import BIN, Fake, Windlass, _free_port, _wait_http

# One worker, so a second background response stays queued; a short lease,
# so a restarted server recovers the dead one's runs quickly.
CONFIG = "[server.background]\nworkers = 1\nlease_ms = 1000\n"

# The upstream holds its answer back: the response stays running until cancelled.
SLOW = {"text": "too late", "first_byte_delay_ms": 50000}


def _config_file() -> str:
    f = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
    f.write(CONFIG)
    f.close()
    return f.name


@pytest.fixture(scope="module")
def bg():
    fake = Fake()
    config = _config_file()
    w = Windlass(fake.upstream, "--config", config)
    client = OpenAI(base_url=w.base + "/v1", api_key="test", max_retries=0)
    yield fake, client
    w.close()
    fake.close()
    os.unlink(config)


def _wait_status(client, rid, wanted, timeout=30.0):
    deadline = time.time() + timeout
    seen = []
    while time.time() < deadline:
        r = client.responses.retrieve(rid)
        if not seen or seen[-1] != r.status:
            seen.append(r.status)
        if r.status in wanted:
            return r, seen
        time.sleep(0.05)
    raise AssertionError(f"{rid} stayed {seen}")


def test_background_response_polled_to_completion(bg):
    fake, client = bg
    fake.script({"text": "Finished in the background.", "chunk_chars": 4, "delay_ms": 20})
    r = client.responses.create(model="m", input="Work on it.", background=True)
    assert r.status == "queued"
    assert r.background is True
    done, seen = _wait_status(client, r.id, {"completed", "failed", "cancelled"})
    assert done.status == "completed", seen
    assert done.output_text == "Finished in the background."
    assert seen[-1] == "completed"
    assert set(seen) <= {"queued", "in_progress", "completed"}


def test_background_cancelled_while_queued_and_while_running(bg):
    fake, client = bg
    fake.script(SLOW)
    running = client.responses.create(model="m", input="slow", background=True)
    _wait_status(client, running.id, {"in_progress"})
    queued = client.responses.create(model="m", input="waits", background=True)
    assert client.responses.retrieve(queued.id).status == "queued"

    cancelled = client.responses.cancel(queued.id)
    assert cancelled.status == "cancelled"
    cancelled = client.responses.cancel(running.id)
    assert cancelled.status == "cancelled"
    assert client.responses.retrieve(queued.id).status == "cancelled"
    assert client.responses.retrieve(running.id).status == "cancelled"


def test_background_without_store_is_a_400(bg):
    import openai

    _, client = bg
    with pytest.raises(openai.BadRequestError) as e:
        client.responses.create(model="m", input="x", background=True, store=False)
    assert e.value.body["param"] == "background"


def test_dropped_stream_resumed_with_starting_after(bg):
    fake, client = bg
    text = "one two three four five six seven eight nine ten"
    fake.script({"text": text, "chunk_chars": 3, "delay_ms": 20})
    stream = client.responses.create(model="m", input="count", background=True, stream=True)
    first = []
    for event in stream:
        first.append(event)
        if event.type == "response.output_text.delta":
            break
    stream.close()  # the client disconnects; the background run goes on
    rid = first[0].response.id
    last = first[-1].sequence_number

    resumed = client.responses.retrieve(rid, stream=True, starting_after=last)
    rest = list(resumed)
    events = first + rest
    assert [e.sequence_number for e in events] == list(range(len(events))), "no gap, no repeat"
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == text
    # A background stream opens queued, as OpenAI's does; the SDK parses each event.
    assert [e.type for e in events[:3]] == [
        "response.created",
        "response.queued",
        "response.in_progress",
    ]
    assert events[1].response.status == "queued"
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == text


def test_conversation_of_three_responses_listed_in_order(bg):
    fake, client = bg
    conv = client.conversations.create(metadata={"topic": "names"})
    fake.script({"text": "Hi Alice."}, {"text": "You like tea."}, {"text": "Alice, who likes tea."})
    for question in ["I am Alice.", "I like tea.", "Who am I?"]:
        r = client.responses.create(model="m", input=question, conversation=conv.id)
        assert r.status == "completed"
        # The SDK's typed `conversation` field names it.
        assert r.conversation is not None and r.conversation.id == conv.id
    # The last request carried the whole conversation.
    last = fake.requests()[-1]
    sent = str(last["messages"])
    assert "I am Alice." in sent and "You like tea." in sent and "Who am I?" in sent
    items = client.conversations.items.list(conv.id, order="asc")
    texts = [i.content[0].text for i in items.data]
    assert texts == [
        "I am Alice.",
        "Hi Alice.",
        "I like tea.",
        "You like tea.",
        "Who am I?",
        "Alice, who likes tea.",
    ]
    assert client.conversations.retrieve(conv.id).metadata == {"topic": "names"}
    client.conversations.delete(conv.id)


def _serve(upstream: str, db: Path, config: str):
    port = _free_port()
    proc = subprocess.Popen(
        [str(BIN / "windlass"), "serve", "--upstream", upstream, "--listen", f"127.0.0.1:{port}",
         "--db", str(db), "--config", config],
        env={**os.environ, "RUST_LOG": "warn"},
    )
    base = f"http://127.0.0.1:{port}"
    _wait_http(base + "/health")
    return proc, OpenAI(base_url=base + "/v1", api_key="test", max_retries=0)


def test_background_responses_survive_kill_9():
    fake = Fake()
    config = _config_file()
    tmp = tempfile.TemporaryDirectory()
    db = Path(tmp.name) / "windlass.db"
    try:
        proc, client = _serve(fake.upstream, db, config)
        fake.script(SLOW)
        running = client.responses.create(model="m", input="slow", background=True)
        _wait_status(client, running.id, {"in_progress"})
        queued = client.responses.create(model="m", input="still queued", background=True)
        assert client.responses.retrieve(queued.id).status == "queued"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)

        fake.script({"text": "Resumed after the restart."})
        proc, client = _serve(fake.upstream, db, config)
        try:
            failed, _ = _wait_status(client, running.id, {"completed", "failed", "cancelled"})
            assert failed.status == "failed"
            assert "stopped before it finished" in failed.error.message
            done, _ = _wait_status(client, queued.id, {"completed", "failed", "cancelled"})
            assert done.status == "completed", done.error
            assert done.output_text == "Resumed after the restart."
            assert done.id == queued.id
            # The failed one's stream ends with its terminal event.
            events = list(client.responses.retrieve(running.id, stream=True))
            assert events[-1].type == "response.failed"
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    finally:
        fake.close()
        tmp.cleanup()
        os.unlink(config)
