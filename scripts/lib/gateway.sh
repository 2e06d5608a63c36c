# Shared by scripts/faults.sh, soak.sh and memprobe.sh: build the binaries,
# start the scripted upstream and a real `windlass serve`, read process
# sizes. Source it; it sets WORK (a scratch folder) and cleans up on exit.
#
# PROFILE=release uses release builds (default: debug, as the figures in
# RELIABILITY.md were taken on a shared 2-core machine). FEATURES is passed
# to cargo for the windlass binary (e.g. FEATURES=system-alloc for the
# allocator A/B).

set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PROFILE="${PROFILE:-debug}"
WORK="${WORK:-$ROOT/.scratch/reliability}"
mkdir -p "$WORK"
PIDS=()

cleanup() {
  for p in "${PIDS[@]:-}"; do
    [ -n "$p" ] && kill "$p" 2>/dev/null || true
  done
}
trap cleanup EXIT

build() {
  # NO_BUILD=1: reuse the binaries already in target/$PROFILE (e.g. while
  # the sources move on, or on a machine too busy to rebuild).
  if [ -n "${NO_BUILD:-}" ]; then BIN="$ROOT/target/$PROFILE"; return 0; fi
  local flag=()
  [ "$PROFILE" = release ] && flag=(--release)
  (cd "$ROOT" && CARGO_INCREMENTAL=0 cargo build -q "${flag[@]}" -p windlass-testkit --bin windlass-fake-upstream)
  (cd "$ROOT" && CARGO_INCREMENTAL=0 cargo build -q "${flag[@]}" -p windlass-cli --bin windlass \
    ${FEATURES:+--features "$FEATURES"})
  BIN="$ROOT/target/$PROFILE"
}

# Starts the scripted upstream; sets UPSTREAM and CONTROL.
start_upstream() {
  local out="$WORK/upstream.json"
  "$BIN/windlass-fake-upstream" >"$out" 2>"$WORK/upstream.log" &
  PIDS+=($!)
  for _ in $(seq 100); do [ -s "$out" ] && break; sleep 0.1; done
  UPSTREAM=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["upstream"])' "$out")
  CONTROL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["control"])' "$out")
}

# default_reply JSON: the upstream's reply to every request without a queued one.
default_reply() {
  curl -sf -X POST "$CONTROL/default" -H 'content-type: application/json' -d "$1" >/dev/null
}

queue_replies() {
  curl -sf -X POST "$CONTROL/replies" -H 'content-type: application/json' -d "$1" >/dev/null
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_gateway DB [extra serve args...]; sets GW (URL) and GW_PID.
# GATEWAY_BIN: another `windlass` binary than the one just built (an A/B).
start_gateway() {
  local db=$1; shift
  local port; port=$(free_port)
  GW="http://127.0.0.1:$port"
  "${GATEWAY_BIN:-$BIN/windlass}" serve --upstream "$UPSTREAM" --listen "127.0.0.1:$port" --db "$db" "$@" \
    >>"$WORK/gateway.log" 2>&1 &
  GW_PID=$!
  PIDS+=("$GW_PID")
  for _ in $(seq 200); do
    curl -sf "$GW/health" >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "gateway did not start; see $WORK/gateway.log" >&2
  return 1
}

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
peak_kb() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }
