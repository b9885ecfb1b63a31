#!/usr/bin/env bash
# Kafka Connect (distributed) with the Debezium plugin, configured like the official Debezium
# image: BOOTSTRAP_SERVERS, GROUP_ID, CONFIG/OFFSET/STATUS_STORAGE_TOPIC, OFFSET_FLUSH_INTERVAL_MS,
# and any CONNECT_FOO_BAR=v as foo.bar=v (env-properties.sh).
set -euo pipefail
source /opt/kafka/bin/env-properties.sh
config=/tmp/connect-worker.properties
{
  echo "bootstrap.servers=${BOOTSTRAP_SERVERS:?BOOTSTRAP_SERVERS is required}"
  echo "group.id=${GROUP_ID:-connect}"
  echo "config.storage.topic=${CONFIG_STORAGE_TOPIC:-connect-configs}"
  echo "offset.storage.topic=${OFFSET_STORAGE_TOPIC:-connect-offsets}"
  echo "status.storage.topic=${STATUS_STORAGE_TOPIC:-connect-status}"
  echo "offset.flush.interval.ms=${OFFSET_FLUSH_INTERVAL_MS:-60000}"
  echo "listeners=http://0.0.0.0:8083"
  echo "rest.advertised.host.name=${ADVERTISED_HOST_NAME:-$(hostname)}"
  echo "plugin.path=/opt/kafka/plugins"
  echo "plugin.discovery=service_load"
  echo "key.converter=org.apache.kafka.connect.json.JsonConverter"
  echo "value.converter=org.apache.kafka.connect.json.JsonConverter"
  env_properties CONNECT_
} >"$config"
# shellcheck disable=SC2086 # KAFKA_HEAP holds several JVM options
exec java $KAFKA_HEAP -XX:+UseG1GC -Djava.awt.headless=true \
  "-Dlog4j2.configurationFile=$LOG4J_CONFIGURATION_FILE" -cp "/opt/kafka/libs/*" \
  org.apache.kafka.connect.cli.ConnectDistributed "$config"
