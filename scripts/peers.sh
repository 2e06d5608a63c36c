#!/usr/bin/env bash
# Peers side by side (not run by CI): the same stored single-turn request
# through Windlass (store true and false), LiteLLM's proxy and agentic-api,
# against ONE scripted upstream (windlass-fake-upstream: /v1/chat/completions
# and /v1/responses, first byte after UPSTREAM_MS), plus the upstream reached
# directly, with wrk at CONCURRENCY for SECS per path. Reports requests/s,
# p50/p99 latency (wrk's), the added p50 against the direct path, and each
# server's CPU per request (utime+stime of its process tree from /proc).
#
#   scripts/peers.sh                       # everything (installs peers into .scratch/peers)
#   PEERS="windlass litellm" scripts/peers.sh
#   SMOKE=1 scripts/peers.sh               # 1 s per path: checks the wiring only
#
# LiteLLM comes from PyPI into .scratch/peers/venv (pip), agentic-api from
# crates.io (`cargo install agentic-server`, a long build) into
# .scratch/peers/agentic; both are reused on later runs. The crate installs
# two binaries, `agentic` (a CLI harness) and `agentic-server` (the
# gateway): the gateway is the one run. AGENTIC_ARGS overrides how it is
# started (default: the flags of agentic-server 0.9.0's --help).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
export PROFILE="${PROFILE:-release}"
export WORK="$ROOT/.scratch/peers"
source "$ROOT/scripts/lib/gateway.sh"
PEERS="${PEERS:-windlass litellm agentic}"
CONCURRENCY="${CONCURRENCY:-16}"
SECS="${SECS:-10}"
[ -n "${SMOKE:-}" ] && SECS=1
UPSTREAM_MS="${UPSTREAM_MS:-20}"
MODEL=fake-model
# One bearer key for every path (LiteLLM refuses to start without a strong
# master key; servers without keys ignore it).
KEY="sk-$(python3 -c 'import secrets; print(secrets.token_hex(24))')"

need() { command -v "$1" >/dev/null || { echo "peers.sh needs $1" >&2; exit 1; }; }
need wrk; need python3; need curl

install_litellm() {
  [ -x "$WORK/venv/bin/litellm" ] && return 0
  python3 -m venv "$WORK/venv"
  "$WORK/venv/bin/pip" install -q 'litellm[proxy]'
}

install_agentic() {
  AGENTIC_BIN="$WORK/agentic/bin/agentic-server"
  [ -x "$AGENTIC_BIN" ] && return 0
  CARGO_INCREMENTAL=0 cargo install -q --locked agentic-server --root "$WORK/agentic" ||
    CARGO_INCREMENTAL=0 cargo install -q agentic-server --root "$WORK/agentic"
}

wait_http() { # url
  for _ in $(seq 600); do
    curl -s -o /dev/null "$1" && return 0
    sleep 0.1
  done
  echo "no answer from $1" >&2
  return 1
}

# CPU seconds (user+system) of a process and its children still alive.
cpu_of() {
  local total=0 p
  for p in $1 $(pgrep -P "$1" 2>/dev/null || true); do
    [ -r "/proc/$p/stat" ] || continue
    total=$(awk -v t="$total" '{ print t + ($14 + $15) / 100 }' "/proc/$p/stat")
  done
  echo "$total"
}

lua_for() { # body-json -> lua file
  local f="$WORK/post-$RANDOM.lua"
  python3 - "$1" "$f" "$KEY" <<'PY'
import json, sys
body, path, key = sys.argv[1], sys.argv[2], sys.argv[3]
with open(path, "w") as fh:
    fh.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n')
    fh.write('wrk.headers["Authorization"] = "Bearer ' + key + '"\n')
    fh.write("wrk.body = " + json.dumps(body) + "\n")
    fh.write("done = function(summary, latency, requests)\n")
    fh.write('  io.write(string.format("RESULT %d %d %.3f %.3f\\n", summary.requests, '
             'summary.errors.status + summary.errors.connect + summary.errors.read + '
             'summary.errors.timeout, latency:percentile(50) / 1000, latency:percentile(99) / 1000))\n')
    fh.write("end\n")
print(path)
PY
}

