#!/usr/bin/env bash
# Installs what the observability tests need into .venv-test (made by
# scripts/client-fixtures.sh): `opentelemetry-proto` for the real OTLP/HTTP
# receiver of tests/python/test_otlp_traces.py. Pinned; idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

OTEL_PROTO=1.45.2

VENV=.venv-test
[ -x "$VENV/bin/python" ] || ./scripts/client-fixtures.sh
"$VENV/bin/pip" install -q --disable-pip-version-check "opentelemetry-proto==$OTEL_PROTO"
