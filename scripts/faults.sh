#!/usr/bin/env bash
# Fault injection against the real `windlass serve` and the scripted
# upstream: upstream errors and cuts, an MCP server that dies, a client that
# hangs up, kill -9 under load (counting acknowledged-but-lost responses),
# SIGTERM with a response running. Prints one PASS/FAIL line per case and
# exits non-zero on any FAIL. Usage: [LOAD_SECS=8] scripts/faults.sh
source "$(dirname "$0")/lib/gateway.sh"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
build
start_upstream
default_reply '{"text": "fine"}'
db="$WORK/faults.db"; rm -f "$db" "$db-wal" "$db-shm"
start_gateway "$db" --mcp-allow-host 127.0.0.1
FAILS=0
check() { # check NAME CONDITION DETAIL
  if eval "$2"; then echo "PASS $1: $3"; else echo "FAIL $1: $3"; FAILS=$((FAILS + 1)); fi
}
post() { # post BODY -> sets CODE and OUT
  CODE=$(curl -s -o "$WORK/out.json" -w '%{http_code}' "$GW/v1/responses" \
    -H 'content-type: application/json' -d "$1")
  OUT=$(cat "$WORK/out.json")
}
healthy() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$GW/health")" = 200 ]; }
sql() { sqlite3 "$db" "$1"; }

# --- upstream errors and cuts
queue_replies '[{"error": {"status": 500, "message": "boom"}}]'
post '{"model":"m","input":"x"}'
check upstream_500 '[ "$CODE" = 502 ] && grep -q upstream_error <<<"$OUT"' "$CODE $OUT"
queue_replies '[{"error": {"status": 401, "message": "Incorrect API key provided: sk-up***xyz"}}]'
post '{"model":"m","input":"x"}'
check upstream_401 '[ "$CODE" = 502 ] && grep -q upstream_auth_failed <<<"$OUT" && ! grep -q sk-up <<<"$OUT"' "$CODE $OUT"
# (cuts apply to streamed upstream replies: the client streams too)
queue_replies '[{"text": "a long answer cut short", "chunk_chars": 2, "cut_after": 3}]'
OUT=$(curl -sN "$GW/v1/responses" -H 'content-type: application/json' -d '{"model":"m","input":"x","stream":true}')
check upstream_cut 'grep -q response.failed <<<"$OUT" && grep -q upstream_interrupted <<<"$OUT"' \
  "stream ends $(grep -o 'event: response\.[a-z_]*' <<<"$OUT" | tail -1), code $(grep -o 'upstream_[a-z]*' <<<"$OUT" | head -1)"
check healthy_after_upstream_faults healthy "/health 200"

# --- an MCP server that accepts and dies at once (a crash on connect)
mcp_port=$(free_port)
python3 - "$mcp_port" >"$WORK/mcp-crash.log" 2>&1 <<'PY' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
while True:
    c, _ = s.accept(); c.recv(65536); c.close()
PY
PIDS+=($!)
sleep 0.3
post "{\"model\":\"m\",\"input\":\"x\",\"tools\":[{\"type\":\"mcp\",\"server_label\":\"crash\",\"server_url\":\"http://127.0.0.1:$mcp_port/mcp\",\"require_approval\":\"never\"}]}"
check mcp_crash '[ "${CODE:0:1}" = 4 ] && grep -q "\"error\"" <<<"$OUT"' "$CODE $(head -c 200 <<<"$OUT")"
check healthy_after_mcp_crash healthy "/health 200"

# --- a client that hangs up: the run is cancelled and stored as such
before=$(sql "SELECT COUNT(*) FROM responses WHERE json_extract(body,'$.status')='cancelled'")
queue_replies '[{"text": "slow", "first_byte_delay_ms": 3000}]'
curl -s -m 0.5 "$GW/v1/responses" -H 'content-type: application/json' -d '{"model":"m","input":"bye"}' >/dev/null || true
after=$before
for _ in $(seq 50); do
  after=$(sql "SELECT COUNT(*) FROM responses WHERE json_extract(body,'$.status')='cancelled'")
  [ "$after" -gt "$before" ] && break; sleep 0.2
done
check client_disconnect '[ "$after" -gt "$before" ]' "cancelled responses $before -> $after"

# --- kill -9 under load: every acknowledged (200) response must survive
rm -f "$WORK"/acked.*
default_reply '{"text": "under load", "first_byte_delay_ms": 10}'
LOAD_SECS="${LOAD_SECS:-8}"
IDS_FILE="$WORK/acked" wrk -t2 -c16 -d"${LOAD_SECS}s" --timeout 5s -s "$ROOT/scripts/lib/post.lua" \
  "$GW/v1/responses" >"$WORK/kill9-wrk.txt" 2>&1 &
WRK=$!
sleep $((LOAD_SECS / 2))
kill -9 "$GW_PID"
wait "$WRK" 2>/dev/null || true
start_gateway "$db" --mcp-allow-host 127.0.0.1
acked=$(cat "$WORK"/acked.* 2>/dev/null | sort -u | wc -l)
lost=0
while read -r id; do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$GW/v1/responses/$id")" = 200 ] || lost=$((lost + 1))
done < <(cat "$WORK"/acked.* 2>/dev/null | sort -u)
check kill9_under_load '[ "$acked" -gt 0 ] && [ "$lost" = 0 ]' "$acked acknowledged, $lost lost"

# --- SIGTERM with a streaming response running: it ends cancelled, stored
queue_replies '[{"text": "a b c d e f g h i j k l m n o p", "chunk_chars": 2, "delay_ms": 400}]'
curl -sN "$GW/v1/responses" -H 'content-type: application/json' \
  -d '{"model":"m","input":"stream","stream":true}' >"$WORK/sigterm.sse" &
CURL=$!
for _ in $(seq 50); do grep -q response.created "$WORK/sigterm.sse" 2>/dev/null && break; sleep 0.1; done
rid=$(grep -o '"id":"resp_[^"]*"' "$WORK/sigterm.sse" | head -1 | cut -d'"' -f4)
start=$(date +%s.%N)
kill -TERM "$GW_PID"
wait "$GW_PID"; rc=$?
took=$(python3 -c "print(f'{$(date +%s.%N) - $start:.2f}')")
wait "$CURL" 2>/dev/null || true
status=$(sql "SELECT json_extract(body,'$.status') FROM responses WHERE id='$rid'")
check sigterm '[ "$rc" = 0 ] && [ "$status" = cancelled ]' "exit $rc after ${took}s; $rid stored as '$status'"

echo "faults: $FAILS failed"
[ "$FAILS" = 0 ]
