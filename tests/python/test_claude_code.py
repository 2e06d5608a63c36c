"""Claude Code (npm `@anthropic-ai/claude-code`), unchanged, in print mode
(`claude -p`) against `windlass serve`'s Messages surface in front of the
scripted upstream. Opt-in: the CLI is large, so it is not installed by
scripts/client-fixtures.sh; install it with
`npm install --prefix .tools/claude-code @anthropic-ai/claude-code` (or point
WINDLASS_CLAUDE_BIN at a `claude` binary). Claude Code sends adaptive
thinking and `context_management` (`clear_thinking_20251015`, `keep: "all"`)
on every request; both must keep working."""

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT

CLAUDE = Path(
    os.environ.get("WINDLASS_CLAUDE_BIN", ROOT / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude")
)

pytestmark = pytest.mark.skipif(not CLAUDE.exists(), reason=f"Claude Code not installed ({CLAUDE})")


def test_print_mode_answers_through_windlass(windlass, fake):
    # Whatever Claude Code asks besides the prompt (titles, summaries) gets
    # the same scripted answer.
    fake._post("/default", {"text": "Hello from Windlass via Claude Code"})
    with tempfile.TemporaryDirectory() as home:
        env = {
            **os.environ,
            "HOME": home,
            "ANTHROPIC_BASE_URL": windlass.base,
            "ANTHROPIC_API_KEY": "test",
            "ANTHROPIC_MODEL": "m",
            "ANTHROPIC_SMALL_FAST_MODEL": "m",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
        }
        run = subprocess.run(
            [str(CLAUDE), "-p", "say hi", "--model", "m"],
            cwd=home,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
        )
    assert run.returncode == 0, run.stderr
    assert "Hello from Windlass via Claude Code" in run.stdout
    sent = fake.requests()[-1]
    # Adaptive thinking reached the upstream as a reasoning effort, and
    # Claude Code's own tools were offered to the model.
    assert sent.get("reasoning_effort") in ("low", "medium", "high", "xhigh")
    names = [t["function"]["name"] for t in sent["tools"]]
    assert "Bash" in names and "Read" in names
