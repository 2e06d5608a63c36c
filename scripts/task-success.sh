#!/usr/bin/env bash
# Task success with a real model (not run by CI): the task set of
# scripts/tasks/ (47 tasks, each checked by a rule) run one setting after
# another, never two at once against one llama-server.
#
#   scripts/task-success.sh [--models "1.5b 0.5b"] [--tasks LIST] SETTING...
#
# SETTING:
#   windlass-off     Windlass's plain loop (`windlass serve`): [loop]
#                    completion_check = false, techniques = [] (none)
#   windlass-default Windlass as shipped (no [loop] techniques line: stall_stop)
#   windlass-on      the plain loop with completion_check = true
#   windlass:NAME=T1,T2  Windlass's plain loop (as windlass-off)
#                    with techniques T1,T2 asked per request
#                    (metadata.windlass_techniques: completion_check,
#                    restate_check, repeat_guard, schema_check,
#                    require_after_check, stall_stop, value_check, or all)
#   agents           the OpenAI Agents SDK's loop on the same model and tools
#   lab:NAME=T1,T2   the lab loop (an experiment harness, not the product) with
#                    techniques T1,T2 (scripts/tasks/lab/techniques.py); lab:plain
#                    has none
# Default settings: windlass-off windlass-on agents.
#
# Needs the rig (../shared/rig: `start.sh --only "llama llama-small mcp2"`):
# llama-server with qwen2.5-1.5b on 8081 and qwen2.5-0.5b on 8082, the MCP
# `add` server on 8091. Every setting gets a fresh work directory for the
# built-in tools (bubblewrap sandbox); the Agents SDK and the lab loop reach
# the built-ins through `windlass mcp` over stdio with the same config. One
# JSON line per task is appended to $OUT (default .scratch/task-success.jsonl);
# the tables come from `scripts/tasks/summary.py $OUT`. WINDLASS_BIN names a
# prebuilt binary (then nothing is built). Max 10 model turns everywhere
# (the gateway's default), temperature 0.
set -euo pipefail
cd "$(dirname "$0")/.."
RIG=${RIG_HOME:-$HOME/.cache/windlass-rig}
PY=${PY:-$RIG/venv-mcp/bin/python}
MCP_URL=${MCP_URL:-http://127.0.0.1:8091/mcp}
OUT=${OUT:-.scratch/task-success.jsonl}
# The lab loop's memo of model answers (scripts/tasks/memo.py); the gateway's
# exchanges are filed there too by a recording proxy. MEMO= turns it off.
MEMO=${MEMO-.scratch/lab-memo.sqlite}
MODELS="1.5b"
TASKS=""
while [ $# -gt 0 ]; do
  case $1 in
    --models) MODELS=$2; shift 2 ;;
    --tasks) TASKS=$2; shift 2 ;;
    *) break ;;
  esac
done
SETTINGS=("$@")
[ ${#SETTINGS[@]} -gt 0 ] || SETTINGS=(windlass-off windlass-on agents)
mkdir -p "$(dirname "$OUT")"
BIN=${WINDLASS_BIN:-target/debug/windlass}
[ -n "${WINDLASS_BIN:-}" ] || cargo build -q -p windlass-cli --bin windlass
BIN=$(realpath "$BIN")

model_id() { case $1 in 1.5b) echo qwen2.5-1.5b ;; 0.5b) echo qwen2.5-0.5b ;; *) echo "$1" ;; esac; }
upstream() { case $1 in 1.5b) echo http://127.0.0.1:8081/v1 ;; 0.5b) echo http://127.0.0.1:8082/v1 ;; esac; }

write_config() { # dir check techniques-line
  # CPU inference is slow and the machine is shared: generous upstream
  # timeouts, and no retries (every runner gets one attempt per turn).
  cat >"$1/windlass.toml" <<TOML
[upstream]
first_byte_timeout_ms = 900000
idle_timeout_ms = 900000
max_retries = 0

[loop]
completion_check = $2
max_agentic_turns = 10
$3

[builtins]
enabled = ["shell", "read_file", "write_file", "edit_file", "list_dir"]
work_dir = "$1/work"

[builtins.shell]
sandbox = "bwrap"
TOML
}

run_setting() { # model setting
  local model=$1 setting=$2 dir pid="" proxy=""
  dir=$(mktemp -d)
  mkdir -p "$dir/work"
  local common=(--model "$(model_id "$model")" --workdir "$dir/work" --mcp-url "$MCP_URL"
    --windlass-bin "$BIN" --config "$dir/windlass.toml" --out "$OUT" --tasks "$TASKS")
  case $setting in
    windlass-off | windlass-on | windlass-default | windlass:*)
      local check=false port=18181 label=$setting extra=()
      [ "$setting" = windlass-on ] && check=true && port=18182
      if [[ $setting == windlass:* ]]; then
        local spec=${setting#windlass:}
        label="windlass:${spec%%=*}"
        extra=(--extra-body "{\"metadata\": {\"windlass_techniques\": \"${spec#*=}\"}}")
      fi
      local plain="techniques = []"
      [ "$setting" = windlass-default ] && plain=""
      write_config "$dir" "$check" "$plain"
      local up; up=$(upstream "$model")
      if [ -n "$MEMO" ]; then
        "$PY" scripts/tasks/record_proxy.py "$up" "$MEMO" 18190 >"$dir/proxy.log" 2>&1 &
        proxy=$!
        for _ in $(seq 1 100); do
          curl -s -o /dev/null "http://127.0.0.1:18190/" && break
          sleep 0.2
        done
        up=http://127.0.0.1:18190/v1
      fi
      "$BIN" serve --listen "127.0.0.1:$port" --db "$dir/w.db" --upstream "$up" \
        --mcp-allow-host 127.0.0.1 --config "$dir/windlass.toml" >"$dir/serve.log" 2>&1 &
      pid=$!
      for _ in $(seq 1 100); do
        curl -sf "http://127.0.0.1:$port/health" >/dev/null && break
        sleep 0.2
      done
      "$PY" scripts/task_success.py --runner windlass --setting "$label" \
        --base-url "http://127.0.0.1:$port/v1" "${extra[@]}" "${common[@]}" || true
      ;;
    agents)
      write_config "$dir" false
      "$PY" scripts/task_success.py --runner agents --setting agents \
        --upstream "$(upstream "$model")" "${common[@]}" || true
      ;;
    lab:*)
      local spec=${setting#lab:} name techniques
      name=${spec%%=*}
      techniques=""
      [[ $spec == *=* ]] && techniques=${spec#*=}
      write_config "$dir" false
      "$PY" scripts/task_success.py --runner lab --setting "lab:$name" --techniques "$techniques" \
        ${MEMO:+--memo "$MEMO"} \
        --upstream "$(upstream "$model")" "${common[@]}" || true
      ;;
    *) echo "unknown setting: $setting" >&2; exit 2 ;;
  esac
  for p in $pid $proxy; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  # The gateway's log stays beside the results (a failed start shows there).
  [ -f "$dir/serve.log" ] && cp "$dir/serve.log" "$OUT.${setting//[^A-Za-z0-9_-]/_}.serve.log"
  rm -rf "$dir"
}

for model in $MODELS; do
  for setting in "${SETTINGS[@]}"; do
    run_setting "$model" "$setting"
  done
done
"$PY" scripts/tasks/summary.py "$OUT"
