#!/usr/bin/env bash
# What request logs and metrics cost per request, in instructions: each
# configuration of `obs-cost` (crates/windlass-bench/src/bin/obs_cost.rs)
# runs twice under valgrind's cachegrind with two request counts; the
# difference of the instruction totals over the difference of the counts is
# the instructions per request, start-up excluded. Deterministic, so it
# holds on a busy machine. Kernel work (the log write syscalls) is not
# counted: the CPU-time column of a plain run shows it, noisily.
#
#   scripts/obs-cost.sh                # builds the release binary first
#   OBS_COST_BIN=path N1=50 N2=250 scripts/obs-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."

N1=${N1:-100}
N2=${N2:-500}
BIN=${OBS_COST_BIN:-target/release/obs-cost}
if [ -z "${OBS_COST_BIN:-}" ]; then
  cargo build --release -q -p windlass-bench --bin obs-cost
fi
command -v valgrind >/dev/null || { echo "obs-cost.sh: valgrind is needed (apt-get install valgrind)" >&2; exit 1; }

# Instructions of one run of $1 requests with the remaining arguments.
instr() {
  local n=$1
  shift
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$BIN" --warmup 20 --requests "$n" "$@" 2>&1 >/dev/null |
    awk '/I +refs:/ { gsub(",", "", $NF); print $NF }'
}

per_request() {
  local a b
  a=$(instr "$N1" "$@")
  b=$(instr "$N2" "$@")
  echo $(((b - a) / (N2 - N1)))
}

CONFIGS=${CONFIGS:-"direct|--mode direct
off|--no-metrics
metrics|
logs|--no-metrics --log text
both|--log text
both-json|--log json
stream-direct|--mode direct --stream
stream-off|--no-metrics --stream
stream-both|--log text --stream"}

printf '%-14s %s\n' configuration instructions/request
while IFS='|' read -r name args; do
  # shellcheck disable=SC2086
  printf '%-14s %s\n' "$name" "$(per_request $args)"
done <<<"$CONFIGS"
