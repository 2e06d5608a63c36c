#!/usr/bin/env bash
# The latency curve (not run by CI): stored JSON and stored streams at
# concurrency 1, 16, 64 and 256, and a request continuing a 100-deep
# previous_response_id chain, each on SQLite and on Postgres, through
# windlass-bench (Windlass against the same upstream reached directly, in
# one run). One JSON file per point in .scratch/latency-curve/, then a
# Markdown table of added p50/p99, CPU per request and the save timings.
#
#   scripts/latency-curve.sh                  # both stores (Postgres via scripts/postgres.sh)
#   STORES=sqlite CONC="1 64" scripts/latency-curve.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/.scratch/latency-curve"
mkdir -p "$OUT"
STORES="${STORES:-sqlite postgres}"
CONC="${CONC:-1 16 64 256}"
SECS="${SECS:-3}"
ROUNDS="${ROUNDS:-2}"
(cd "$ROOT" && CARGO_INCREMENTAL=0 cargo build -q --release -p windlass-bench)
BENCH="$ROOT/target/release/windlass-bench"

points() { # store
  local store=$1
  for c in $CONC; do
    "$BENCH" --json --scenario json --concurrency "$c" --duration-secs "$SECS" --rounds "$ROUNDS" \
      >"$OUT/$store-json-c$c.json" 2>"$OUT/$store-json-c$c.log"
    # Streams of 32 tokens, 1 ms apart, after the 20 ms first byte.
    "$BENCH" --json --scenario stream --tokens 32 --concurrency "$c" --duration-secs "$SECS" \
      --rounds "$ROUNDS" >"$OUT/$store-stream-c$c.json" 2>"$OUT/$store-stream-c$c.log"
    echo "latency-curve: $store c=$c done (loadavg $(cut -d' ' -f1 /proc/loadavg))" >&2
  done
  "$BENCH" --json --scenario chain --chain-depth 100 --duration-secs "$SECS" \
    >"$OUT/$store-chain.json" 2>"$OUT/$store-chain.log"
}

for store in $STORES; do
  case $store in
    sqlite) unset WINDLASS_BENCH_DB; points sqlite ;;
    postgres)
      if [ -z "${WINDLASS_TEST_PG:-}" ]; then
        STORES=postgres CONC="$CONC" SECS="$SECS" ROUNDS="$ROUNDS" \
          "$ROOT/scripts/postgres.sh" "$0"
        continue
      fi
      export WINDLASS_BENCH_DB="$WINDLASS_TEST_PG"
      points postgres ;;
  esac
done

python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
def rows(doc):
    return {(r["scenario"], r["metric"]): r for r in doc["rows"]}
print("| store | scenario | c | added p50 ms | added p99 ms | CPU/request µs (threads) | save commit p99 ms | loadavg |")
print("|---|---|---|---|---|---|---|---|")
for f in sorted(os.listdir(out)):
    if not f.endswith(".json"):
        continue
    doc = json.load(open(os.path.join(out, f)))
    r, meta = rows(doc), doc["meta"]
    store = f.split("-")[0]
    def get(s, m, col="added"):
        v = r.get((s, m), {}).get(col)
        return "" if v is None else f"{v:+.2f}" if col == "added" else f"{v:.2f}"
    if "-json-" in f:
        print(f"| {store} | json | {meta['concurrency']} | {get('json','latency p50')} | {get('json','latency p99')} | "
              f"{get('json','Windlass CPU/request (its threads)')} | {get('json','save: group commit p99','windlass')} | {meta['loadavg'].split()[0]} |")
    elif "-stream-" in f:
        print(f"| {store} | stream (last byte) | {meta['concurrency']} | {get('stream','time to last byte p50')} | "
              f"{get('stream','time to last byte p99')} | {get('stream','Windlass CPU/stream (its threads)')} | "
              f"{get('stream','save: group commit p99','windlass')} | {meta['loadavg'].split()[0]} |")
    elif "-chain" in f:
        print(f"| {store} | chain depth 100 | 1 | {get('chain','request latency depth 100 p50')} | "
              f"{get('chain','request latency depth 100 p99')} | | | {meta['loadavg'].split()[0]} |")
PY
