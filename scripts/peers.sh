#!/usr/bin/env bash
# Peers side by side (not run by CI): the same stored single-turn request
# through Windlass (store true and false, JSON and streamed), agentic-api
# (JSON and streamed) and optionally LiteLLM's proxy, against ONE scripted
# upstream (windlass-fake-upstream: /v1/chat/completions and /v1/responses,
# first byte after UPSTREAM_MS), plus the upstream reached directly (JSON and
# streamed), with wrk at each of CONCURRENCY for SECS per path, RUNS times.
# Reports requests/s, p50/p99 latency (wrk's; a stream's is its last byte),
# the added p50 and p99 against the direct path of the same run and kind,
# and each server's CPU per request (utime+stime of its process tree from
# /proc); then, over the runs, the range of each figure.
#
#   scripts/peers.sh                       # Windlass and agentic-api, 3 runs
#   PEERS="windlass litellm agentic" scripts/peers.sh
#   PEERS="relay windlass agentic" ...     # also the floor of a hop: a bare TCP
#                                          # relay (windlass-bench's tcp-relay)
#   CONCURRENCY="1 16 64 256" RUNS=1 scripts/peers.sh   # the curve
#   CHAIN=100 scripts/peers.sh             # also: continue a 100-deep chain
#   SMOKE=1 scripts/peers.sh               # 1 s per path: checks the wiring only
#   WINDLASS_ARGS="--config x.toml" ...     # extra `windlass serve` arguments
#   WINDLASS_PG=postgres://u@host:port/postgres ...
#                                          # Windlass on Postgres: a fresh database
#                                          # per run and concurrency (needs psql);
#                                          # e.g. under scripts/postgres.sh with
#                                          # WINDLASS_PG=\$WINDLASS_TEST_PG
#   PEERS="windlass windlass-b" WINDLASS_B_ARGS="--config old.toml" ...
#                                          # A/B: a second Windlass setup, same runs
#   WINDLASS_B_BIN=path/to/old/windlass ...  # ... or a second binary (WINDLASS_BIN:
#                                          # the first one's, default the build's)
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
PEERS="${PEERS:-windlass agentic}"
CONCURRENCY="${CONCURRENCY:-16}"
SECS="${SECS:-10}"
RUNS="${RUNS:-3}"
# Depth of a previous_response_id chain every request of the chain paths
# continues (0: no chain paths).
CHAIN="${CHAIN:-0}"
[ -n "${SMOKE:-}" ] && SECS=1 && RUNS=1
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

