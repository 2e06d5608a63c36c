"""SSE keep-alives through the official OpenAI Python SDK: a 40-second tool
(the built-in `shell` running `sleep 40` in its real sandbox) with
keep-alives every 15 seconds. The stream carries `: keep-alive` comment
lines while the tool runs, and `client.responses.stream` still reads the
stream to its final response."""

import json
import tempfile
from pathlib import Path

import httpx2 as httpx  # the HTTP client the pinned OpenAI SDK uses
import pytest

from conftest import Fake, Windlass


class Recording(httpx.HTTPTransport):
    """Keeps a copy of every response body chunk the SDK reads."""

    def __init__(self):
        super().__init__()
        self.chunks: list[bytes] = []

    def handle_request(self, request):
        resp = super().handle_request(request)
        inner, chunks = resp.stream, self.chunks

        class Tee(httpx.SyncByteStream):
            def __iter__(self):
                for chunk in inner:
                    chunks.append(chunk)
                    yield chunk

            def close(self):
                inner.close()

        return httpx.Response(
            status_code=resp.status_code,
            headers=resp.headers,
            stream=Tee(),
            extensions=resp.extensions,
            request=request,
        )


@pytest.fixture(scope="module")
def setup():
    tmp = tempfile.TemporaryDirectory()
    work = Path(tmp.name) / "work"
    work.mkdir()
    config = Path(tmp.name) / "windlass.toml"
    config.write_text(
        f"""
[server]
sse_keepalive_secs = 15

[loop]
tool_timeout_ms = 120000

[builtins]
enabled = ["shell"]
work_dir = {json.dumps(str(work))}

[builtins.shell]
timeout_ms = 90000

[governance]
commands = ["sleep"]
"""
    )
    fake = Fake()
    w = Windlass(fake.upstream, "--config", str(config))
    yield w, fake
    w.close()
    fake.close()
    tmp.cleanup()


def test_a_forty_second_tool_gets_keep_alives_and_the_sdk_reads_on(setup):
    from openai import OpenAI

    w, fake = setup
    transport = Recording()
    client = OpenAI(
        base_url=w.base + "/v1",
        api_key="test",
        max_retries=0,
        timeout=120,
        http_client=httpx.Client(transport=transport, timeout=120),
    )
    fake.script(
        {"tool_calls": [{"name": "windlass__shell", "arguments": '{"command":"sleep 40"}'}]},
        {"text": "slept"},
    )
    with client.responses.stream(
        model="m", input="wait a while", tools=[{"type": "mcp", "server_label": "windlass"}]
    ) as stream:
        types = [e.type for e in stream]
        final = stream.get_final_response()
    assert types[-1] == "response.completed"
    assert final.status == "completed"
    assert final.output_text == "slept"
    call = [o for o in final.output if o.type == "mcp_call"][0]
    assert call.name == "shell" and call.output.startswith("exit status: 0"), call.output

    raw = b"".join(transport.chunks).decode()
    # 40 s of silence at 15 s each: comments at about 15 s and 30 s.
    assert raw.count(": keep-alive\n\n") >= 2, raw[:2000]
    blocks = raw.split("\n\n")
    assert all(b == ": keep-alive" for b in blocks if "keep-alive" in b)
    # They came while the tool ran: after the call was announced, before its result.
    first = raw.index(": keep-alive")
    assert '"type":"mcp_call"' in raw[:first]
    assert "response.mcp_call.completed" not in raw[:first]
