# shellcheck shell=bash
# Kafka Connect (distributed, one worker) with the Debezium PostgreSQL plugin, and the connector
# registered from dev-world/stack/connector.json (the same file docker-compose.yml registers) plus its
# table.include.list, built from the table registry's captured tables ($CAPTURED_TABLES, lib/common.sh).

CONNECT_HOME="$PDA_STACK_DIR/connect"
CONNECT_CONFIG="$CONNECT_HOME/worker.properties"
CONNECT_LOG="$LOG_DIR/connect.log"
CONNECT_URL="http://127.0.0.1:$PDA_CONNECT_PORT"
CONNECTOR_JSON="$STACK_HOME/connector.json"

connect_write_config() {
  mkdir -p "$CONNECT_HOME"
  local bootstrap="127.0.0.1:$PDA_KAFKA_PORT"
  if kafka_sasl_wanted; then bootstrap="127.0.0.1:$PDA_KAFKA_SASL_PORT"; fi
  # It holds Connect's Kafka password in SASL mode.
  (umask 077 && : >"$CONNECT_CONFIG")
  cat >"$CONNECT_CONFIG" <<EOF
# Written by dev-world/stack/lib/connect.sh on every start; edits are lost.
bootstrap.servers=$bootstrap
group.id=pda-connect
listeners=http://127.0.0.1:$PDA_CONNECT_PORT
rest.advertised.host.name=127.0.0.1
rest.advertised.port=$PDA_CONNECT_PORT
plugin.path=$CONNECT_PLUGINS,$CONVERTER_PLUGINS$(jdbc_sink_wanted && printf ',%s' "$JDBC_SINK_PLUGINS")
# Every plugin here (Kafka's and Debezium's) has ServiceLoader manifests: skip the slow reflective scan.
plugin.discovery=service_load
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
config.storage.topic=pda-connect-configs
offset.storage.topic=pda-connect-offsets
status.storage.topic=pda-connect-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
offset.storage.partitions=1
status.storage.partitions=1
# Debezium confirms the LSN to PostgreSQL only when offsets are flushed: 60 s by default.
offset.flush.interval.ms=1000
# Host, port and credentials in connector.json are \${env:...} references resolved here, so one
# file serves the native stack and docker-compose.
config.providers=env
config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
EOF
  if kafka_sasl_wanted; then connect_sasl_config >>"$CONNECT_CONFIG"; fi
}

connect_plugins_ready() {
  curl -fsS -m 5 "$CONNECT_URL/connector-plugins" 2>/dev/null | grep -q 'io.debezium.connector.postgresql.PostgresConnector'
}

# Connect lists the JDBC sink only when started with PDA_STACK_JDBC_SINK=1 (lib/fetch.sh).
connect_lists_jdbc_sink() {
  curl -fsS -m 5 "$CONNECT_URL/connector-plugins" 2>/dev/null | grep -q 'io.debezium.connector.jdbc.JdbcSinkConnector'
}

# The Apicurio converter (lib/fetch.sh) is on plugin.path since the Avro path; a worker started
# before that lacks it.
connect_lists_avro_converter() {
  curl -fsS -m 5 "$CONNECT_URL/connector-plugins?connectorsOnly=false" 2>/dev/null |
    grep -q 'io.apicurio.registry.utils.converter.AvroConverter'
}

