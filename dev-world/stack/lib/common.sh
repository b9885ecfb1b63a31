# shellcheck shell=bash
# Shared settings and helpers of the native stack. Sourced by stack.sh; every other lib/*.sh uses these.

STACK_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REPO_ROOT="$(cd "$STACK_HOME/../.." && pwd)"

# The pins: plain KEY=value lines (docker compose --env-file reads the same file). A variable already
# set in the environment wins, to try another version without editing the file.
while IFS='=' read -r key value; do
  [[ "$key" =~ ^PDA_[A-Z0-9_]+$ && -z "${!key:-}" ]] && printf -v "$key" '%s' "$value"
done <"$STACK_HOME/versions.env"

# Everything below can be overridden from the environment (dev-world/stack/README.md lists them).
PDA_STACK_DIR="${PDA_STACK_DIR:-$REPO_ROOT/.stack}"
PDA_CACHE_DIR="${PDA_CACHE_DIR:-$HOME/.cache/pda-stack}"
PDA_MAVEN_REPO_LOCAL="${PDA_MAVEN_REPO_LOCAL:-$HOME/.m2/repository}"
PDA_MAVEN_CENTRAL="${PDA_MAVEN_CENTRAL:-https://repo.maven.apache.org/maven2}"
PDA_PG_BINDIR="${PDA_PG_BINDIR:-/usr/lib/postgresql/$PDA_PG_MAJOR/bin}"
PDA_PG_HOST=127.0.0.1
PDA_PG_PORT="${PDA_PG_PORT:-55432}"
PDA_PG_DATABASE="${PDA_PG_DATABASE:-pda}"
PDA_PG_USER="${PDA_PG_USER:-pda}"
PDA_PG_PASSWORD="${PDA_PG_PASSWORD:-pda}"
PDA_DEBEZIUM_USER="${PDA_DEBEZIUM_USER:-debezium}"
PDA_DEBEZIUM_PASSWORD="${PDA_DEBEZIUM_PASSWORD:-debezium}"
PDA_KAFKA_PORT="${PDA_KAFKA_PORT:-59092}"
PDA_KAFKA_CONTROLLER_PORT="${PDA_KAFKA_CONTROLLER_PORT:-59093}"
PDA_CONNECT_PORT="${PDA_CONNECT_PORT:-58083}"
PDA_REGISTRY_PORT="${PDA_REGISTRY_PORT:-58081}"
# The schema registry keeps its schemas in a database of its own on the stack's PostgreSQL.
PDA_REGISTRY_DATABASE="${PDA_REGISTRY_DATABASE:-pda_registry}"
PDA_REGISTRY_DB_USER="${PDA_REGISTRY_DB_USER:-pda_registry}"
PDA_REGISTRY_DB_PASSWORD="${PDA_REGISTRY_DB_PASSWORD:-pda_registry}"
PDA_TOPIC_PREFIX=pda # fixed: it is `topic.prefix` in dev-world/stack/connector.json
PDA_CONNECTOR_NAME=pda-postgres
PDA_SLOT_NAME=pda_slot
PDA_STACK_TIMEOUT="${PDA_STACK_TIMEOUT:-180}" # seconds, per readiness wait
# Partitions per tenant topic (dev-world/stack/README.md, "Partitioned topics"): 1, the default, is one
# partition per topic and the shipped connector.json as is; N > 1 adds connector-partitioned.json
# (company-keyed partitions) and dev-world/db/partitioned-identity.sql. Checked by data_partitions_check.
PDA_DATA_PARTITIONS="${PDA_DATA_PARTITIONS:-1}"
PARTITIONED_OVERLAY_JSON="$STACK_HOME/connector-partitioned.json"
PARTITIONED_IDENTITY_SQL="$REPO_ROOT/dev-world/db/partitioned-identity.sql"

LOG_DIR="$PDA_STACK_DIR/logs"
RUN_DIR="$PDA_STACK_DIR/run"
KAFKA_LIBS="$PDA_CACHE_DIR/kafka-$PDA_KAFKA_VERSION-log4j-$PDA_LOG4J_VERSION/libs"
CONNECT_PLUGINS="$PDA_CACHE_DIR/debezium-$PDA_DEBEZIUM_VERSION/plugins"
JDBC_SINK_PLUGINS="$PDA_CACHE_DIR/debezium-$PDA_DEBEZIUM_VERSION/sink-plugins"
REGISTRY_APP="$PDA_CACHE_DIR/apicurio-registry-$PDA_APICURIO_REGISTRY_VERSION"
CONVERTER_PLUGINS="$PDA_CACHE_DIR/apicurio-converter-$PDA_APICURIO_CONVERTER_VERSION/plugins"

log() { printf 'stack: %s\n' "$*" >&2; }

# Node 24 (ensure_node), for dev-world/stack/captured-tables.ts; sourcing it only defines functions.
# shellcheck source=../../../scripts/lib/node.sh
source "$REPO_ROOT/scripts/lib/node.sh"

# One clear line, non-zero exit: the repo's rule for every bad configuration
# (docs/architecture.md#configuration).
die() {
  printf 'stack: error: %s\n' "$*" >&2
  exit 1
}

