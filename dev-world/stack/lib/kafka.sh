# shellcheck shell=bash
# Apache Kafka broker in KRaft combined mode (broker + controller, node 1) from the Maven Central jars.

KAFKA_HOME="$PDA_STACK_DIR/kafka"
KAFKA_CONFIG="$KAFKA_HOME/server.properties"
KAFKA_LOG="$LOG_DIR/kafka.log"

kafka_write_config() {
  mkdir -p "$KAFKA_HOME/data"
  local sasl_listener="" sasl_protocol=""
  if kafka_sasl_wanted; then
    sasl_listener=",SASL_SSL://127.0.0.1:$PDA_KAFKA_SASL_PORT"
    sasl_protocol=",SASL_SSL:SASL_SSL"
  fi
  # It holds the PLAIN users' passwords in SASL mode.
  (umask 077 && : >"$KAFKA_CONFIG")
  cat >"$KAFKA_CONFIG" <<EOF
# Written by dev-world/stack/lib/kafka.sh on every start; edits are lost.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$PDA_KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$PDA_KAFKA_PORT$sasl_listener,CONTROLLER://127.0.0.1:$PDA_KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PDA_KAFKA_PORT$sasl_listener
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT$sasl_protocol,CONTROLLER:PLAINTEXT
log.dirs=$KAFKA_HOME/data
num.partitions=1
auto.create.topics.enable=true
# One broker: every replication factor / min ISR must be 1 or internal topics never get created.
default.replication.factor=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
# Consumer groups (tests, ingest) join at once instead of waiting 3 s for more members.
group.initial.rebalance.delay.ms=0
EOF
  if kafka_sasl_wanted; then kafka_sasl_config >>"$KAFKA_CONFIG"; fi
}

kafka_java() {
  local main="$1"
  shift
  "$(java_bin)" -Xms256m -Xmx1g -XX:+UseG1GC -Djava.awt.headless=true \
    "-Dlog4j2.configurationFile=$STACK_HOME/conf/log4j2.properties" "-Dpda.stack.dir=$PDA_STACK_DIR" \
    -cp "$KAFKA_LIBS/*" "$main" "$@"
}

