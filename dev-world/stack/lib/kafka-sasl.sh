# shellcheck shell=bash
# The opt-in SASL_SSL mode of the stack's Kafka (PDA_STACK_KAFKA_SASL=1; dev-world/stack/README.md,
# "Kafka over TLS + SASL"): a second listener on PDA_KAFKA_SASL_PORT speaking TLS with a certificate
# from a CA made here at the first `up`, SCRAM-SHA-512 (and PLAIN) users, Kafka's StandardAuthorizer
# with the ACLs of docs/operations.md ("Kafka is a trust boundary"), and Kafka Connect producing
# through that listener as its own principal. The plaintext listener stays for the stack's tools.

PDA_KAFKA_SASL_PORT="${PDA_KAFKA_SASL_PORT:-59094}"
KAFKA_SASL_DIR="$PDA_STACK_DIR/kafka/sasl"
# Principals (SCRAM users): Connect writes the data topics, ingest reads them, `other` is any other
# client of the cluster (the e2e test shows it refused).
KAFKA_SASL_USERS=(connect ingest other)
# What the stack grants, once per stack dir (a JVM per command costs seconds).
KAFKA_ACLS_MARKER="$KAFKA_SASL_DIR/acls-applied"

# On, when asked for; otherwise what the stack's Kafka was last started with (the mode changes only
# with a fresh start: `down` first).
kafka_sasl_wanted() {
  case "${PDA_STACK_KAFKA_SASL:-}" in
  1) return 0 ;;
  0) return 1 ;;
  "") [[ -f "$KAFKA_CONFIG" ]] && grep -q '^listeners=.*SASL_SSL://' "$KAFKA_CONFIG" ;;
  *) die "PDA_STACK_KAFKA_SASL='$PDA_STACK_KAFKA_SASL': expected 1 or 0" ;;
  esac
}

kafka_sasl_password_file() { printf '%s/%s.password' "$KAFKA_SASL_DIR" "$1"; }

# CA, broker key + certificate (PEM, which Kafka reads as a keystore), one random password per user.
# Made once per stack dir; `down --purge` deletes them with it.
kafka_sasl_material() {
  [[ -f "$KAFKA_SASL_DIR/broker-keystore.pem" ]] && return 0
  command -v openssl >/dev/null || die "PDA_STACK_KAFKA_SASL=1 needs openssl (apt-get install -y openssl)"
  log "making the Kafka TLS certificates and SCRAM passwords in $KAFKA_SASL_DIR"
  mkdir -p "$KAFKA_SASL_DIR"
  chmod 700 "$KAFKA_SASL_DIR"
  (
    cd "$KAFKA_SASL_DIR" && umask 077 &&
      openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj '/CN=pda-stack Kafka CA' \
        -keyout ca.key -out ca.pem \
        -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' &&
      openssl req -newkey rsa:2048 -nodes -subj '/CN=localhost' -keyout broker.key -out broker.csr &&
      printf '%s\n' 'subjectAltName=IP:127.0.0.1,DNS:localhost' 'extendedKeyUsage=serverAuth' \
        'keyUsage=critical,digitalSignature,keyEncipherment' 'basicConstraints=CA:FALSE' >broker.ext &&
      openssl x509 -req -days 825 -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
        -extfile broker.ext -out broker.pem &&
      cat broker.key broker.pem ca.pem >broker-keystore.pem &&
      rm -f broker.csr broker.ext ca.srl &&
      for user in "${KAFKA_SASL_USERS[@]}"; do openssl rand -hex 24 >"$user.password"; done
  ) >>"$KAFKA_LOG" 2>&1 || {
    rm -f "$KAFKA_SASL_DIR/broker-keystore.pem"
    die "making the Kafka certificates with openssl failed; see $KAFKA_LOG"
  }
}

