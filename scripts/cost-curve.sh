#!/usr/bin/env bash
# The cost curve of BENCHMARKS.md: windlass-bench run once per point of
# each axis (concurrency, input size, history length, chain depth, tool
# calls per turn, turns per response, idle streams), JSON kept in
# .scratch/curve/, then one Markdown table per axis on stdout.
#
#   scripts/cost-curve.sh              # every axis (~15 min on 2 cores)
#   AXES="concurrency input" scripts/cost-curve.sh
#   SECS=2 ROUNDS=1 scripts/cost-curve.sh   # shorter phases (default 3 s, 1 round)
#
# Not run by CI. Each figure's exact command is printed above its table.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${OUT:-$ROOT/.scratch/curve}"
SECS="${SECS:-3}"
ROUNDS="${ROUNDS:-1}"
AXES="${AXES:-ceiling concurrency input history chain tools turns idle}"
mkdir -p "$OUT"
if [ -z "${BENCH:-}" ]; then
  (cd "$ROOT" && CARGO_INCREMENTAL=0 cargo build -q --release -p windlass-bench)
  BENCH="$ROOT/target/release/windlass-bench"
fi
# 10,000 idle streams hold ~4 sockets each in this one process.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true

run() { # name args...
  local name=$1; shift
  local cmd=(windlass-bench --json --duration-secs "$SECS" --rounds "$ROUNDS" "$@")
  echo "\$ ${cmd[*]}" >"$OUT/$name.cmd"
  echo "[cost-curve] $name: ${cmd[*]}" >&2
  "$BENCH" "${cmd[@]:1}" >"$OUT/$name.json" 2>"$OUT/$name.log" ||
    { echo "[cost-curve] $name FAILED (see $OUT/$name.log)" >&2; return 0; }
}

for axis in $AXES; do
  case $axis in
    ceiling) run ceiling-c64 --scenario json --upstream-ms 0 --concurrency 64
             run ceiling-c64-unstored --scenario json --upstream-ms 0 --concurrency 64 --unstored ;;
    concurrency) for c in 1 16 64 256 1024; do run "conc-$c" --scenario json --concurrency "$c"; done ;;
    input) for b in 1024 16384 131072 1048576; do run "input-$b" --scenario json --input-bytes "$b"; done ;;
    history) for n in 10 100 1000 10000; do run "history-$n" --scenario json --history-items "$n" --concurrency 4; done ;;
    chain) for d in 1 10 100 1000; do run "chain-$d" --scenario chain --chain-depth "$d"; done ;;
    tools) for t in 1 8 64; do run "tools-$t" --scenario loop --turns 2 --tool-calls "$t" --tool-ms 10; done ;;
    turns) for t in 1 10 50; do run "turns-$t" --scenario loop --turns "$t" --tool-calls 1 --tool-ms 1 --concurrency 4; done ;;
    idle) for n in 1000 4000 10000; do run "idle-$n" --scenario idle --idle-streams "$n"; done ;;
  esac
done
python3 "$ROOT/scripts/lib/curve_table.py" "$OUT"
