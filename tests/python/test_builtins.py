"""Built-in tools and governance through the official OpenAI Python SDK,
against the real `windlass serve` (and `windlass mcp` through the official
Python MCP client): `shell` runs in the bubblewrap sandbox and a file tool
writes a real file, inside one response."""

import asyncio
import json
import tempfile
from pathlib import Path

import pytest

from conftest import BIN, Fake, Windlass


def config_text(work: Path, governance: str = "") -> str:
    return f"""
[builtins]
enabled = ["shell", "read_file", "write_file", "edit_file", "list_dir"]
work_dir = {json.dumps(str(work))}

[governance]
commands = ["wc", "cat", "ls"]
{governance}
"""


@pytest.fixture(scope="module")
def setup():
    tmp = tempfile.TemporaryDirectory()
    work = Path(tmp.name) / "work"
    work.mkdir()
    (work / "README.md").write_text("one\ntwo\nthree\nfour\n")
    config = Path(tmp.name) / "windlass.toml"
    config.write_text(config_text(work, 'tool_rate_limit = { per_minute = 1, burst = 1 }'))
    fake = Fake()
    w = Windlass(fake.upstream, "--config", str(config))
    from openai import OpenAI

    client = OpenAI(base_url=w.base + "/v1", api_key="test", max_retries=0)
    yield client, fake, work
    w.close()
    fake.close()
    tmp.cleanup()


BUILTINS = {"type": "mcp", "server_label": "windlass"}


def test_shell_and_a_file_tool_in_one_response(setup):
    client, fake, work = setup
    fake.script(
        {"tool_calls": [{"name": "windlass__shell", "arguments": '{"command":"wc -l README.md"}'}]},
        {"tool_calls": [{"name": "windlass__write_file", "arguments": '{"path":"answer.txt","content":"4\\n"}'}]},
        {"text": "README.md has 4 lines."},
    )
    r = client.responses.create(model="m", input="count the lines of README.md", tools=[BUILTINS])
    assert r.status == "completed"
    kinds = [item.type for item in r.output]
    assert kinds == ["mcp_list_tools", "mcp_call", "mcp_call", "message"], kinds
    shell, write = r.output[1], r.output[2]
    assert shell.name == "shell" and shell.server_label == "windlass"
    assert shell.output.startswith("exit status: 0") and "4 README.md" in shell.output
    assert write.name == "write_file" and "wrote 2 bytes" in write.output
    assert (work / "answer.txt").read_text() == "4\n"
    assert r.output_text == "README.md has 4 lines."


def test_injection_and_rate_limit_are_error_outputs(setup):
    client, fake, work = setup
    fake.script(
        {"tool_calls": [{"name": "windlass__shell", "arguments": '{"command":"cat README.md; rm -rf ."}'}]},
        {"tool_calls": [{"name": "windlass__list_dir", "arguments": "{}"}]},
        # Not `{}` again: the stall stop (on by default) refuses a repeat.
        {"tool_calls": [{"name": "windlass__list_dir", "arguments": '{"path": "."}'}]},
        {"text": "done"},
    )
    stream = client.responses.create(model="m", input="go", tools=[BUILTINS], stream=True)
    final = None
    for event in stream:
        if event.type == "response.completed":
            final = event.response
    assert final is not None and final.status == "completed"
    calls = [item for item in final.output if item.type == "mcp_call"]
    assert "'rm' is not on the allowlist" in str(calls[0].error)
    assert (work / "README.md").exists()
    assert "README.md" in calls[1].output
    assert "rate limit" in str(calls[2].error)
    assert final.output_text == "done"


def test_windlass_mcp_serves_the_builtins_over_stdio(setup):
    _, _, work = setup
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    config = work.parent / "stdio.toml"
    config.write_text(config_text(work))

    async def session():
        params = StdioServerParameters(command=str(BIN / "windlass"), args=["mcp", "--config", str(config)])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                listed = await s.list_tools()
                tools = {t.name: t for t in listed.tools}
                assert set(tools) == {"shell", "read_file", "write_file", "edit_file", "list_dir"}
                hint = lambda name: tools[name].annotations.model_dump(by_alias=True)["readOnlyHint"]
                assert hint("read_file") is True and hint("list_dir") is True
                assert hint("shell") is False and hint("write_file") is False
                read_r = await s.call_tool("read_file", {"path": "README.md"})
                assert not read_r.is_error and read_r.content[0].text == "one\ntwo\nthree\nfour\n"
                shell_r = await s.call_tool("shell", {"command": "wc -l README.md"})
                assert not shell_r.is_error and "4 README.md" in shell_r.content[0].text
                escape = await s.call_tool("read_file", {"path": "../stdio.toml"})
                assert escape.is_error
                blocked = await s.call_tool("shell", {"command": "ls `id`"})
                assert blocked.is_error and "substitution" in blocked.content[0].text

    asyncio.run(session())


def test_rules_follow_the_api_key(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "windlass.toml"
    config.write_text(
        config_text(work)
        + """
[governance.keys.reader]
autonomy = "read_only"

[[server.keys]]
name = "reader"
key = "sk-reader"

[[server.keys]]
name = "writer"
key = "sk-writer"
"""
    )
    fake = Fake()
    w = Windlass(fake.upstream, "--config", str(config))
    try:
        from openai import OpenAI

        write = {"tool_calls": [{"name": "windlass__write_file", "arguments": '{"path":"x.txt","content":"x"}'}]}
        for key, allowed in (("sk-reader", False), ("sk-writer", True)):
            client = OpenAI(base_url=w.base + "/v1", api_key=key, max_retries=0)
            fake.script(write, {"text": "ok"})
            r = client.responses.create(model="m", input="write", tools=[BUILTINS])
            assert r.status == "completed"
            call = [i for i in r.output if i.type == "mcp_call"][0]
            if allowed:
                assert "wrote 1 bytes" in call.output, call
            else:
                assert "read-only" in str(call.error), call
            assert (work / "x.txt").exists() == allowed
    finally:
        w.close()
        fake.close()
