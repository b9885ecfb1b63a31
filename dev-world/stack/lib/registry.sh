# shellcheck shell=bash
# Apicurio Registry, the schema registry of the Avro path (dev-world/stack/README.md, "The schema
# registry"): its Quarkus runner jar from the Maven Central `all` zip (lib/fetch.sh), SQL storage in a
# database of its own on the stack's PostgreSQL (schemas and their ids survive restarts), and the
# compatibility rule every new schema version is checked against before the converter may use it.

REGISTRY_LOG="$LOG_DIR/registry.log"
REGISTRY_URL="http://127.0.0.1:$PDA_REGISTRY_PORT"
# What the converter is given (the registry's v2 API: the converter is a 2.x client) and what ingest
# is given (the Confluent-compatible API: `GET /schemas/ids/<id>` answers the 4-byte id on the wire).
PDA_REGISTRY_URL="$REGISTRY_URL"
PDA_SCHEMA_REGISTRY_URL="$REGISTRY_URL/apis/ccompat/v7"
# BACKWARD_TRANSITIVE: the data topics are compacted (docs/decisions/0008), so a rebuild reads
# events of every schema version a row was last written with, possibly years apart. A consumer
# holding the newest schema must be able to read all of them, not only the previous one. Debezium
# turns a nullable column added or a column dropped into a compatible version; a column whose type
# changes is refused, and the connector's task fails until an operator decides (docs/operations.md).
PDA_REGISTRY_COMPATIBILITY="${PDA_REGISTRY_COMPATIBILITY:-BACKWARD_TRANSITIVE}"

# The registry's role and database (sql/registry-db.sql); cheap, runs on every `up`. The password
# goes through psql's environment (the SQL's \getenv), never its command line, which `ps` shows.
registry_provision_db() {
  PDA_REGISTRY_DB_PASSWORD="$PDA_REGISTRY_DB_PASSWORD" pg_psql_super -d postgres \
    -v registry_user="$PDA_REGISTRY_DB_USER" -v registry_db="$PDA_REGISTRY_DATABASE" \
    <"$STACK_HOME/sql/registry-db.sql" >>"$PG_LOG.provision" 2>&1 ||
    die "creating the registry's database failed; see $PG_LOG.provision"
}

# Quarkus' readiness check: storage reachable and initialised.
registry_ready() { curl -fsS -m 5 "$REGISTRY_URL/health/ready" 2>/dev/null | grep -q '"UP"'; }

registry_start() {
  registry_provision_db
  if running_pid registry >/dev/null; then
    wait_until "$PDA_STACK_TIMEOUT" "registry ready" registry_ready || die "Apicurio Registry runs but is not ready on $REGISTRY_URL; see $REGISTRY_LOG"
    return 0
  fi
  require_free_port "$PDA_REGISTRY_PORT" PDA_REGISTRY_PORT
  mkdir -p "$RUN_DIR" "$LOG_DIR"
  local jar
  jar="$(<"$REGISTRY_APP/runner-jar")"
  log "starting Apicurio Registry $PDA_APICURIO_REGISTRY_VERSION on $REGISTRY_URL (storage: PostgreSQL database $PDA_REGISTRY_DATABASE)"
  rm -f "$(pid_file registry)"
  # Small pools: the default 20-100 connections would take most of PostgreSQL's 100. The database
  # password is in the environment (Quarkus reads apicurio.datasource.password from
  # APICURIO_DATASOURCE_PASSWORD), not on the command line, which every user sees in `ps`.
  APICURIO_DATASOURCE_PASSWORD="$PDA_REGISTRY_DB_PASSWORD" setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$(pid_file registry)" \
    "$(java_bin)" -Xms128m -Xmx512m -XX:+UseG1GC -Djava.awt.headless=true "-Dpda.stack.dir=$PDA_STACK_DIR" \
    -Dquarkus.http.host=127.0.0.1 "-Dquarkus.http.port=$PDA_REGISTRY_PORT" \
    -Dquarkus.http.access-log.enabled=false '-Dquarkus.log.category."io.apicurio".level=INFO' \
    '-Dquarkus.log.console.format=%d{yyyy-MM-dd HH:mm:ss} %p [%c{2.}] %m%n' '-Dapicurio.app.name=Apicurio Registry' \
    -Dapicurio.storage.kind=sql -Dapicurio.storage.sql.kind=postgresql \
    "-Dapicurio.datasource.url=jdbc:postgresql://$PDA_PG_HOST:$PDA_PG_PORT/$PDA_REGISTRY_DATABASE" \
    "-Dapicurio.datasource.username=$PDA_REGISTRY_DB_USER" \
    -Dapicurio.datasource.jdbc.initial-size=2 -Dapicurio.datasource.jdbc.min-size=2 -Dapicurio.datasource.jdbc.max-size=10 \
    "-Dapicurio.rules.global.compatibility=$PDA_REGISTRY_COMPATIBILITY" \
    -jar "$jar" </dev/null >>"$REGISTRY_LOG" 2>&1 9>&- &
  wait_for_start registry registry_ready "$REGISTRY_LOG"
}

registry_stop() { stop_pid registry 30; }

registry_status() {
  local pid
  if pid="$(running_pid registry)"; then
    if registry_ready; then
      echo "registry   running  $REGISTRY_URL  pid=$pid  compatibility=$PDA_REGISTRY_COMPATIBILITY"
    else
      echo "registry   starting/unhealthy  pid=$pid"
    fi
  else
    echo "registry   stopped"
  fi
}
