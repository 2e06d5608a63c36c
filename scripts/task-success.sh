#!/usr/bin/env bash
# Task success with a real model, completion check off and on (not run by CI).
#
# Needs the rig (../shared/rig: `install.sh`, then `start.sh --only "llama mcp2"`):
# llama-server with qwen2.5-1.5b on 8081 and the MCP `add` server on 8091.
# Starts one debug `windlass serve` per setting, each with the built-in tools
# in a scratch work directory, runs scripts/task_success.py against it and
# prints the per-task lines and a summary per setting. Results also go to
# $OUT (default .scratch/task-success.jsonl). WINDLASS_BIN names a prebuilt
# binary (then nothing is built).
set -euo pipefail
cd "$(dirname "$0")/.."
RIG=${RIG_HOME:-$HOME/.cache/windlass-rig}
PY=${PY:-$RIG/venv-mcp/bin/python}
UPSTREAM=${UPSTREAM:-http://127.0.0.1:8081/v1}
MCP_URL=${MCP_URL:-http://127.0.0.1:8091/mcp}
OUT=${OUT:-.scratch/task-success.jsonl}
mkdir -p .scratch
: >"$OUT"
BIN=${WINDLASS_BIN:-target/debug/windlass}
[ -n "${WINDLASS_BIN:-}" ] || cargo build -q -p windlass-cli --bin windlass

run_setting() {
  local label=$1 check=$2 port=$3
  local dir; dir=$(mktemp -d)
  mkdir -p "$dir/work"
  cat >"$dir/windlass.toml" <<EOF
[loop]
completion_check = $check
max_agentic_turns = 12

[builtins]
enabled = ["shell", "read_file", "write_file", "edit_file", "list_dir"]
work_dir = "$dir/work"

[builtins.shell]
sandbox = "bwrap"
EOF
  "$BIN" serve --listen "127.0.0.1:$port" --db "$dir/w.db" \
    --upstream "$UPSTREAM" --mcp-allow-host 127.0.0.1 --config "$dir/windlass.toml" \
    >"$dir/serve.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
    sleep 0.2
  done
  "$PY" scripts/task_success.py --base-url "http://127.0.0.1:$port/v1" \
    --workdir "$dir/work" --mcp-url "$MCP_URL" --label "$label" | tee -a "$OUT"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
}

run_setting off false 18181
run_setting on true 18182
