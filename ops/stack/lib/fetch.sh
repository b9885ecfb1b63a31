# shellcheck shell=bash
# Downloads the Kafka/Connect jars and the Debezium plugin archive from Maven Central into
# $PDA_CACHE_DIR (outside the stack dir, so `down --purge` keeps them and the next `up` is fast).

MAVEN_LOG="$LOG_DIR/maven.log"

mvn_run() {
  # -o first: a warm ~/.m2 needs no network at all; online only when something is missing.
  local work="$PDA_CACHE_DIR/maven-work"
  mkdir -p "$work"
  cp "$STACK_HOME/maven/pom.xml" "$work/pom.xml"
  local args=(-B -f "$work/pom.xml" "-Dmaven.repo.local=$PDA_MAVEN_REPO_LOCAL"
    "-Dkafka.version=$PDA_KAFKA_VERSION" "-Dscala.binary.version=$PDA_SCALA_BINARY_VERSION"
    "-Dlog4j.version=$PDA_LOG4J_VERSION" "-Dpda.maven.central=$PDA_MAVEN_CENTRAL" "$@")
  if mvn -o "${args[@]}" >>"$MAVEN_LOG" 2>&1; then
    return 0
  fi
  require_maven_central
  # timeout: a network that swallows packets must end in an error line, not a hang.
  timeout 900 mvn "${args[@]}" >>"$MAVEN_LOG" 2>&1 ||
    die "Maven download failed (Kafka $PDA_KAFKA_VERSION / Debezium $PDA_DEBEZIUM_VERSION); see $MAVEN_LOG"
}

require_maven_central() {
  local probe="$PDA_MAVEN_CENTRAL/org/apache/kafka/kafka-clients/$PDA_KAFKA_VERSION/kafka-clients-$PDA_KAFKA_VERSION.pom"
  curl -fsS -o /dev/null --connect-timeout 10 -m 30 "$probe" 2>>"$MAVEN_LOG" ||
    die "Maven Central unreachable at $PDA_MAVEN_CENTRAL (needed once to download Kafka/Debezium jars into $PDA_CACHE_DIR)"
}

fetch_kafka_libs() {
  [[ -f "$KAFKA_LIBS/.complete" ]] && return 0
  command -v mvn >/dev/null || die "Maven (mvn) not found: needed once to download Kafka jars (apt-get install -y maven)"
  log "downloading Kafka $PDA_KAFKA_VERSION + Connect runtime + log4j $PDA_LOG4J_VERSION jars (first run only)"
  rm -rf "$KAFKA_LIBS"
  mvn_run "org.apache.maven.plugins:maven-dependency-plugin:$PDA_MAVEN_DEPENDENCY_PLUGIN_VERSION:copy-dependencies" \
    "-DoutputDirectory=$KAFKA_LIBS" -DincludeScope=runtime
  touch "$KAFKA_LIBS/.complete"
}

# fetch_plugin_archive ARTIFACT_ID DEST_DIR WHAT: Debezium's `<artifact>:<version>:tar.gz:plugin`
# archive from Maven Central, unpacked into DEST_DIR (a Connect plugin.path entry) once.
fetch_plugin_archive() {
  local artifact="$1" dest="$2" what="$3"
  [[ -f "$dest/.complete" ]] && return 0
  command -v mvn >/dev/null || die "Maven (mvn) not found: needed once to download Debezium (apt-get install -y maven)"
  log "downloading $what $PDA_DEBEZIUM_VERSION plugin archive (first run only)"
  local archive_dir="$dest.archive"
  rm -rf "$dest" "$archive_dir"
  mvn_run "org.apache.maven.plugins:maven-dependency-plugin:$PDA_MAVEN_DEPENDENCY_PLUGIN_VERSION:copy" \
    "-Dartifact=io.debezium:$artifact:$PDA_DEBEZIUM_VERSION:tar.gz:plugin" \
    "-DoutputDirectory=$archive_dir"
  mkdir -p "$dest"
  # The archive holds <artifact>/*.jar; plugin.path names its parent folder.
  tar -xzf "$archive_dir/$artifact-$PDA_DEBEZIUM_VERSION-plugin.tar.gz" -C "$dest" ||
    die "could not unpack the $what archive in $archive_dir"
  [[ -d "$dest/$artifact" ]] || die "the $what archive did not contain $artifact/"
  touch "$dest/.complete"
}

fetch_debezium_plugin() {
  fetch_plugin_archive debezium-connector-postgres "$CONNECT_PLUGINS" "Debezium PostgreSQL connector"
}

# Debezium's JDBC sink connector (same version as the source connector): only the ingest benchmark's
# peer uses it (bench/jdbc-sink-peer.ts), so it is fetched only when PDA_STACK_JDBC_SINK=1, into its
# own plugin folder that Connect's plugin.path names only then (35 MB, and Connect starts faster
# without Hibernate on its plugin path).
fetch_jdbc_sink_plugin() {
  fetch_plugin_archive debezium-connector-jdbc "$JDBC_SINK_PLUGINS" "Debezium JDBC sink connector (PDA_STACK_JDBC_SINK=1)"
}

jdbc_sink_wanted() { [[ "${PDA_STACK_JDBC_SINK:-0}" == 1 ]]; }

fetch_all() {
  mkdir -p "$PDA_CACHE_DIR" "$LOG_DIR"
  fetch_kafka_libs
  fetch_debezium_plugin
  if jdbc_sink_wanted; then fetch_jdbc_sink_plugin; fi
}
