#!/usr/bin/env bash
# docker-entrypoint-initdb.d script of the postgres service in docker-compose.yml: the same SQL the
# native stack applies (ops/stack/sql/*.sql, ops/db/schema.sql). Runs once, on an empty data dir,
# as POSTGRES_USER (a superuser in this image) over the init-time socket.
set -euo pipefail
psql_run() { psql -X -q -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" "$@"; }

psql_run --dbname postgres \
  -v app_user="$POSTGRES_USER" -v app_password="$POSTGRES_PASSWORD" -v dbname="$POSTGRES_DB" \
  -v cdc_user="$PDA_DEBEZIUM_USER" -v cdc_password="$PDA_DEBEZIUM_PASSWORD" \
  -f /pda/sql/roles.sql
psql_run --dbname "$POSTGRES_DB" -f /pda/schema.sql
psql_run --dbname "$POSTGRES_DB" -v cdc_user="$PDA_DEBEZIUM_USER" -f /pda/sql/publication.sql
