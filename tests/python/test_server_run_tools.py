"""`[hosted] shell = "server"` and `apply_patch = "server"` in `windlass serve`,
through the official OpenAI Python SDK: the scripted model applies a patch
and runs a command; the gateway runs both in its bubblewrap sandbox and the
response carries OpenAI's call and output items, with no pause for the
client."""

import json
import tempfile
from pathlib import Path

import pytest
from openai import OpenAI

from conftest import Windlass


@pytest.fixture(scope="module")
def gateway(fake):
    tmp = tempfile.TemporaryDirectory()
    root = Path(tmp.name) / "workspaces"
    config = Path(tmp.name) / "windlass.toml"
    config.write_text(
        f'[hosted]\nshell = "server"\napply_patch = "server"\nwork_root = {json.dumps(str(root))}\n'
    )
    w = Windlass(fake.upstream, "--config", str(config))
    w.root = root
    yield w
    w.close()
    tmp.cleanup()


def test_shell_and_apply_patch_run_on_the_server(gateway, fake):
    patch = {"type": "create_file", "path": "todo.md", "diff": "+- ship it\n"}
    fake.script(
        {"tool_calls": [{"name": "apply_patch", "arguments": json.dumps(patch), "id": "call_p"}]},
        {"tool_calls": [{"name": "shell", "arguments": '{"commands":["cat todo.md","pwd"]}',
                         "id": "call_s"}]},
        {"text": "Shell said: ", "echo_tool_output": True},
    )
    sdk = OpenAI(base_url=gateway.base + "/v1", api_key="test", max_retries=0)
    resp = sdk.responses.create(
        model="m", input="Write the todo list", tools=[{"type": "shell"}, {"type": "apply_patch"}]
    )
    assert resp.status == "completed"
    types = [i.type for i in resp.output]
    assert types == ["apply_patch_call", "apply_patch_call_output", "shell_call",
                     "shell_call_output", "message"]
    patched, shell_out = resp.output[1], resp.output[3]
    assert patched.call_id == "call_p" and patched.status == "completed"
    assert shell_out.call_id == "call_s"
    assert shell_out.output[0].stdout == "- ship it\n"
    assert shell_out.output[0].outcome.type == "exit" and shell_out.output[0].outcome.exit_code == 0
    # The tenant's directory under the configured root holds the file.
    [tenant_dir] = list(gateway.root.iterdir())
    assert shell_out.output[1].stdout.strip() == str(tenant_dir)
    assert (tenant_dir / "todo.md").read_text() == "- ship it\n"
    # The model read the command's output.
    assert "- ship it" in resp.output_text
