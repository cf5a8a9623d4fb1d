#!/usr/bin/env bash
# A throwaway PostgreSQL server for the postgres adapter's tests and benchmarks, from the
# machine's PostgreSQL binaries (Debian's `postgresql` package; scripts/test.sh installs it when
# missing). PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres`
# user the package creates.
#
#   bash scripts/postgres.sh start DIR [fast]   initdb in DIR, start on a free 127.0.0.1 port,
#                                                print the URL (`fast`: fsync off, for tests)
#   bash scripts/postgres.sh stop DIR           stop the server started in DIR (by its pid)
set -euo pipefail

bin_dir() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      echo "$dir"
      return
    fi
  done
  return 1
}

# Runs a command as the cluster's owner: `postgres` when we are root, else ourselves.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

cmd="${1:?usage: postgres.sh start|stop DIR}"
dir="${2:?usage: postgres.sh start|stop DIR}"
case "$cmd" in
  start)
    bin="$(bin_dir)" || { echo "postgres.sh: no PostgreSQL binaries under /usr/lib/postgresql" >&2; exit 1; }
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -A trust -U postgres -E UTF8 --locale=C --no-sync >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    port="$(free_port)"
    opts="-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=400"
    if [ "${3:-}" = fast ]; then
      opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    fi
    as_owner "$bin/pg_ctl" -D "$dir/data" -o "$opts" -l "$dir/server.log" -w -t 60 start >/dev/null \
      || { cat "$dir/server.log" >&2; exit 1; }
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    ;;
  stop)
    pid_file="$dir/data/postmaster.pid"
    [ -f "$pid_file" ] || exit 0
    pid="$(head -n 1 "$pid_file")"
    kill -INT "$pid" 2>/dev/null || true
    for _ in $(seq 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    rm -rf "$dir"
    ;;
  *)
    echo "usage: postgres.sh start|stop DIR" >&2
    exit 2
    ;;
esac
