#!/usr/bin/env bash
# The whole test suite: Rust unit and integration tests (real HTTP, SQLite
# files, the scripted upstream, async-openai), then the real OpenAI clients
# against the real `windlass` binary: the Python SDK, the Agents SDK and the
# Codex CLI, with default settings. Installs what it needs into gitignored
# folders (scripts/mcp-fixtures.sh, scripts/client-fixtures.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

# The built-in `shell` tool's tests run the real sandbox (bubblewrap).
if ! command -v bwrap >/dev/null; then
  echo "bwrap missing; installing bubblewrap" >&2
  apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null
fi

cargo build --workspace --bins
./scripts/mcp-fixtures.sh
# A throwaway Postgres (WINDLASS_TEST_PG) for the Postgres store, replica
# and cancel-bus tests; installs Debian's postgresql when missing.
# With TLS on (a test CA, a cert-only role) for the Postgres TLS tests;
# connections without sslmode still work (prefer).
WINDLASS_PG_TLS=1 ./scripts/postgres.sh cargo test --workspace
# The vector store tests again on a server with pgvector (similarity in the
# database; the run above covers the fallback without it).
WINDLASS_PG_VECTOR=1 ./scripts/postgres.sh cargo test -p windlass-store --features postgres --test vector_stores
# Retrieval against the real embedding model (all-MiniLM-L6-v2 from PyPI,
# served on loopback for the run): embeddings by meaning, hybrid recall@5.
./scripts/embed-server.sh cargo test -p windlass-retrieval --test quality

./scripts/client-fixtures.sh
./scripts/obs-fixtures.sh
(cd tests/python && ../../.venv-test/bin/python -m pytest -q)
# Files, vector stores and /v1/embeddings through the OpenAI SDK against the
# real embedding model (hybrid stores); the run above covers keyword-only.
./scripts/embed-server.sh bash -c 'cd tests/python && ../../.venv-test/bin/python -m pytest -q test_resources.py'
./scripts/embed-server.sh cargo test -p windlass-cli --test resources embeddings
