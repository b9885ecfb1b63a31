#!/usr/bin/env bash
# docker-entrypoint-initdb.d script of the postgres service in docker-compose.yml: the same SQL the
# native stack applies (dev-world/stack/sql/*.sql, dev-world/db/schema.sql). Runs once, on an empty data dir,
# as POSTGRES_USER (a superuser in this image) over the init-time socket. The captured tables come
# from PDA_CAPTURED_TABLES (comma-separated, the output of dev-world/stack/captured-tables.ts: the table
# registry's list), which docker-compose.yml requires. The passwords (POSTGRES_PASSWORD,
# PDA_DEBEZIUM_PASSWORD, PDA_REGISTRY_DB_PASSWORD, all required) reach psql through its environment
# (the SQL's \getenv), never its command line.
set -euo pipefail
captured_tables="${PDA_CAPTURED_TABLES:?PDA_CAPTURED_TABLES is not set (export PDA_CAPTURED_TABLES=\$(node dev-world/stack/captured-tables.ts) before docker compose up)}"
psql_run() { psql -X -q -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" "$@"; }

PDA_PG_PASSWORD="${POSTGRES_PASSWORD:?}" PDA_DEBEZIUM_PASSWORD="${PDA_DEBEZIUM_PASSWORD:?PDA_DEBEZIUM_PASSWORD is not set}" \
  psql_run --dbname postgres -v app_user="$POSTGRES_USER" -v dbname="$POSTGRES_DB" -v cdc_user="$PDA_DEBEZIUM_USER" \
  -f /pda/sql/roles.sql
psql_run --dbname "$POSTGRES_DB" -f /pda/schema.sql
psql_run --dbname "$POSTGRES_DB" -v cdc_user="$PDA_DEBEZIUM_USER" -v captured_tables="$captured_tables" \
  -f /pda/sql/publication.sql
# PDA_DATA_PARTITIONS > 1 (company-keyed partitions): a unique (company_id, id) index per tenant
# table as its replica identity (dev-world/db/partitioned-identity.sql), as `stack.sh up` applies it.
partitions="${PDA_DATA_PARTITIONS:-1}"
if [[ ! "$partitions" =~ ^[1-9][0-9]{0,4}$ ]]; then
  echo "PDA_DATA_PARTITIONS='$partitions': expected a whole number from 1 to 10000" >&2
  exit 1
fi
if ((partitions > 1)); then
  psql_run --dbname "$POSTGRES_DB" -f /pda/partitioned-identity.sql
fi
# The schema registry's own role and database (its SQL storage), as the native stack makes them.
PDA_REGISTRY_DB_PASSWORD="${PDA_REGISTRY_DB_PASSWORD:?PDA_REGISTRY_DB_PASSWORD is not set}" \
  psql_run --dbname postgres -v registry_user="${PDA_REGISTRY_DB_USER:-pda_registry}" \
  -v registry_db="${PDA_REGISTRY_DATABASE:-pda_registry}" -f /pda/sql/registry-db.sql
