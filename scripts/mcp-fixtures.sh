#!/usr/bin/env bash
# Installs the real MCP servers the integration tests run against (see
# crates/windlass-testkit/src/mcp.rs). Idempotent and quick when done:
#   .venv-test  : mcp 2.x (latest) for tests/mcp/fixture_server.py
#   .venv-mcp1  : mcp<2 (1.x FastMCP) for the same fixture server
#   tests/mcp/node : npm @modelcontextprotocol/server-everything
set -euo pipefail
cd "$(dirname "$0")/.."

make_venv() {
  [ -x "$1/bin/pip" ] && return 0
  python3 -m venv "$1" 2>/dev/null || {
    echo "python3 -m venv failed; installing python3-venv" >&2
    apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$1"
  }
}

# Installs the package spec into the venv unless `check` (python code) succeeds.
ensure_pkg() {
  local venv=$1 spec=$2 check=$3
  if ! "$venv/bin/python" -c "$check" 2>/dev/null; then
    echo "mcp-fixtures: installing $spec into $venv" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check "$spec"
  fi
}

make_venv .venv-test
ensure_pkg .venv-test 'mcp>=2' \
  'import importlib.metadata as m; assert int(m.version("mcp").split(".")[0]) >= 2'

make_venv .venv-mcp1
ensure_pkg .venv-mcp1 'mcp<2' \
  'import importlib.metadata as m; assert m.version("mcp").split(".")[0] == "1"'

NODE_DIR=tests/mcp/node
if [ ! -x "$NODE_DIR/node_modules/.bin/mcp-server-everything" ]; then
  command -v npm >/dev/null || {
    echo "npm missing; installing nodejs and npm" >&2
    apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
  }
  echo "mcp-fixtures: installing @modelcontextprotocol/server-everything" >&2
  mkdir -p "$NODE_DIR"
  npm install --prefix "$NODE_DIR" --no-audit --no-fund --silent @modelcontextprotocol/server-everything
fi