connect_start() {
  if running_pid connect >/dev/null && connect_plugins_ready && ! connect_lists_avro_converter; then
    log "restarting Kafka Connect to add the Apicurio converter plugin"
    connect_stop
  fi
  if running_pid connect >/dev/null && jdbc_sink_wanted && connect_plugins_ready && ! connect_lists_jdbc_sink; then
    log "restarting Kafka Connect to add the JDBC sink plugin (PDA_STACK_JDBC_SINK=1)"
    connect_stop
  fi
  if running_pid connect >/dev/null; then
    wait_until "$PDA_STACK_TIMEOUT" "connect ready" connect_plugins_ready || die "Kafka Connect runs but its REST API does not list the Debezium plugin; see $CONNECT_LOG"
    return 0
  fi
  require_free_port "$PDA_CONNECT_PORT" PDA_CONNECT_PORT
  mkdir -p "$RUN_DIR" "$LOG_DIR"
  connect_write_config
  log "starting Kafka Connect on $CONNECT_URL"
  rm -f "$(pid_file connect)"
  # The worker's environment carries what connector.json references through ${env:...}.
  PDA_PG_HOST="$PDA_PG_HOST" PDA_PG_PORT="$PDA_PG_PORT" PDA_PG_DATABASE="$PDA_PG_DATABASE" \
    PDA_DEBEZIUM_USER="$PDA_DEBEZIUM_USER" PDA_DEBEZIUM_PASSWORD="$PDA_DEBEZIUM_PASSWORD" \
    PDA_REGISTRY_URL="$PDA_REGISTRY_URL" \
    setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$(pid_file connect)" \
    "$(java_bin)" -Xms256m -Xmx1g -XX:+UseG1GC -Djava.awt.headless=true \
    "-Dlog4j2.configurationFile=$STACK_HOME/conf/log4j2.properties" "-Dpda.stack.dir=$PDA_STACK_DIR" \
    -cp "$KAFKA_LIBS/*" org.apache.kafka.connect.cli.ConnectDistributed "$CONNECT_CONFIG" \
    </dev/null >>"$CONNECT_LOG" 2>&1 9>&- &
  # The REST port answers before the worker has joined its group and scanned plugin.path.
  wait_for_start connect connect_plugins_ready "$CONNECT_LOG"
}

connect_stop() { stop_pid connect 60; }

# Connector and task state as "CONNECTOR_STATE TASK_STATE" (task NONE until assigned).
connector_states() {
  curl -fsS -m 5 "$CONNECT_URL/connectors/$PDA_CONNECTOR_NAME/status" 2>/dev/null |
    jq -r '[.connector.state, (.tasks[0].state // "NONE")] | join(" ")'
}

connector_failed_trace() {
  curl -fsS -m 5 "$CONNECT_URL/connectors/$PDA_CONNECTOR_NAME/status" 2>/dev/null |
    jq -r '[.connector.trace, .tasks[0].trace] | map(select(. != null)) | .[0] // "no trace"' | head -n 30
}

connector_running() { [[ "$(connector_states)" == "RUNNING RUNNING" ]]; }

# The format the connector writes (dev-world/stack/README.md, "The connector's format"): connector.json
# ships Avro through the registry; json / json-schemaless replace its converter settings with those
# of dev-world/stack/converters/<format>.json.
PDA_CONNECTOR_FORMAT="${PDA_CONNECTOR_FORMAT:-avro}"

connector_converters() {
  local file="$STACK_HOME/converters/$PDA_CONNECTOR_FORMAT.json"
  [[ "$PDA_CONNECTOR_FORMAT" =~ ^[a-z-]+$ && -f "$file" ]] ||
    die "PDA_CONNECTOR_FORMAT='$PDA_CONNECTOR_FORMAT': expected avro, json or json-schemaless (a file of dev-world/stack/converters/)"
  printf '%s' "$file"
}

# connector.json with the format's converters + "table.include.list": "public.<t1>,public.<t2>,..."
# from $CAPTURED_TABLES, keys sorted. With PDA_DATA_PARTITIONS=N > 1, connector-partitioned.json
# over that, its "__PDA_DATA_PARTITIONS__" values replaced by N (company-keyed partitions).
connector_desired_config() {
  local converters overlay='{}'
  converters="$(connector_converters)"
  if data_partitioned; then
    overlay="$(jq --arg n "$PDA_DATA_PARTITIONS" 'map_values(if . == "__PDA_DATA_PARTITIONS__" then $n else . end)' \
      "$PARTITIONED_OVERLAY_JSON")" || die "dev-world/stack/connector-partitioned.json is not valid JSON"
  fi
  jq -S -s --arg tables "$CAPTURED_TABLES" --argjson overlay "$overlay" \
    '(.[0] | with_entries(select(.key | test("^(key|value)[.]converter") | not))) + .[1]
      + {"table.include.list": ($tables | split(",") | map("public." + .) | join(","))} + $overlay' \
    "$CONNECTOR_JSON" "$converters"
}

connector_register() {
  local desired current
  [[ -n "$CAPTURED_TABLES" ]] || die "connector_register: the captured tables are not loaded (load_captured_tables)"
  connector_converters >/dev/null
  desired="$(connector_desired_config)" || die "dev-world/stack/connector.json is not valid JSON"
  current="$(curl -fsS -m 10 "$CONNECT_URL/connectors/$PDA_CONNECTOR_NAME/config" 2>/dev/null | jq -S 'del(.name)' 2>/dev/null || true)"
  # PUT with an unchanged config would still restart the task: skip it so `up` stays a no-op.
  if [[ "$desired" != "$current" ]]; then
    log "registering connector $PDA_CONNECTOR_NAME from dev-world/stack/connector.json (format $PDA_CONNECTOR_FORMAT, data partitions $PDA_DATA_PARTITIONS) and the captured tables"
    local response
    response="$(curl -sS -m 120 -X PUT -H 'Content-Type: application/json' --data-binary @- \
      -w '\n%{http_code}' "$CONNECT_URL/connectors/$PDA_CONNECTOR_NAME/config" <<<"$desired")" ||
      die "Kafka Connect did not answer the connector registration"
    local code="${response##*$'\n'}"
    [[ "$code" == 200 || "$code" == 201 ]] ||
      die "connector registration rejected (HTTP $code): $(printf '%s' "${response%$'\n'*}" | jq -r '.message // .' 2>/dev/null | head -c 400)"
    # A changed config does not restart a FAILED task by itself.
    [[ "$code" == 200 ]] && connector_restart
  elif [[ "$(connector_states || true)" == *FAILED* ]]; then
    # Failed earlier (PostgreSQL was away, say): one restart before judging it.
    connector_restart
  fi
  case "$(connector_states || true)" in
  STOPPED* | PAUSED*)
    # Stopped or paused through the REST api (bench/pipeline/stages.ts stops it for its run): `up` means running.
    log "resuming connector $PDA_CONNECTOR_NAME"
    curl -fsS -m 30 -X PUT -o /dev/null "$CONNECT_URL/connectors/$PDA_CONNECTOR_NAME/resume" ||
      die "Kafka Connect refused to resume connector $PDA_CONNECTOR_NAME"
    ;;
  esac
  connector_wait_running
}

connector_restart() {
  log "restarting connector $PDA_CONNECTOR_NAME and its task"
  # Connect marks connector and tasks RESTARTING before answering, so no stale FAILED is read next.
  curl -fsS -m 30 -X POST -o /dev/null \
    "$CONNECT_URL/connectors/$PDA_CONNECTOR_NAME/restart?includeTasks=true&onlyFailed=false" ||
    die "Kafka Connect refused to restart connector $PDA_CONNECTOR_NAME"
}

connector_wait_running() {
  local deadline=$((SECONDS + PDA_STACK_TIMEOUT)) states
  while :; do
    states="$(connector_states || true)"
    case "$states" in
    "RUNNING RUNNING") break ;;
    *FAILED*)
      connector_failed_trace >&2
      die "connector $PDA_CONNECTOR_NAME FAILED ($states); trace above, log in $CONNECT_LOG"
      ;;
    esac
    ((SECONDS < deadline)) || die "connector $PDA_CONNECTOR_NAME not RUNNING after ${PDA_STACK_TIMEOUT}s (state: ${states:-unknown}); see $CONNECT_LOG"
    sleep 0.5
  done
  log "connector $PDA_CONNECTOR_NAME RUNNING"
}

connect_status() {
  local pid
  if pid="$(running_pid connect)"; then
    echo "connect    running  $CONNECT_URL  pid=$pid"
    echo "connector  $PDA_CONNECTOR_NAME $(connector_states || echo 'not registered')"
  else
    echo "connect    stopped"
  fi
}
