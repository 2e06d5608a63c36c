"""The OpenAI Agents SDK's hosted tools against `windlass serve`, the scripted
upstream playing the model: `WebSearchTool` over a local SearXNG-shaped
server, `CodeInterpreterTool` (Python in the real bubblewrap sandbox),
`FileSearchTool` over a vector store made through the SDK's Files and
vector-store API, and `MCPServerStreamableHttp` pointed at the gateway's own
`/mcp` endpoint (the built-in `read_file`, behind an API key)."""

import asyncio
import json
import tempfile
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from agents import (
    Agent,
    CodeInterpreterTool,
    FileSearchTool,
    ModelSettings,
    OpenAIResponsesModel,
    Runner,
    WebSearchTool,
    set_tracing_disabled,
)
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI, OpenAI

from conftest import Windlass

set_tracing_disabled(True)  # no trace export: nothing leaves the machine

KEY = "sk-hosted-test"
NOTES = "Office notes.\nThe office cat is named Biscuit and sleeps by the radiator.\n"


class _SearXNG(BaseHTTPRequestHandler):
    """`GET /search?q=...&format=json`, answering every query with two results."""

    queries: list = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        url = urllib.parse.urlparse(self.path)
        if url.path != "/search":
            self.send_error(404)
            return
        _SearXNG.queries.append(urllib.parse.parse_qs(url.query).get("q", [""])[0])
        body = json.dumps({"results": [
            {"url": "https://tokio.rs/", "title": "Tokio",
             "content": "An asynchronous runtime for Rust."},
            {"url": "https://docs.rs/tokio", "title": "tokio - docs.rs", "content": "API docs."},
        ]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def gateway(fake):
    search = ThreadingHTTPServer(("127.0.0.1", 0), _SearXNG)
    threading.Thread(target=search.serve_forever, daemon=True).start()
    tmp = tempfile.TemporaryDirectory()
    work = Path(tmp.name) / "work"
    work.mkdir()
    (work / "hello.txt").write_text("hello from the work dir\n")
    config = Path(tmp.name) / "windlass.toml"
    config.write_text(
        f'[server]\napi_keys = ["{KEY}"]\n\n'
        f'[builtins]\nenabled = ["read_file"]\nwork_dir = {json.dumps(str(work))}\n\n'
        "[code_interpreter]\nenabled = true\n\n"
        f'[web_search]\nprovider = "searxng"\nurl = "http://127.0.0.1:{search.server_port}"\n'
        'allow_hosts = ["127.0.0.1"]\n'
    )
    w = Windlass(fake.upstream, "--config", str(config))
    yield w
    w.close()
    search.shutdown()
    tmp.cleanup()


def _agent(gateway, tools, **kw):
    client = AsyncOpenAI(base_url=gateway.base + "/v1", api_key=KEY, max_retries=0)
    return Agent(
        name="hosted",
        instructions="Use the tools.",
        tools=tools,
        model=OpenAIResponsesModel(model="m", openai_client=client),
        **kw,
    )


def _run(agent, prompt, streamed):
    async def go():
        if streamed:
            result = Runner.run_streamed(agent, prompt)
            async for _ in result.stream_events():
                pass
            return result
        return await Runner.run(agent, prompt)

    return asyncio.run(go())


def _hosted_items(result, kind):
    """The raw items of `kind` the SDK saw as tool calls of the run."""
    return [
        i.raw_item
        for i in result.new_items
        if i.type == "tool_call_item" and getattr(i.raw_item, "type", None) == kind
    ]


@pytest.mark.parametrize("streamed", [False, True])
def test_web_search_tool_over_a_searxng_backend(gateway, fake, streamed):
    _SearXNG.queries.clear()
    fake.script(
        {"tool_calls": [{"name": "web_search", "arguments": '{"query":"tokio runtime"}',
                         "id": "call_ws"}]},
        {"text": "Found: ", "echo_tool_output": True},
    )
    result = _run(_agent(gateway, [WebSearchTool()]), "What is tokio?", streamed)
    assert result.final_output.startswith("Found: ")
    assert "https://tokio.rs/" in result.final_output  # the answer turn saw the results
    assert _SearXNG.queries == ["tokio runtime"]
    [call] = _hosted_items(result, "web_search_call")
    assert call.status == "completed"
    assert call.action.type == "search" and call.action.query == "tokio runtime"


@pytest.mark.parametrize("streamed", [False, True])
def test_code_interpreter_tool_runs_python_in_the_sandbox(gateway, fake, streamed):
    fake.script(
        {"tool_calls": [{"name": "code_interpreter", "arguments": '{"code":"print(6*7)"}',
                         "id": "call_ci"}]},
        {"text": "Output: ", "echo_tool_output": True},
    )
    tool = CodeInterpreterTool(tool_config={"type": "code_interpreter",
                                            "container": {"type": "auto"}})
    agent = _agent(gateway, [tool],
                   model_settings=ModelSettings(response_include=["code_interpreter_call.outputs"]))
    result = _run(agent, "Six times seven?", streamed)
    assert result.final_output.startswith("Output: ") and "42" in result.final_output
    [call] = _hosted_items(result, "code_interpreter_call")
    assert call.status == "completed"
    assert call.code == "print(6*7)"
    assert call.container_id.startswith("cntr_")
    assert call.outputs[0].type == "logs" and call.outputs[0].logs.strip() == "42"


def test_file_search_tool_over_a_vector_store_made_through_the_api(gateway, fake, tmp_path):
    sdk = OpenAI(base_url=gateway.base + "/v1", api_key=KEY, max_retries=0)
    store = sdk.vector_stores.create(name="office")
    path = tmp_path / "notes.txt"
    path.write_text(NOTES)
    vsf = sdk.vector_stores.files.upload_and_poll(
        vector_store_id=store.id, file=path.open("rb"), poll_interval_ms=100
    )
    assert vsf.status == "completed", vsf.last_error
    fake.script(
        {"tool_calls": [{"name": "file_search", "arguments": '{"query":"office cat"}',
                         "id": "call_fs"}]},
        {"text": "Notes: ", "echo_tool_output": True},
    )
    tool = FileSearchTool(vector_store_ids=[store.id], include_search_results=True)
    result = _run(_agent(gateway, [tool]), "What is the cat called?", False)
    assert result.final_output.startswith("Notes: ") and "Biscuit" in result.final_output
    [call] = _hosted_items(result, "file_search_call")
    assert call.status == "completed"
    assert call.queries == ["office cat"]
    assert call.results and call.results[0].filename == "notes.txt"
    assert "Biscuit" in call.results[0].text


def test_mcp_server_streamable_http_on_the_gateways_mcp_endpoint(gateway, fake):
    params = {"url": gateway.base + "/mcp", "headers": {"Authorization": f"Bearer {KEY}"}}

    async def go():
        async with MCPServerStreamableHttp(params=params, name="windlass") as server:
            names = [t.name for t in await server.list_tools()]
            direct = await server.call_tool("windlass__read_file", {"path": "hello.txt"})
            # The same tool in an agent run: the model (scripted) calls it,
            # the SDK runs it through /mcp.
            fake.script(
                {"tool_calls": [{"name": "windlass__read_file",
                                 "arguments": '{"path":"hello.txt"}', "id": "call_rf"}]},
                {"text": "File: ", "echo_tool_output": True},
            )
            result = await Runner.run(_agent(gateway, [], mcp_servers=[server]), "Read it")
            return names, direct, result

    names, direct, result = asyncio.run(go())
    assert "windlass__read_file" in names
    # `is_error` (mcp 2.x) or `isError` (1.x), whichever the SDK pulled in.
    assert getattr(direct, "is_error", getattr(direct, "isError", None)) is False
    assert "hello from the work dir" in direct.content[0].text
    assert result.final_output.startswith("File: ")
    assert "hello from the work dir" in result.final_output
