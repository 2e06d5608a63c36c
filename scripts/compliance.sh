#!/usr/bin/env bash
# Runs the OpenResponses compliance suite (third-party, Apache-2.0; kept beside
# the project in ../shared/openresponses-compliance, or where
# WINDLASS_COMPLIANCE_SUITE points) against a real `windlass serve` in front of
# an upstream, and fails unless every test that does not need a vision model
# passes. The suite's folder is read-only: it is copied into the gitignored
# .tools/compliance first, and its dependencies installed there.
#
#   scripts/compliance.sh                 # scripted fake upstream (CI)
#   scripts/compliance.sh --upstream URL --model NAME
#                                         # a real model server; prints the
#                                         # count, fails only if the suite
#                                         # cannot run
#
# With the scripted upstream (windlass-fake-upstream --assistant, which
# answers from each request like a small obliging model) the script also
# checks that the suite's image input reached the upstream as an image part.
# Needs cargo, node/npm (bun is installed into .tools/bun from npm).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

REAL_UPSTREAM=""
MODEL="fake-model"
while [ $# -gt 0 ]; do
  case "$1" in
    --upstream) REAL_UPSTREAM="$2"; shift 2 ;;
    --model) MODEL="$2"; shift 2 ;;
    *) echo "compliance: unknown argument $1" >&2; exit 2 ;;
  esac
done

# The one test that needs a model that sees images.
VISION_TESTS="image-input"
BUN_VERSION=1.4.5
# Beside the project; a clone elsewhere (CI's, under /tmp) finds the
# workplace's shared copy.
SUITE_SRC=${WINDLASS_COMPLIANCE_SUITE:-}
for d in "$ROOT/../shared/openresponses-compliance" /work/shared/openresponses-compliance; do
  [ -z "$SUITE_SRC" ] && [ -f "$d/bin/compliance-test.ts" ] && SUITE_SRC=$d
done
SUITE_SRC=${SUITE_SRC:-$ROOT/../shared/openresponses-compliance}
if [ ! -f "$SUITE_SRC/bin/compliance-test.ts" ]; then
  echo "compliance: no suite at $SUITE_SRC (set WINDLASS_COMPLIANCE_SUITE)" >&2
  exit 1
fi
VENDOR=.tools/compliance
rm -rf "$VENDOR" && mkdir -p "$VENDOR"
cp -r "$SUITE_SRC"/. "$VENDOR"/
chmod -R u+w "$VENDOR"

BUN=.tools/bun/node_modules/.bin/bun
if [ "$("$BUN" --version 2>/dev/null)" != "$BUN_VERSION" ]; then
  command -v npm >/dev/null || {
    echo "compliance: npm missing; installing nodejs and npm" >&2
    apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
  }
  echo "compliance: installing bun@$BUN_VERSION from npm" >&2
  mkdir -p .tools/bun
  npm install --prefix .tools/bun --no-audit --no-fund --silent "bun@$BUN_VERSION"
fi
(cd "$VENDOR" && "$ROOT/$BUN" install --frozen-lockfile --silent)

cargo build -q -p windlass-cli -p windlass-testkit --bin windlass --bin windlass-fake-upstream
TARGET=${CARGO_TARGET_DIR:-target}/debug

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

CONTROL=""
if [ -z "$REAL_UPSTREAM" ]; then
  "$TARGET/windlass-fake-upstream" --assistant >"$WORK/fake.json" 2>"$WORK/fake.log" &
  PIDS+=($!)
  for _ in $(seq 100); do [ -s "$WORK/fake.json" ] && break; sleep 0.1; done
  UPSTREAM=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["upstream"])' "$WORK/fake.json")
  CONTROL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["control"])' "$WORK/fake.json")
else
  UPSTREAM="$REAL_UPSTREAM"
