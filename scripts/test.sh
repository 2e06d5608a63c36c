#!/usr/bin/env bash
# The whole test suite: Rust unit and integration tests (real HTTP, SQLite
# files, the scripted upstream), then the official OpenAI Python SDK against
# the real `windlass` binary. Installs its Python tools into .venv-test once.
set -euo pipefail
cd "$(dirname "$0")/.."

# The built-in `shell` tool's tests run the real sandbox (bubblewrap).
if ! command -v bwrap >/dev/null; then
  echo "bwrap missing; installing bubblewrap" >&2
  apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null
fi

cargo build --workspace --bins
./scripts/mcp-fixtures.sh
cargo test --workspace

VENV=.venv-test
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV" 2>/dev/null || {
    echo "python3 -m venv failed; installing python3-venv" >&2
    apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$VENV"
  }
fi
"$VENV/bin/pip" install -q --disable-pip-version-check 'openai>=1.100' 'pytest>=8'
(cd tests/python && "../../$VENV/bin/python" -m pytest -q)