# server.properties lines of the SASL_SSL listener and the authorizer (appended by kafka_write_config).
kafka_sasl_config() {
  local connect_pw ingest_pw
  connect_pw="$(<"$(kafka_sasl_password_file connect)")"
  ingest_pw="$(<"$(kafka_sasl_password_file ingest)")"
  cat <<EOF
# PDA_STACK_KAFKA_SASL=1 (lib/kafka-sasl.sh): TLS + SASL on its own listener.
sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
# PLAIN's users live here (SCRAM's in the cluster metadata): the same password as ingest's SCRAM user.
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_ingest="$ingest_pw" user_connect="$connect_pw";
listener.name.sasl_ssl.ssl.keystore.type=PEM
listener.name.sasl_ssl.ssl.keystore.location=$KAFKA_SASL_DIR/broker-keystore.pem
# Every request is authorized; nothing is allowed without an ACL, except to super users. User:ANONYMOUS
# is the plaintext listeners' principal: the controller's (KRaft requires it to be a super user) and
# the stack's own tools on 127.0.0.1 (lib/topics.sh). A production cluster has no such listener for
# clients (docs/operations.md, "Kafka is a trust boundary").
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:ANONYMOUS
EOF
}

# StorageTool format arguments: the SCRAM users, created with the cluster's metadata.
kafka_sasl_format_args() {
  local user
  for user in "${KAFKA_SASL_USERS[@]}"; do
    printf '%s\n' --add-scram "SCRAM-SHA-512=[name=$user,password=$(<"$(kafka_sasl_password_file "$user")")]"
  done
}

# Kafka's AclCommand (kafka-acls.sh) lives in org.apache.kafka:kafka-tools, which the broker's
# classpath lacks: that one jar from Maven Central (lib/fetch.sh central_file, checked against its
# .sha1), its dependencies being the broker's.
KAFKA_TOOLS_JAR=""

acl_command() {
  [[ -n "$KAFKA_TOOLS_JAR" ]] ||
    KAFKA_TOOLS_JAR="$(central_file org.apache.kafka kafka-tools "$PDA_KAFKA_VERSION" "kafka-tools-$PDA_KAFKA_VERSION.jar")"
  # Over the plaintext listener, whose principal is a super user.
  "$(java_bin)" -Xmx256m "-Dlog4j2.configurationFile=$STACK_HOME/conf/log4j2.properties" "-Dpda.stack.dir=$PDA_STACK_DIR" \
    -cp "$KAFKA_LIBS/*:$KAFKA_TOOLS_JAR" org.apache.kafka.tools.AclCommand \
    --bootstrap-server "127.0.0.1:$PDA_KAFKA_PORT" "$@" >>"$KAFKA_LOG" 2>&1
}

