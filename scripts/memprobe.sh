#!/usr/bin/env bash
# Peak memory of single large requests against the real `windlass serve`
# (a fresh process per case, so VmHWM is that request's peak). Prints a
# Markdown table for RELIABILITY.md: body size, status, peak RSS over the
# idle process, that peak as a multiple of the body, and RSS afterwards
# (what the allocator kept). Usage: scripts/memprobe.sh
source "$(dirname "$0")/lib/gateway.sh"
build
start_upstream
default_reply '{"text": "ok"}'

gen() { # gen NAME: writes $WORK/NAME.json
  python3 - "$1" "$WORK/$1.json" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
def items(n): return [{"role": "user", "content": "w"} for _ in range(n)]
bodies = {
    "small": {"input": "hi"},
    "string_4mib": {"input": "x" * (4 << 20)},
    "string_8mib": {"input": "x" * ((8 << 20) - 64)},
    "string_16mib": {"input": "x" * (16 << 20)},
    "items_10000": {"input": items(10_000)},
    "items_200000": {"input": items(200_000)},
    "items_900000": {"input": items(900_000)},
    "content_1000_parts": {"input": [{"role": "user", "content": [{"type": "input_text", "text": "y" * 1000}] * 1000}]},
}
body = dict(model="m", **bodies[name])
with open(path, "w") as f:
    json.dump(body, f, separators=(",", ":"))
PY
}

echo "| request | body | status | peak RSS over idle | peak / body | RSS after |"
echo "|---|---|---|---|---|---|"
for case in small string_4mib string_8mib string_16mib items_10000 items_200000 items_900000 content_1000_parts; do
  gen "$case"
  db="$WORK/mem-$case.db"; rm -f "$db" "$db-wal" "$db-shm"
  start_gateway "$db"
  # One small request first, so the idle figure includes warmed-up pools.
  curl -s -o /dev/null "$GW/v1/responses" -H 'content-type: application/json' -d '{"model":"m","input":"warm"}'
  sleep 0.5
  idle=$(rss_kb "$GW_PID")
  body=$(size_of "$WORK/$case.json")
  status=$(curl -s -o "$WORK/$case.out" -w '%{http_code}' "$GW/v1/responses" \
    -H 'content-type: application/json' --data-binary "@$WORK/$case.json")
  peak=$(peak_kb "$GW_PID")
  sleep 2
  after=$(rss_kb "$GW_PID")
  over=$(( peak - idle ))
  ratio=$(python3 -c "print(f'{($over*1024)/max($body,1):.1f}x')")
  printf '| %s | %.1f MB | %s | +%d MiB | %s | %d MiB (idle %d MiB) |\n' "$case" \
    "$(python3 -c "print($body/1e6)")" "$status" $(( over / 1024 )) "$ratio" $(( after / 1024 )) $(( idle / 1024 ))
  kill "$GW_PID"; wait "$GW_PID" 2>/dev/null || true
done
