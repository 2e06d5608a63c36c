"""OpenAI's Codex CLI, unchanged, through `codex exec` against `windlass serve`
(default settings) in front of the scripted upstream. Installed by
scripts/client-fixtures.sh into .tools/codex."""

import os
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from conftest import ROOT

CODEX = ROOT / ".tools" / "codex" / "node_modules" / ".bin" / "codex"


@pytest.fixture(scope="module")
def codex_home(windlass):
    if not CODEX.exists():
        pytest.fail(f"Codex CLI missing: run ./scripts/client-fixtures.sh ({CODEX})")
    # Codex (release builds) refuses to put its helper links (the
    # `codex-linux-sandbox` its sandbox execs) under the system temp dir, and
    # a clone may itself live there: CODEX_HOME goes in the user's cache,
    # unique per run, removed afterwards.
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    scratch = cache / "windlass-tests"
    temp_root = Path(os.environ.get("TMPDIR") or "/tmp").resolve()
    if scratch.resolve().is_relative_to(temp_root):
        pytest.fail(f"CODEX_HOME would be under the temp dir {temp_root}; set XDG_CACHE_HOME elsewhere")
    scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=scratch, prefix="codex-") as home:
        Path(home, "config.toml").write_text(
            'model = "m"\n'
            'model_provider = "windlass"\n'
            "[model_providers.windlass]\n"
            'name = "Windlass"\n'
            f'base_url = "{windlass.base}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "WINDLASS_KEY"\n'
        )
        yield Path(home)


def codex_exec(home: Path, cwd: Path, prompt: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "WINDLASS_KEY": "test", "CODEX_HOME": str(home)}
    return subprocess.run(
        [str(CODEX), "exec", "--skip-git-repo-check", prompt],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_plain_turn(codex_home, fake):
    fake.script({"text": "Hello from the scripted model."})
    run = codex_exec(codex_home, codex_home, "hello")
    assert run.returncode == 0, run.stderr
    assert "Hello from the scripted model." in run.stdout
    body = fake.requests()[-1]
    names = [t["function"]["name"] for t in body["tools"]]
    assert "exec_command" in names
    # Codex's namespace tools reach the model as `ns__name`; its hosted
    # web_search does not.
    assert any("__" in n for n in names), names
    assert "web_search" not in names


def test_exec_command_turn_answers_from_the_output(codex_home, fake):
    work = codex_home / "work"
    work.mkdir(exist_ok=True)
    token = f"token-{uuid.uuid4().hex[:12]}"
    (work / "secret.txt").write_text(token + "\n")
    fake.script(
        {"tool_calls": [{"name": "exec_command", "arguments": '{"cmd":"cat secret.txt"}', "id": "call_x1"}]},
        {"text": "The file says: ", "echo_tool_output": True},
    )
    run = codex_exec(codex_home, work, "What is in secret.txt?")
    assert run.returncode == 0, run.stderr
    # Only the command's output had the token: Codex ran the call Windlass
    # handed back, and sent the result on through Windlass to the model.
    assert token in run.stdout
    sent = fake.requests()[-1]["messages"]
    assert sent[-1]["role"] == "tool" and sent[-1]["tool_call_id"] == "call_x1"
    assert token in sent[-1]["content"]