# The SCRAM users of a Kafka formatted before SASL mode, then the ACLs; once per stack dir.
kafka_sasl_provision() {
  [[ -f "$KAFKA_ACLS_MARKER" ]] && return 0
  local user
  if [[ ! -f "$KAFKA_SASL_DIR/users-at-format" ]]; then
    for user in "${KAFKA_SASL_USERS[@]}"; do
      kafka_java kafka.admin.ConfigCommand --bootstrap-server "127.0.0.1:$PDA_KAFKA_PORT" --alter \
        --entity-type users --entity-name "$user" \
        --add-config "SCRAM-SHA-512=[password=$(<"$(kafka_sasl_password_file "$user")")]" >>"$KAFKA_LOG" 2>&1 ||
        die "creating the SCRAM user $user failed; see $KAFKA_LOG"
    done
  fi
  log "granting the Kafka ACLs (Connect writes $PDA_TOPIC_PREFIX.*, ingest reads $PDA_TOPIC_PREFIX.public.*)"
  local prefixed=(--resource-pattern-type prefixed)
  # Connect: its worker's own topics and group, the data and heartbeat topics (write, create), the
  # cluster's idempotent producer id.
  acl_command --add --allow-principal User:connect --operation All \
    --topic pda-connect- --group pda-connect "${prefixed[@]}" &&
    acl_command --add --allow-principal User:connect --operation Write --operation Create \
      --operation Describe --operation DescribeConfigs \
      --topic "$PDA_TOPIC_PREFIX." --topic "__debezium-heartbeat.$PDA_TOPIC_PREFIX" "${prefixed[@]}" &&
    acl_command --add --allow-principal User:connect --operation IdempotentWrite --operation Describe --cluster &&
    # ingest: read the data and heartbeat topics, and its groups (pda-ingest, the rebuilds'
    # pda-ingest-…); create the data topics Debezium has not created yet and read their settings.
    acl_command --add --allow-principal User:ingest --operation Read --operation Describe \
      --topic "$PDA_TOPIC_PREFIX.public." --topic "__debezium-heartbeat.$PDA_TOPIC_PREFIX" \
      --group pda-ingest "${prefixed[@]}" &&
    acl_command --add --allow-principal User:ingest --operation Create --operation DescribeConfigs \
      --topic "$PDA_TOPIC_PREFIX.public." --topic "__debezium-heartbeat.$PDA_TOPIC_PREFIX" "${prefixed[@]}" ||
    die "granting the Kafka ACLs failed; see $KAFKA_LOG"
  touch "$KAFKA_ACLS_MARKER"
}

# Ready for SASL clients: the TLS listener answers with our certificate.
kafka_sasl_ready() {
  timeout 5 openssl s_client -connect "127.0.0.1:$PDA_KAFKA_SASL_PORT" -CAfile "$KAFKA_SASL_DIR/ca.pem" \
    -verify_return_error </dev/null >/dev/null 2>&1
}

# Kafka Connect's client settings for the SASL_SSL listener (lib/connect.sh): the worker's own
# clients and, with the `producer.` prefix, the connectors' producers.
connect_sasl_config() {
  local prefix password
  password="$(<"$(kafka_sasl_password_file connect)")"
  echo "# PDA_STACK_KAFKA_SASL=1: Connect produces as User:connect through the SASL_SSL listener."
  for prefix in "" producer.; do
    cat <<EOF
${prefix}security.protocol=SASL_SSL
${prefix}sasl.mechanism=SCRAM-SHA-512
${prefix}sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="$password";
${prefix}ssl.truststore.type=PEM
${prefix}ssl.truststore.location=$KAFKA_SASL_DIR/ca.pem
EOF
  done
}

# The env file's lines for SASL clients (stack.sh write_env_file).
kafka_sasl_env_names() {
  printf '%s\n' PDA_KAFKA_SASL_BROKERS PDA_KAFKA_SASL_MECHANISM PDA_KAFKA_CA_FILE \
    PDA_KAFKA_INGEST_USER PDA_KAFKA_INGEST_PASSWORD_FILE PDA_KAFKA_CONNECT_USER PDA_KAFKA_CONNECT_PASSWORD_FILE \
    PDA_KAFKA_OTHER_USER PDA_KAFKA_OTHER_PASSWORD_FILE
}

kafka_sasl_env() {
  PDA_KAFKA_SASL_BROKERS="127.0.0.1:$PDA_KAFKA_SASL_PORT"
  PDA_KAFKA_SASL_MECHANISM=SCRAM-SHA-512
  PDA_KAFKA_CA_FILE="$KAFKA_SASL_DIR/ca.pem"
  PDA_KAFKA_INGEST_USER=ingest
  PDA_KAFKA_INGEST_PASSWORD_FILE="$(kafka_sasl_password_file ingest)"
  PDA_KAFKA_CONNECT_USER=connect
  PDA_KAFKA_CONNECT_PASSWORD_FILE="$(kafka_sasl_password_file connect)"
  PDA_KAFKA_OTHER_USER=other
  PDA_KAFKA_OTHER_PASSWORD_FILE="$(kafka_sasl_password_file other)"
}