RESULTS="$WORK/results.tsv"
: >"$RESULTS"
measure() { # name url body pid
  local name=$1 url=$2 body=$3 pid=${4:-}
  local lua out before after
  lua=$(lua_for "$body")
  # A short warm-up (connection pools, JIT-less but lazy imports in Python).
  wrk -t2 -c"$CONCURRENCY" -d1s -s "$lua" "$url" >/dev/null 2>&1 || true
  before=$([ -n "$pid" ] && cpu_of "$pid" || echo 0)
  out=$(wrk -t2 -c"$CONCURRENCY" -d"${SECS}s" --latency -s "$lua" "$url" 2>&1)
  after=$([ -n "$pid" ] && cpu_of "$pid" || echo 0)
  local line; line=$(grep '^RESULT' <<<"$out" || echo "RESULT 0 0 0 0")
  read -r _ n errs p50 p99 <<<"$line"
  local cpu_us; cpu_us=$(python3 -c "print(round(($after - $before) * 1e6 / max($n, 1)))")
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$n" "$errs" "$p50" "$p99" "$cpu_us" | tee -a "$RESULTS" >&2
}

build
start_upstream
default_reply "{\"text\": \"Hello! This is a short answer from the fake upstream model.\", \"first_byte_delay_ms\": $UPSTREAM_MS}"
UP_BASE="${UPSTREAM%/}"
PROMPT='Say hello to the benchmark.'
CHAT_BODY="{\"model\": \"$MODEL\", \"messages\": [{\"role\": \"user\", \"content\": \"$PROMPT\"}]}"
stored_body() { echo "{\"model\": \"$MODEL\", \"input\": \"$PROMPT\", \"store\": $1}"; }

measure direct "$UP_BASE/chat/completions" "$CHAT_BODY"

for peer in $PEERS; do
  case $peer in
    windlass)
      db="$WORK/windlass.db"; rm -f "$db" "$db-wal" "$db-shm"
      start_gateway "$db"
      measure windlass-stored "$GW/v1/responses" "$(stored_body true)" "$GW_PID"
      measure windlass-unstored "$GW/v1/responses" "$(stored_body false)" "$GW_PID"
      kill "$GW_PID" 2>/dev/null || true
      ;;
    litellm)
      install_litellm
      port=$(free_port)
      cat >"$WORK/litellm.yaml" <<YAML
model_list:
  - model_name: $MODEL
    litellm_params:
      model: openai/$MODEL
      api_base: $UP_BASE
      api_key: sk-fake
general_settings:
  master_key: $KEY
YAML
      "$WORK/venv/bin/litellm" --config "$WORK/litellm.yaml" --host 127.0.0.1 --port "$port" \
        >"$WORK/litellm.log" 2>&1 &
      pid=$!; PIDS+=("$pid")
      wait_http "http://127.0.0.1:$port/health/liveliness"
      measure litellm-responses "http://127.0.0.1:$port/v1/responses" "$(stored_body true)" "$pid"
      measure litellm-chat "http://127.0.0.1:$port/v1/chat/completions" "$CHAT_BODY" "$pid"
      kill "$pid" 2>/dev/null || true
      ;;
    agentic)
      install_agentic
      port=$(free_port)
      rm -f "$WORK/agentic.db"*
      # Standalone mode: --llm-api-base (with or without /v1), bind flags,
      # a SQLite file for its stored responses (it adds mode=rwc); the key from
      # OPENAI_API_KEY. It has no inbound key unless OIDC is configured.
      # shellcheck disable=SC2086
      OPENAI_API_KEY=sk-fake "$AGENTIC_BIN" ${AGENTIC_ARGS:---llm-api-base $UP_BASE --gateway-host 127.0.0.1 --gateway-port $port --db-url sqlite://$WORK/agentic.db} \
        >"$WORK/agentic.log" 2>&1 &
      pid=$!; PIDS+=("$pid")
      wait_http "http://127.0.0.1:$port/"
      measure agentic-stored "http://127.0.0.1:$port/v1/responses" "$(stored_body true)" "$pid"
      kill "$pid" 2>/dev/null || true
      ;;
  esac
done

python3 - "$RESULTS" "$SECS" "$CONCURRENCY" "$UPSTREAM_MS" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
secs, conc, up = sys.argv[2:5]
direct = next((float(r[3]) for r in rows if r[0] == "direct"), None)
print(f"\nwrk -t2 -c{conc} -d{secs}s, upstream first byte after {up} ms; loadavg {open('/proc/loadavg').read().split()[0]}\n")
print("| path | requests | errors | req/s | p50 ms | p99 ms | added p50 ms | CPU/request µs |")
print("|---|---|---|---|---|---|---|---|")
for name, n, errs, p50, p99, cpu in rows:
    added = "" if direct is None or name == "direct" else f"{float(p50) - direct:+.2f}"
    rate = int(n) / float(secs)
    cpu = "" if name == "direct" else cpu
    print(f"| {name} | {n} | {errs} | {rate:.0f} | {float(p50):.2f} | {float(p99):.2f} | {added} | {cpu} |")
PY
