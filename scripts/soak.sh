#!/usr/bin/env bash
# Sustained stored writes against the real `windlass serve`: wrk at
# CONCURRENCY (64) for DURATION seconds (180), the upstream answering after
# 20 ms. Samples RSS, database and WAL size every 5 s into
# $WORK/soak.csv and prints the summary RELIABILITY.md quotes.
# Usage: [DURATION=180] [CONCURRENCY=64] [WAL_LIMIT=67108864] scripts/soak.sh
source "$(dirname "$0")/lib/gateway.sh"
DURATION="${DURATION:-180}"
CONCURRENCY="${CONCURRENCY:-64}"
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
build
start_upstream
default_reply '{"text": "soak answer", "first_byte_delay_ms": 20}'
db="$WORK/soak.db"; rm -f "$db" "$db-wal" "$db-shm"
cfg="$WORK/soak.toml"
printf '[store]\nwal_limit_bytes = %s\nsize_log_interval_secs = 10\n' "${WAL_LIMIT:-67108864}" >"$cfg"
start_gateway "$db" --config "$cfg"

csv="$WORK/soak.csv"
echo "t_s,rss_kb,db_bytes,wal_bytes" >"$csv"
sample() { echo "$1,$(rss_kb "$GW_PID"),$(size_of "$db"),$(size_of "$db-wal")" >>"$csv"; }
sample 0
wrk -t2 -c"$CONCURRENCY" -d"${DURATION}s" --timeout 30s -s "$ROOT/scripts/lib/post.lua" \
  "$GW/v1/responses" >"$WORK/soak-wrk.txt" 2>&1 &
WRK=$!
t=0
while kill -0 "$WRK" 2>/dev/null; do
  sleep 5; t=$((t + 5)); sample "$t"
done
sleep 5; sample "$((t + 5))"   # idle after the load
cat "$WORK/soak-wrk.txt"
python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
mb = lambda b: int(b) / 1e6
print(f"samples: {len(rows)}")
print(f"max WAL: {max(mb(r['wal_bytes']) for r in rows):.1f} MB, WAL at end: {mb(rows[-1]['wal_bytes']):.1f} MB")
print(f"database at end: {mb(rows[-1]['db_bytes']):.1f} MB")
print(f"RSS: start {int(rows[0]['rss_kb'])//1024} MiB, max {max(int(r['rss_kb']) for r in rows)//1024} MiB, end {int(rows[-1]['rss_kb'])//1024} MiB")
PY
echo "stored responses: $(sqlite3 "$db" 'SELECT COUNT(*) FROM responses')"
