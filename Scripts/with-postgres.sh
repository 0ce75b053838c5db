#!/usr/bin/env bash
# Runs a command beside a PostgreSQL server of its own: initdb in a new temporary directory,
# the server started on a free port of 127.0.0.1 with PostgreSQL's default settings (fsync and
# synchronous commit on), a role with a random password and databases for it, named by
# POSTGRES_DATABASES (default: one, "bench"). The command finds the server in
# LMDBREALM_POSTGRES_URL (postgres://bench:PASSWORD@127.0.0.1:PORT/ - a database name follows);
# the server is stopped and its directory removed when the command ends. initdb and postgres
# refuse to run as root: as root, they run as the postgres account of Debian's package.
#
#     POSTGRES_DATABASES="a b" bash Scripts/with-postgres.sh swift run -c release --package-path Benchmarks SyncBenchmarks
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bin" ]; then
    echo "error: PostgreSQL is missing: sudo apt-get install postgresql" >&2
    exit 1
fi
dir=$(mktemp -d /tmp/lmdbrealm-pg-bench-XXXXXX)
server=()
if [ "$(id -u)" = 0 ]; then
    chown postgres: "$dir"
    server=(setpriv --reuid=postgres --regid=postgres --init-groups)
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
password=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
"${server[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 >"$dir/initdb.log"
cat >>"$dir/data/postgresql.conf" <<SETTINGS
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
SETTINGS
"${server[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w start >/dev/null
trap '"${server[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null; rm -rf "$dir"' EXIT
"$bin/psql" -X -q -h "$dir" -p "$port" -U postgres -d postgres -c "CREATE ROLE bench LOGIN PASSWORD '$password'"
for database in ${POSTGRES_DATABASES:-bench}; do
    "$bin/psql" -X -q -h "$dir" -p "$port" -U postgres -d postgres -c "CREATE DATABASE $database OWNER bench"
done
export LMDBREALM_POSTGRES_URL="postgres://bench:$password@127.0.0.1:$port/"
# The superuser, through the server's Unix socket (no password), for what only it may do.
export LMDBREALM_POSTGRES_SOCKET="$dir" LMDBREALM_PSQL="$bin/psql"
"$@"