kafka_format() {
  [[ -f "$KAFKA_HOME/data/meta.properties" ]] && return 0
  local cluster_id
  cluster_id="$(kafka_java kafka.tools.StorageTool random-uuid 2>>"$KAFKA_LOG" | tail -n1)"
  [[ -n "$cluster_id" ]] || die "kafka StorageTool random-uuid failed; see $KAFKA_LOG"
  log "formatting Kafka storage (cluster $cluster_id)"
  # SASL mode: the SCRAM users are created with the cluster's metadata (lib/kafka-sasl.sh).
  local scram=()
  if kafka_sasl_wanted; then mapfile -t scram < <(kafka_sasl_format_args); fi
  # Static controller.quorum.voters: format without --standalone.
  kafka_java kafka.tools.StorageTool format -t "$cluster_id" -c "$KAFKA_CONFIG" --ignore-formatted "${scram[@]}" \
    >>"$KAFKA_LOG" 2>&1 || die "formatting Kafka storage failed; see $KAFKA_LOG"
  ((${#scram[@]} == 0)) || touch "$KAFKA_SASL_DIR/users-at-format"
}

# Broker readiness without a JVM: a raw Metadata v4 request over bash's /dev/tcp. The answer lists
# the registered brokers; a count of 1 means the broker is up, unfenced and serving clients.
kafka_broker_count() {
  timeout 5 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    # size=24 | api_key=3 (Metadata) api_version=4 correlation_id=1 client_id="pda-stack" | topics=[] allow_auto_topic_creation=false
    printf "\x00\x00\x00\x18\x00\x03\x00\x04\x00\x00\x00\x01\x00\x09pda-stack\x00\x00\x00\x00\x00" >&3
    # response: size(4) correlation_id(4) throttle_time_ms(4) brokers.length(4)
    head -c 16 <&3 | od -An -tu1 | awk "{ print \$13 * 16777216 + \$14 * 65536 + \$15 * 256 + \$16 }"
  ' _ "$PDA_KAFKA_PORT"
}

kafka_ready() { [[ "$(kafka_broker_count 2>/dev/null)" -ge 1 ]]; }

kafka_start() {
  if running_pid kafka >/dev/null; then
    kafka_sasl_mode_unchanged
    wait_until "$PDA_STACK_TIMEOUT" "kafka ready" kafka_ready || die "Kafka runs but does not answer on port $PDA_KAFKA_PORT; see $KAFKA_LOG"
    return 0
  fi
  require_free_port "$PDA_KAFKA_PORT" PDA_KAFKA_PORT
  require_free_port "$PDA_KAFKA_CONTROLLER_PORT" PDA_KAFKA_CONTROLLER_PORT
  if kafka_sasl_wanted; then
    require_free_port "$PDA_KAFKA_SASL_PORT" PDA_KAFKA_SASL_PORT
    kafka_sasl_material
  fi
  mkdir -p "$RUN_DIR" "$LOG_DIR"
  kafka_write_config
  kafka_format
  log "starting Kafka $PDA_KAFKA_VERSION (KRaft) on 127.0.0.1:$PDA_KAFKA_PORT$(kafka_sasl_wanted && printf ', SASL_SSL on 127.0.0.1:%s' "$PDA_KAFKA_SASL_PORT")"
  rm -f "$(pid_file kafka)"
  # setsid + no inherited stdio: the broker outlives this script and never holds a caller's pipe open.
  setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$(pid_file kafka)" \
    "$(java_bin)" -Xms256m -Xmx1g -XX:+UseG1GC -Djava.awt.headless=true \
    "-Dlog4j2.configurationFile=$STACK_HOME/conf/log4j2.properties" "-Dpda.stack.dir=$PDA_STACK_DIR" \
    -cp "$KAFKA_LIBS/*" kafka.Kafka "$KAFKA_CONFIG" </dev/null >>"$KAFKA_LOG" 2>&1 9>&- &
  wait_for_start kafka kafka_ready "$KAFKA_LOG"
  if kafka_sasl_wanted; then
    wait_until "$PDA_STACK_TIMEOUT" "kafka SASL_SSL listener ready" kafka_sasl_ready ||
      die "Kafka's SASL_SSL listener does not answer on port $PDA_KAFKA_SASL_PORT; see $KAFKA_LOG"
  fi
}

# A running Kafka keeps the mode it was started with: switching needs a start, so say so.
kafka_sasl_mode_unchanged() {
  local running=0 wanted=0
  grep -q '^listeners=.*SASL_SSL://' "$KAFKA_CONFIG" 2>/dev/null && running=1
  kafka_sasl_wanted && wanted=1
  ((running == wanted)) ||
    die "Kafka runs with PDA_STACK_KAFKA_SASL=$running, asked for $wanted: run 'stack.sh down' first (the mode changes at start)"
}

# Poll readiness, but stop waiting at once if the process died (a crash must not look like a hang).
wait_for_start() {
  local name="$1" probe="$2" logfile="$3" deadline=$((SECONDS + PDA_STACK_TIMEOUT))
  local pidfile
  pidfile="$(pid_file "$name")"
  until "$probe" 2>/dev/null; do
    if [[ -s "$pidfile" ]] && ! running_pid "$name" >/dev/null; then
      tail -n 20 "$logfile" >&2
      die "$name exited during start-up; see $logfile"
    fi
    ((SECONDS < deadline)) || die "$name not ready after ${PDA_STACK_TIMEOUT}s; see $logfile"
    sleep 0.5
  done
  log "$name ready"
}

kafka_stop() { stop_pid kafka 90; }

kafka_status() {
  local pid
  if pid="$(running_pid kafka)"; then
    if kafka_ready; then
      echo "kafka      running  127.0.0.1:$PDA_KAFKA_PORT  pid=$pid"
    else
      echo "kafka      starting/unhealthy  pid=$pid"
    fi
  else
    echo "kafka      stopped"
  fi
}
