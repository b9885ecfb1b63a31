#!/usr/bin/env bash
# Kafka in KRaft mode from KAFKA_* variables (KAFKA_NODE_ID=1 → node.id=1; env-properties.sh) and
# CLUSTER_ID; storage formatted once (the first start on an empty /var/lib/kafka).
# `healthcheck` as the first argument: exit 0 when the broker answers a Metadata request.
set -euo pipefail
port="${KAFKA_HEALTHCHECK_PORT:-9092}"
if [[ "${1:-}" == healthcheck ]]; then
  exec timeout 4 bash -c '
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf "\x00\x00\x00\x18\x00\x03\x00\x04\x00\x00\x00\x01\x00\x09pda-stack\x00\x00\x00\x00\x00" >&3
    n=$(head -c 16 <&3 | od -An -tu1 | awk "{ print \$13 * 16777216 + \$14 * 65536 + \$15 * 256 + \$16 }")
    [[ "$n" -ge 1 ]]' _ "$port"
fi
source /opt/kafka/bin/env-properties.sh
: "${CLUSTER_ID:?CLUSTER_ID is required (22 characters, e.g. from kafka-storage random-uuid)}"
config=/var/lib/kafka/server.properties
{
  echo "log.dirs=/var/lib/kafka/data"
  env_properties KAFKA_ | grep -v -E '^(heap|healthcheck\.port)='
} >"$config"
java_run() {
  # shellcheck disable=SC2086 # KAFKA_HEAP holds several JVM options
  exec java $KAFKA_HEAP -XX:+UseG1GC -Djava.awt.headless=true \
    "-Dlog4j2.configurationFile=$LOG4J_CONFIGURATION_FILE" -cp "/opt/kafka/libs/*" "$@"
}
if [[ ! -f /var/lib/kafka/data/meta.properties ]]; then
  (java_run kafka.tools.StorageTool format -t "$CLUSTER_ID" -c "$config" --ignore-formatted)
fi
java_run kafka.Kafka "$config"
