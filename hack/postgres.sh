#!/usr/bin/env bash
# postgres.sh — a throwaway PostgreSQL server for the edge store's tests (and for trying PostgreSQL mode).
#
#   hack/postgres.sh install          install Debian's postgresql package when no server binaries are found
#   hack/postgres.sh bindir           print the directory holding initdb / pg_ctl / postgres
#   hack/postgres.sh start DIR PORT   initdb a cluster in DIR (an empty directory), start it on 127.0.0.1:PORT
#                                     with its unix socket in DIR, create database "tuna", print the connection URL
#   hack/postgres.sh restart DIR PORT start again the server initdb'd in DIR (after it was stopped or killed)
#   hack/postgres.sh stop DIR         stop the server in DIR (immediately) and remove DIR
#
# TUNA_PG_DURABLE=1 keeps synchronous_commit on, so a commit the server acknowledged survives the
# server process being killed (the soak kills it; fsync stays off: the machine does not crash).
#
# PostgreSQL refuses to run as root, so as root the server runs as the "postgres" user (created by
# the Debian package). The cluster trusts local connections: it listens on loopback only and lives
# as long as the test run.
set -euo pipefail

find_bindir() {
  local d
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then pg_config --bindir; return 0; fi
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  done
  if command -v initdb >/dev/null 2>&1; then dirname "$(readlink -f "$(command -v initdb)")"; return 0; fi
  return 1
}

as_server_user() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

cmd_install() {
  if find_bindir >/dev/null; then return 0; fi
  echo "postgres.sh: installing Debian's postgresql package" >&2
  local sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q postgresql >&2
  find_bindir >/dev/null || { echo "postgres.sh: postgresql installed but initdb not found" >&2; exit 1; }
}

cmd_start() {
  local dir="$1" port="$2" bin
  bin="$(find_bindir)" || { echo "postgres.sh: PostgreSQL server binaries not found; run: hack/postgres.sh install" >&2; exit 1; }
  mkdir -p "$dir/data" "$dir/sock"
  if [ "$(id -u)" = 0 ]; then
    chown -R postgres: "$dir"
    as_server_user test -w "$dir/data" ||
      { echo "postgres.sh: user postgres cannot write $dir (a parent directory is closed to it); set TMPDIR to a directory it can reach" >&2; exit 1; }
  fi
  as_server_user "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-sync --no-instructions >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  pg_start "$bin" "$dir" "$port"
  as_server_user "$bin/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c 'CREATE DATABASE tuna' >/dev/null
  echo "postgresql://postgres@127.0.0.1:$port/tuna"
}

# pg_start starts the server of DIR on PORT (crash recovery first when it was killed). fsync off and
# friends: a test server's durability across a machine crash does not matter, its speed does.
pg_start() {
  local bin="$1" dir="$2" port="$3" commit=off
  if [ "${TUNA_PG_DURABLE:-}" = 1 ]; then commit=on; fi
  as_server_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir/sock -c fsync=off -c synchronous_commit=$commit -c full_page_writes=off -c max_connections=200" \
    start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
}

cmd_restart() {
  local dir="$1" port="$2" bin
  bin="$(find_bindir)" || { echo "postgres.sh: PostgreSQL server binaries not found; run: hack/postgres.sh install" >&2; exit 1; }
  [ -d "$dir/data" ] || { echo "postgres.sh: $dir/data holds no server; use start" >&2; exit 1; }
  pg_start "$bin" "$dir" "$port"
}

cmd_stop() {
  local dir="$1" bin
  bin="$(find_bindir)" || true
  if [ -n "${bin:-}" ] && [ -f "$dir/data/postmaster.pid" ]; then
    as_server_user "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  install) cmd_install ;;
  bindir) find_bindir ;;
  start) [ $# -eq 3 ] || { echo "usage: $0 start DIR PORT" >&2; exit 2; }; cmd_start "$2" "$3" ;;
  restart) [ $# -eq 3 ] || { echo "usage: $0 restart DIR PORT" >&2; exit 2; }; cmd_restart "$2" "$3" ;;
  stop) [ $# -eq 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; cmd_stop "$2" ;;
  *) echo "usage: $0 install | bindir | start DIR PORT | restart DIR PORT | stop DIR" >&2; exit 2 ;;
esac
