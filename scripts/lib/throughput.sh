#!/usr/bin/env bash
# Stored-create throughput and RSS of the real binary for SECS (30) at
# CONCURRENCY (16), upstream answering at once: the allocator A/B of
# RELIABILITY.md (run with and without FEATURES=system-alloc).
source "$(dirname "$0")/gateway.sh"
build
start_upstream
default_reply '{"text": "ok"}'
db="$WORK/tp.db"; rm -f "$db" "$db-wal" "$db-shm"
start_gateway "$db"
wrk -t2 -c"${CONCURRENCY:-16}" -d"${SECS:-30}s" -s "$ROOT/scripts/lib/post.lua" "$GW/v1/responses" |
  grep -E "Requests/sec|Latency|Non-2xx"
echo "RSS after: $(( $(rss_kb "$GW_PID") / 1024 )) MiB, peak $(( $(peak_kb "$GW_PID") / 1024 )) MiB"
