#!/usr/bin/env bash
# The native CDC stack: PostgreSQL (Debian) → Debezium in Kafka Connect → Kafka (KRaft), with the
# Apicurio schema registry of the Avro path; no Docker.
#
#   stack.sh up                 start everything, register the connector, wait until it is RUNNING
#   stack.sh down [--purge]     stop Connect and the registry, drop replication slots, stop Kafka and PostgreSQL
#                               (--purge also deletes the stack dir; download caches are kept)
#   stack.sh reset              down --purge, then up: a fresh database, topics and connector
#   stack.sh status             one line per component, the connector state and the slot
#   stack.sh logs [component] [-f]   postgres | kafka | registry | connect | maven (all when omitted)
#   stack.sh env                print the `export` lines written to <stack dir>/env
#   stack.sh stop <component> [--kill|--fast|--immediate]   one component down as a fault would take it
#                               (kafka|connect|registry: TERM, or SIGKILL; postgres: pg_ctl -m fast|immediate)
#   stack.sh restart <component> [mode]   that stop, then `up`
#   stack.sh database create|drop <name>  a second database with the schema and publication
#                               (for a private connector: bench/pipeline/stages.ts), or drop it and its slots
#
# Settings and file locations: dev-world/stack/README.md.
set -euo pipefail

# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=lib/fetch.sh
source "$STACK_HOME/lib/fetch.sh"
# shellcheck source=lib/postgres.sh
source "$STACK_HOME/lib/postgres.sh"
# shellcheck source=lib/kafka.sh
source "$STACK_HOME/lib/kafka.sh"
# shellcheck source=lib/kafka-sasl.sh
source "$STACK_HOME/lib/kafka-sasl.sh"
# shellcheck source=lib/registry.sh
source "$STACK_HOME/lib/registry.sh"
# shellcheck source=lib/connect.sh
source "$STACK_HOME/lib/connect.sh"
# shellcheck source=lib/topics.sh
source "$STACK_HOME/lib/topics.sh"
# shellcheck source=lib/faults.sh
source "$STACK_HOME/lib/faults.sh"

ENV_FILE="$PDA_STACK_DIR/env"

write_env_file() {
  local name
  {
    echo "# Written by dev-world/stack/stack.sh up: the native stack's addresses (source this file)."
    for name in PDA_PG_HOST PDA_PG_PORT PDA_PG_DATABASE PDA_PG_USER PDA_PG_PASSWORD PDA_KAFKA_BROKERS \
      PDA_CONNECT_URL PDA_REGISTRY_URL PDA_SCHEMA_REGISTRY_URL PDA_CONNECTOR_FORMAT PDA_DATA_PARTITIONS PDA_TOPIC_PREFIX PDA_CONNECTOR_NAME PDA_SLOT_NAME PDA_DEBEZIUM_USER PDA_DEBEZIUM_PASSWORD \
      PDA_STACK_DIR $(kafka_sasl_wanted && kafka_sasl_env_names); do
      printf 'export %s=%q\n' "$name" "${!name}"
    done
  } >"$ENV_FILE.tmp"
  mv "$ENV_FILE.tmp" "$ENV_FILE"
}

cmd_up() {
  local started=$SECONDS
  require_tools
  require_java
  mkdir -p "$PDA_STACK_DIR" "$LOG_DIR" "$RUN_DIR"
  fetch_all
  load_captured_tables
  # Before anything changes: topics that exist with another partition count refuse the count.
  data_topics_partitions_check
  pg_start
  pg_provision
  if data_partitioned; then pg_partitioned_identity; fi
  kafka_start
  if kafka_sasl_wanted; then
    kafka_sasl_provision
    kafka_sasl_env
  fi
  registry_start
  connect_start
  connector_register
  data_topics_configure
  write_env_file
  log "up in $((SECONDS - started))s — addresses in $ENV_FILE"
}

cmd_down() {
  local purge=false
  [[ "${1:-}" == "--purge" ]] && purge=true
  # Order matters: Connect holds the slot; the slot can only be dropped while PostgreSQL runs.
  connect_stop
  registry_stop
  pg_drop_slots
  kafka_stop
  pg_stop
  local port
  for port in "$PDA_CONNECT_PORT" "$PDA_REGISTRY_PORT" "$PDA_KAFKA_PORT" $(kafka_sasl_wanted && echo "$PDA_KAFKA_SASL_PORT") "$PDA_KAFKA_CONTROLLER_PORT" "$PDA_PG_PORT"; do
    port_in_use "$port" && log "warning: port $port is still in use by pid $(port_listener_pid "$port")"
  done
  rm -f "$ENV_FILE"
  if $purge; then
    log "deleting $PDA_STACK_DIR (caches in $PDA_CACHE_DIR are kept)"
    rm -rf "$PDA_STACK_DIR"
    # A cluster moved out of the stack dir (see lib/postgres.sh) goes with it.
    [[ "$PG_HOME" == "$PDA_STACK_DIR/"* ]] || rm -rf "$PG_HOME"
  fi
  log "down"
}

cmd_status() {
  pg_status
  kafka_status
  registry_status
  connect_status
}

cmd_logs() {
  local component="" follow=() file
  for arg in "$@"; do
    case "$arg" in
    -f | --follow) follow=(-f) ;;
    *) component="$arg" ;;
    esac
  done
  if [[ -z "$component" ]]; then
    for file in "$LOG_DIR"/*.log; do
      [[ -f "$file" ]] || continue
      echo "==> $file <=="
      tail -n 20 "$file"
    done
    return 0
  fi
  file="$LOG_DIR/$component.log"
  [[ -f "$file" ]] || die "no log for '$component' (known: postgres, kafka, registry, connect, maven) in $LOG_DIR"
  tail -n "${LINES_TO_SHOW:-200}" "${follow[@]}" "$file"
}

cmd_env() {
  [[ -f "$ENV_FILE" ]] || die "no $ENV_FILE: run 'stack.sh up' first"
  cat "$ENV_FILE"
}

# Several test runs may call `up` at once (vitest globalSetup in parallel checkouts of one stack):
# one stack.sh at a time per stack dir. The lock lives outside the dir, which `down --purge` deletes.
with_lock() {
  local lock
  lock="${TMPDIR:-/tmp}/pda-stack-$(printf '%s' "$PDA_STACK_DIR" | cksum | cut -d' ' -f1).lock"
  exec 9>"$lock"
  flock -w "$PDA_STACK_TIMEOUT" 9 || die "another stack.sh is still running on $PDA_STACK_DIR (lock $lock)"
  "$@"
}

PDA_KAFKA_BROKERS="127.0.0.1:$PDA_KAFKA_PORT"
PDA_CONNECT_URL="$CONNECT_URL"

case "${1:-}" in
up) with_lock cmd_up ;;
down) with_lock cmd_down "${2:-}" ;;
reset)
  with_lock cmd_down --purge
  cmd_up
  ;;
stop) with_lock component_stop "${2:-}" "${3:-}" ;;
restart)
  with_lock component_stop "${2:-}" "${3:-}"
  with_lock cmd_up
  ;;
status) cmd_status ;;
logs)
  shift
  cmd_logs "$@"
  ;;
env) cmd_env ;;
database)
  case "${2:-}" in
  create) with_lock pg_database_create "${3:-}" ;;
  drop) with_lock pg_database_drop "${3:-}" ;;
  *) die "usage: stack.sh database create|drop <name>" ;;
  esac
  ;;
*)
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
  ;;
esac
