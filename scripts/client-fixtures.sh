#!/usr/bin/env bash
# Installs the real OpenAI clients the tests drive against the `windlass`
# binary (tests/python): the OpenAI Python SDK (with its `realtime` extra,
# `websockets`, for WebSocket mode), the Agents SDK and Standard Webhooks'
# reference library and the Anthropic Python SDK (the Messages surface's
# client) into .venv-test,
# OpenAI's Codex CLI into .tools/codex. Pinned; idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

OPENAI=3.57.0
AGENTS=0.24.0
# Standard Webhooks' reference library: verifies Windlass's webhook signatures.
STANDARDWEBHOOKS=1.1.0
CODEX=0.169.0
# The official Anthropic Python SDK: drives /v1/messages (tests/python/test_messages_sdk.py).
ANTHROPIC=2.10.0

VENV=.venv-test
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV" 2>/dev/null || {
    echo "python3 -m venv failed; installing python3-venv" >&2
    apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$VENV"
  }
fi
"$VENV/bin/pip" install -q --disable-pip-version-check \
  "openai[realtime]==$OPENAI" "openai-agents==$AGENTS" \
  "standardwebhooks==$STANDARDWEBHOOKS" "anthropic==$ANTHROPIC" 'pytest>=8'

CODEX_DIR=.tools/codex
have=$(node -p "require('./$CODEX_DIR/node_modules/@openai/codex/package.json').version" 2>/dev/null || true)
if [ "$have" != "$CODEX" ]; then
  command -v npm >/dev/null || {
    echo "npm missing; installing nodejs and npm" >&2
    apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
  }
  echo "client-fixtures: installing @openai/codex@$CODEX" >&2
  mkdir -p "$CODEX_DIR"
  npm install --prefix "$CODEX_DIR" --no-audit --no-fund --silent "@openai/codex@$CODEX"
fi
