#!/usr/bin/env bash
# Packaging checks: what an embedder or a crates.io user gets.
#  1. The SDK (`windlass`) without default features builds no HTTP server
#     (axum), no argument parser (clap) and no bundled SQLite
#     (libsqlite3-sys), and its tests pass there. With its default features
#     it still builds no argument parser, allocator or OTLP exporter: those
#     are the binary's (`windlass-cli`).
#  2. Every published crate packages (`cargo publish --dry-run`, nothing is
#     uploaded).
#  3. `rust-version` in Cargo.toml is at least every dependency's own
#     `rust-version`, so the minimum we state is not a lie. CI cannot
#     download another toolchain to build with exactly that version; clippy's
#     `incompatible_msrv` lint (on by default, run by .ci/run) reads the same
#     `rust-version` and refuses std APIs stabilised after it.
#  4. `cargo install --path crates/windlass-cli` installs a working
#     `windlass` (into a temporary root).
#  5. The Dockerfile and the Kubernetes manifests (scripts/check-deploy.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_INCREMENTAL=0

echo "== windlass without default features: no axum, clap or libsqlite3-sys"
heavy=$(cargo tree -p windlass --no-default-features -e normal --prefix none \
  | grep -E '^(axum|clap|libsqlite3-sys) ' || true)
if [ -n "$heavy" ]; then
  echo "windlass --no-default-features still pulls in:" >&2
  echo "$heavy" | sort -u >&2
  exit 1
fi
cargo check -q -p windlass --no-default-features
# The SDK works there too: its tests against the scripted fake upstream
# (tests/sdk; its MCP module needs the `mcp` feature).
cargo test -q -p windlass --no-default-features --test sdk

echo "== windlass with default features: none of the binary's dependencies"
binary_only=$(cargo tree -p windlass -e normal --prefix none \
  | grep -E '^(clap|mimalloc|opentelemetry|toml) ' || true)
if [ -n "$binary_only" ]; then
  echo "windlass (the SDK) pulls in what only the binary needs:" >&2
  echo "$binary_only" | sort -u >&2
  exit 1
fi

echo "== rust-version covers every dependency"
cargo metadata --format-version 1 | python3 -c '
import json, sys

def ver(v):
    return tuple(int(x) for x in v.split(".")) + (0,) * (3 - len(v.split(".")))

meta = json.load(sys.stdin)
members = set(meta["workspace_members"])
ours = {p["rust_version"] for p in meta["packages"] if p["id"] in members}
if len(ours) != 1 or None in ours:
    sys.exit(f"workspace crates disagree on rust-version: {sorted(map(str, ours))}")
ours = ours.pop()
used = {n["id"] for n in meta["resolve"]["nodes"]}
newer = sorted(
    (p["name"], p["version"], p["rust_version"])
    for p in meta["packages"]
    if p["id"] in used and p["rust_version"] and ver(p["rust_version"]) > ver(ours)
)
for name, version, rv in newer:
    print(f"{name} {version} needs Rust {rv}", file=sys.stderr)
if newer:
    sys.exit(f"rust-version {ours} is below what the dependencies need")
print(f"rust-version {ours}: ok")
'

echo "== cargo publish --dry-run (published crates)"
# --no-verify: building each packaged crate again against the registry would
# rebuild the whole tree; the workspace build above and the tests cover it.
# Crates that depend on not-yet-published siblings resolve them from the
# workspace (cargo's multi-package publish).
cargo publish --workspace --dry-run --no-verify --allow-dirty -q

echo "== cargo install --path crates/windlass-cli (temporary root)"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
# --debug and the workspace's target dir reuse the test build; what is
# checked is that the package installs its binary, not the optimiser.
cargo install -q --locked --debug --path crates/windlass-cli --root "$root" --target-dir target
"$root/bin/windlass" --version
"$root/bin/windlass" serve --help | grep -q -- "--upstream"

./scripts/check-deploy.sh
echo "packaging: ok"
