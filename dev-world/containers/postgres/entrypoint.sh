#!/usr/bin/env bash
# First start on an empty $PGDATA: initdb with POSTGRES_USER as superuser (password auth over TCP),
# create POSTGRES_DB, run /docker-entrypoint-initdb.d/*.sh|*.sql against a socket-only server.
# Every start: exec postgres with the given `-c` settings, listening on all interfaces.
set -euo pipefail
[[ "${1:-}" == postgres ]] && shift
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
export POSTGRES_USER="${POSTGRES_USER:-postgres}"
export POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"
socket_dir=/var/run/postgresql

if [[ ! -s "$PGDATA/PG_VERSION" ]]; then
  initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") \
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 -D "$PGDATA" >/dev/null
  printf 'host all all all scram-sha-256\nhost replication all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -w -o "-c listen_addresses='' -c unix_socket_directories=$socket_dir" start >/dev/null
  export PGHOST="$socket_dir"
  if [[ "$POSTGRES_DB" != postgres ]]; then
    psql -X -q -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
      -c "CREATE DATABASE \"$POSTGRES_DB\""
  fi
  for script in /docker-entrypoint-initdb.d/*; do
    case "$script" in
    *.sh) echo "init: running $script" && bash "$script" ;;
    *.sql) echo "init: running $script" && psql -X -q -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -f "$script" ;;
    *) [[ -e "$script" ]] && echo "init: ignoring $script" ;;
    esac
  done
  unset PGHOST
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "init: done"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c "unix_socket_directories=$socket_dir" "$@"