# Poll `cmd` until it succeeds or `timeout` seconds pass; never a fixed sleep standing in for readiness.
# `what` is logged on success when non-empty.
wait_until() {
  local timeout="$1" what="$2"
  shift 2
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      return 1
    fi
    sleep 0.5
  done
  [[ -z "$what" ]] || log "$what"
}

pid_file() { printf '%s/%s.pid' "$RUN_DIR" "$1"; }

# Pid of a component we started, if that process is still alive.
running_pid() {
  local file pid
  file="$(pid_file "$1")"
  [[ -f "$file" ]] || return 1
  pid="$(<"$file")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  # A recycled pid must not be mistaken for ours: our JVMs carry -Dpda.stack.dir=<this stack dir>.
  tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qxF -- "-Dpda.stack.dir=$PDA_STACK_DIR" || return 1
  printf '%s' "$pid"
}

# Pid listening on a TCP port of 127.0.0.1/any address, empty when free.
port_listener_pid() {
  ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n1 | cut -d= -f2
}

port_in_use() { [[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]]; }

# Refuse to start a component on a port someone else holds (a hang or a confusing crash otherwise).
require_free_port() {
  local port="$1" var="$2" pid name=""
  port_in_use "$port" || return 0
  pid="$(port_listener_pid "$port")"
  [[ -n "$pid" ]] && name=" by pid $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-60))"
  die "port $port ($var) is already in use$name; stop that process or set $var to a free port"
}

# Stop one of our processes by its recorded pid: TERM, wait for it to exit, KILL as a last resort.
stop_pid() {
  local name="$1" grace="${2:-60}" pid
  pid="$(running_pid "$name")" || {
    rm -f "$(pid_file "$name")"
    return 0
  }
  log "stopping $name (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || true
  if ! wait_until "$grace" "$name stopped" not_alive "$pid"; then
    log "$name did not stop within ${grace}s; killing pid $pid"
    kill -KILL "$pid" 2>/dev/null || true
    wait_until 10 "$name killed" not_alive "$pid" || die "could not stop $name (pid $pid)"
  fi
  rm -f "$(pid_file "$name")"
}

not_alive() { ! kill -0 "$1" 2>/dev/null; }

java_bin() {
  if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
    printf '%s' "$JAVA_HOME/bin/java"
  else
    command -v java || true
  fi
}

require_java() {
  local java major
  java="$(java_bin)"
  [[ -n "$java" ]] || die "Java 17+ not found (install it: apt-get install -y openjdk-17-jre-headless, or set JAVA_HOME)"
  major="$("$java" -version 2>&1 | head -n1 | sed -E 's/.*version "([0-9]+)(\.[^"]*)?".*/\1/')"
  [[ "$major" =~ ^[0-9]+$ && "$major" -ge 17 ]] ||
    die "Java 17+ required for Kafka $PDA_KAFKA_VERSION / Debezium $PDA_DEBEZIUM_VERSION, found '$major' at $java"
}

# The captured tables, comma-separated ("companies,api_keys,..."), set by load_captured_tables: the
# table registry's list (schemas/src/registry.ts) printed by dev-world/stack/captured-tables.ts. The
# publication (lib/postgres.sh) and the connector's table.include.list (lib/connect.sh) come from it.
CAPTURED_TABLES=""

load_captured_tables() {
  ensure_node >&2
  CAPTURED_TABLES="$(node "$STACK_HOME/captured-tables.ts")" ||
    die "node dev-world/stack/captured-tables.ts failed (error above): it reads the captured tables from schemas/src/registry.ts"
  [[ "$CAPTURED_TABLES" =~ ^[a-z_][a-z0-9_]*(,[a-z_][a-z0-9_]*)*$ ]] ||
    die "node dev-world/stack/captured-tables.ts printed '$CAPTURED_TABLES', not a comma-separated list of table names"
}

require_tools() {
  local tool
  for tool in curl ss setsid timeout jq flock; do
    command -v "$tool" >/dev/null || die "required tool '$tool' not found in PATH"
  done
}

data_partitions_check() {
  [[ "$PDA_DATA_PARTITIONS" =~ ^[1-9][0-9]{0,4}$ && "$PDA_DATA_PARTITIONS" -le 10000 ]] ||
    die "PDA_DATA_PARTITIONS='$PDA_DATA_PARTITIONS': expected a whole number from 1 to 10000 (partitions per tenant topic; 1, the default, is one partition)"
}

data_partitioned() { data_partitions_check && ((PDA_DATA_PARTITIONS > 1)); }

# The tenant tables, space-separated, as connector-partitioned.json keys them (message.key.columns
# "public.<table>:id,company_id;..."): the topics PartitionRouting spreads over N partitions.
partitioned_tenant_tables() {
  jq -r '."message.key.columns" | split(";") | map(split(":")[0] | ltrimstr("public.")) | join(" ")' \
    "$PARTITIONED_OVERLAY_JSON" || die "dev-world/stack/connector-partitioned.json is not valid JSON"
}