relay_bin() {
  RELAY_BIN="$BIN/tcp-relay"
  [ -n "${NO_BUILD:-}" ] && [ -x "$RELAY_BIN" ] && return 0
  local flag=()
  [ "$PROFILE" = release ] && flag=(--release)
  (cd "$ROOT" && CARGO_INCREMENTAL=0 cargo build -q "${flag[@]}" -p windlass-bench --bin tcp-relay)
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
RUN=0
C=16
measure() { # name url body pid
  local name=$1 url=$2 body=$3 pid=${4:-}
  local lua out before after threads=2
  [ "$C" -lt 2 ] && threads=1
  lua=$(lua_for "$body")
  # A short warm-up (connection pools, JIT-less but lazy imports in Python).
  wrk -t$threads -c"$C" -d1s -s "$lua" "$url" >/dev/null 2>&1 || true
  before=$([ -n "$pid" ] && cpu_of "$pid" || echo 0)
  out=$(wrk -t$threads -c"$C" -d"${SECS}s" --timeout 10s --latency -s "$lua" "$url" 2>&1)
  after=$([ -n "$pid" ] && cpu_of "$pid" || echo 0)
  rm -f "$lua"
  local line; line=$(grep '^RESULT' <<<"$out" || echo "RESULT 0 0 0 0")
  read -r _ n errs p50 p99 <<<"$line"
  local cpu_us; cpu_us=$(python3 -c "print(round(($after - $before) * 1e6 / max($n, 1)))")
  local load; load=$(cut -d' ' -f1 /proc/loadavg)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$RUN" "$C" "$name" "$n" "$errs" "$p50" "$p99" "$cpu_us" "$load" |
    tee -a "$RESULTS" >&2
}

# chain_tip base depth: builds a previous_response_id chain of `depth`
# responses through the gateway at `base`; prints the last id.
chain_tip() {
  python3 - "$1" "$2" "$MODEL" "$KEY" <<'PY'
import json, sys, urllib.request
base, depth, model, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
prev = None
for i in range(depth):
    body = {"model": model, "input": f"turn {i}", "store": True}
    if prev:
        body["previous_response_id"] = prev
    req = urllib.request.Request(base + "/v1/responses", json.dumps(body).encode(),
        {"Content-Type": "application/json", "Authorization": "Bearer " + key})
    prev = json.load(urllib.request.urlopen(req))["id"]
print(prev)
PY
}

build
start_upstream
default_reply "{\"text\": \"Hello! This is a short answer from the fake upstream model.\", \"first_byte_delay_ms\": $UPSTREAM_MS}"
UP_BASE="${UPSTREAM%/}"
PROMPT='Say hello to the benchmark.'
CHAT_BODY="{\"model\": \"$MODEL\", \"messages\": [{\"role\": \"user\", \"content\": \"$PROMPT\"}]}"
CHAT_STREAM_BODY="{\"model\": \"$MODEL\", \"stream\": true, \"messages\": [{\"role\": \"user\", \"content\": \"$PROMPT\"}]}"
stored_body() { # store [stream] [previous]
  local extra=""
  [ -n "${2:-}" ] && extra=", \"stream\": $2"
  [ -n "${3:-}" ] && extra="$extra, \"previous_response_id\": \"$3\""
  echo "{\"model\": \"$MODEL\", \"input\": \"$PROMPT\", \"store\": $1$extra}"
}

# PEERS, rotated by the block's number: each block starts with another
# peer, so none always runs first after the previous block's load (a
# Postgres still catching up on its writes measured as the first peer's).
rotated_peers() {
  local -a order
  read -ra order <<<"$PEERS"
  local n=${#order[@]} i
  for ((i = 0; i < n; i++)); do echo "${order[$(((i + BLOCK) % n))]}"; done
}

one_run() {
  measure direct "$UP_BASE/chat/completions" "$CHAT_BODY"
  measure direct-stream "$UP_BASE/chat/completions" "$CHAT_STREAM_BODY"
  for peer in $(rotated_peers); do
    case $peer in
      windlass|windlass-b)
        db="$WORK/$peer.db"; rm -f "$db" "$db-wal" "$db-shm"
        if [ -n "${WINDLASS_PG:-}" ]; then
          name="peers_${peer//-/_}_${RUN}_${C}_$$"
          psql -q "$WINDLASS_PG" -c "CREATE DATABASE $name" >/dev/null
          db="${WINDLASS_PG%/*}/$name"
        fi
        args=${WINDLASS_ARGS:-}
        bin=${WINDLASS_BIN:-$BIN/windlass}
        if [ "$peer" = windlass-b ]; then
          args=${WINDLASS_B_ARGS:-}
          bin=${WINDLASS_B_BIN:-$bin}
        fi
        # shellcheck disable=SC2086
        GATEWAY_BIN=$bin start_gateway "$db" $args
        measure "$peer-stored" "$GW/v1/responses" "$(stored_body true)" "$GW_PID"
        measure "$peer-stored-stream" "$GW/v1/responses" "$(stored_body true true)" "$GW_PID"
        measure "$peer-unstored" "$GW/v1/responses" "$(stored_body false)" "$GW_PID"
        measure "$peer-unstored-stream" "$GW/v1/responses" "$(stored_body false true)" "$GW_PID"
        if [ "$CHAIN" -gt 0 ]; then
          tip=$(chain_tip "$GW" "$CHAIN")
          measure "$peer-chain" "$GW/v1/responses" "$(stored_body true false "$tip")" "$GW_PID"
        fi
        kill "$GW_PID" 2>/dev/null || true
        wait "$GW_PID" 2>/dev/null || true
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
      relay)
        # The floor of a hop: bytes copied between wrk and the upstream by a
        # process on Windlass's runtime, no HTTP parsed (windlass-bench's
        # tcp-relay). What Windlass adds beyond it is its own work.
        relay_bin
        hostport=${UP_BASE#http://}; hostport=${hostport%%/*}
        "$RELAY_BIN" --upstream "$hostport" >"$WORK/relay.json" 2>"$WORK/relay.log" &
        pid=$!; PIDS+=("$pid")
        for _ in $(seq 100); do [ -s "$WORK/relay.json" ] && break; sleep 0.1; done
        relay=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["relay"])' "$WORK/relay.json")
        path=${UP_BASE#http://$hostport}
        measure relay "http://$relay$path/chat/completions" "$CHAT_BODY" "$pid"
        measure relay-stream "http://$relay$path/chat/completions" "$CHAT_STREAM_BODY" "$pid"
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
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
        base="http://127.0.0.1:$port"
        measure agentic-stored "$base/v1/responses" "$(stored_body true)" "$pid"
        measure agentic-stored-stream "$base/v1/responses" "$(stored_body true true)" "$pid"
        if [ "$CHAIN" -gt 0 ]; then
          tip=$(chain_tip "$base" "$CHAIN")
          measure agentic-chain "$base/v1/responses" "$(stored_body true false "$tip")" "$pid"
        fi
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        ;;
    esac
  done
}

BLOCK=0
for RUN in $(seq "$RUNS"); do
  for C in $CONCURRENCY; do
    echo "[peers] run $RUN/$RUNS, concurrency $C, loadavg $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    one_run
    BLOCK=$((BLOCK + 1))
  done
done

python3 "$ROOT/scripts/lib/peers_table.py" "$RESULTS" "$SECS" "$UPSTREAM_MS"
