# shellcheck shell=bash
# The data topics' cleanup settings on an existing stack. Debezium applies connector.json's
# topic.creation.default.* only to topics it creates; topics created before those settings existed
# (cleanup.policy=delete: a rebuild from them silently lacks rows, dev-world/stack/README.md) are altered
# here to the same settings, once per change of the settings.

TOPICS_MARKER="$KAFKA_HOME/data-topic-settings"

# connector.json's topic.creation.default.* without partitions/replication, as sorted k=v,k=v.
data_topic_settings() {
  jq -r '[to_entries[] | select(.key | startswith("topic.creation.default."))
    | {key: (.key | ltrimstr("topic.creation.default.")), value}
    | select(.key != "partitions" and .key != "replication.factor")
    | "\(.key)=\(.value)"] | sort | join(",")' "$CONNECTOR_JSON"
}

# Kafka's ConfigCommand; its log4j lines (they start with "[") go to the Kafka log.
config_command() {
  kafka_java kafka.admin.ConfigCommand --bootstrap-server "127.0.0.1:$PDA_KAFKA_PORT" "$@" 2>>"$KAFKA_LOG" |
    tee -a "$KAFKA_LOG" | sed '/^\[/d'
}

# Names of the `<prefix>.public.*` topics whose dynamic configs lack one of the k=v in $1, read from
# `ConfigCommand --describe --entity-type topics` on stdin.
topics_lacking() {
  awk -v prefix="$PDA_TOPIC_PREFIX.public." -v want="$1" '
    BEGIN { n = split(want, wanted, ",") }
    function flush(i) {
      if (topic != "") for (i = 1; i <= n; i++) if (!(wanted[i] in have)) { print topic; break }
      split("", have)
    }
    /^Dynamic configs for topic / { flush(); topic = (index($5, prefix) == 1) ? $5 : ""; next }
    /^  / { have[$1] = 1 }
    END { flush() }'
}

data_topics_configure() {
  local settings described topic altered=()
  settings="$(data_topic_settings)" || die "dev-world/stack/connector.json is not valid JSON"
  [[ -n "$settings" ]] || return 0
  # A JVM costs seconds: once per settings, so that `up` on a configured stack stays a no-op.
  [[ -f "$TOPICS_MARKER" && "$(<"$TOPICS_MARKER")" == "$settings" ]] && return 0
  described="$(config_command --describe --entity-type topics)" ||
    die "could not describe the Kafka topics; see $KAFKA_LOG"
  while read -r topic; do
    [[ -n "$topic" ]] || continue
    config_command --alter --entity-type topics --entity-name "$topic" --add-config "$settings" >/dev/null ||
      die "could not set $settings on topic $topic; see $KAFKA_LOG"
    altered+=("$topic")
  done < <(printf '%s\n' "$described" | topics_lacking "$settings")
  if ((${#altered[@]} > 0)); then
    log "data topics set to $settings: ${altered[*]}"
  else
    log "data topics: none lacks $settings"
  fi
  printf '%s' "$settings" >"$TOPICS_MARKER"
}

# Kafka cannot re-partition a CDC topic safely: adding partitions moves companies to other
# partitions while their earlier events stay on the old one, so two writers would each hold half a
# company's history. So `up` refuses when a tenant topic already exists with another partition count
# than PDA_DATA_PARTITIONS. The counts come from the broker's log dir (one broker: each partition is a
# directory `<topic>-<n>`; a deleted one is renamed `…-delete`), so the check costs no JVM.
data_topics_partitions_check() {
  local table topic count
  data_partitions_check
  [[ -d "$KAFKA_HOME/data" ]] || return 0 # a new stack: no topic yet
  for table in $(partitioned_tenant_tables); do
    topic="$PDA_TOPIC_PREFIX.public.$table"
    count="$(find "$KAFKA_HOME/data" -mindepth 1 -maxdepth 1 -type d -regextype posix-extended \
      -regex ".*/${topic//./\\.}-[0-9]+" 2>/dev/null | wc -l)"
    ((count == 0 || count == PDA_DATA_PARTITIONS)) ||
      die "topic $topic has $count partition(s) but PDA_DATA_PARTITIONS=$PDA_DATA_PARTITIONS: existing topics cannot be re-partitioned; set PDA_DATA_PARTITIONS=$count, or make a new deployment with new topics (stack.sh reset, or another PDA_STACK_DIR)"
  done
}