fi

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
KEY="compliance-key"
# A slow real model (2 CPU cores) needs minutes to the first byte when busy.
cat >"$WORK/windlass.toml" <<TOML
[upstream]
first_byte_timeout_ms = 300000
idle_timeout_ms = 300000
TOML
"$TARGET/windlass" serve --config "$WORK/windlass.toml" --listen "127.0.0.1:$PORT" \
  --db "$WORK/windlass.db" --upstream "$UPSTREAM" --api-keys "$KEY" >"$WORK/windlass.log" 2>&1 &
PIDS+=($!)
fetch() { python3 -c 'import sys,urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1], timeout=5).read())' "$1"; }
for _ in $(seq 100); do
  fetch "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
  sleep 0.1
done

suite() {
  (cd "$VENDOR" && "$ROOT/$BUN" run bin/compliance-test.ts \
    --base-url "http://127.0.0.1:$PORT/v1" --api-key "$KEY" --model "$MODEL" --json "$@") || true
}
if [ -z "$REAL_UPSTREAM" ]; then
  suite >"$WORK/results.json"
else
  # The suite starts all its tests at once, and its WebSocket tests give up
  # after 30 s: a small real model on a CPU answers them one at a time.
  IDS=$(grep -o '^    id: "[a-z-]*"' "$VENDOR/src/lib/compliance-tests.ts" | cut -d'"' -f2)
  for id in $IDS; do suite --filter "$id" >"$WORK/one-$id.json"; done
  python3 - "$WORK" $IDS >"$WORK/results.json" <<'EOF'
import json, sys
work, ids = sys.argv[1], sys.argv[2:]
results = []
for i in ids:
    try:
        results += json.load(open(f"{work}/one-{i}.json"))["results"]
    except ValueError:
        results.append({"id": i, "status": "failed", "errors": ["the suite printed no JSON"]})
count = lambda s: sum(r["status"] == s for r in results)
print(json.dumps({"summary": {"passed": count("passed"), "failed": count("failed"),
    "skipped": count("skipped"), "total": len(results)}, "results": results}))
EOF
fi

python3 - "$WORK/results.json" "$VISION_TESTS" "${REAL_UPSTREAM:+real}" <<'EOF'
import json, sys
path, vision, real = sys.argv[1], set(sys.argv[2].split(",")), sys.argv[3] == "real"
try:
    data = json.load(open(path))
except ValueError:
    print("compliance: the suite printed no JSON:", open(path).read()[-2000:])
    sys.exit(1)
results = data["results"]
for r in results:
    mark = {"passed": "PASS", "failed": "FAIL"}.get(r["status"], r["status"].upper())
    print(f"  {mark:5} {r['id']}")
    if r["status"] != "passed":
        for e in (r.get("errors") or [])[:5]:
            print(f"          {e}")
s = data["summary"]
print(f"compliance: {s['passed']}/{s['total']} passed, {s['failed']} failed, {s['skipped']} skipped")
bad = [r["id"] for r in results if r["status"] != "passed" and r["id"] not in vision]
if bad and not real:
    print("compliance: failing non-vision tests:", ", ".join(bad))
    sys.exit(1)
EOF

if [ -n "$CONTROL" ]; then
  # The suite's image must reach the upstream as an image part, unchanged.
  fetch "$CONTROL/requests" >"$WORK/requests.json"
  python3 - "$WORK/requests.json" <<'EOF'
import json, sys
requests = json.load(open(sys.argv[1]))
def image_parts(req):
    for m in req.get("messages", []) if isinstance(req, dict) else []:
        if isinstance(m.get("content"), list):
            for p in m["content"]:
                if p.get("type") == "image_url":
                    yield p["image_url"]["url"]
urls = [u for r in requests for u in image_parts(r)]
if not any(u.startswith("data:image/png;base64,iVBORw0KGgo") for u in urls):
    print("compliance: the image input never reached the upstream as an image part")
    sys.exit(1)
print("compliance: the image input reached the upstream as an image_url part")
EOF
fi
