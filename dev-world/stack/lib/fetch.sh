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
# peer uses it (bench/peers/jdbc-sink.ts), so it is fetched only when PDA_STACK_JDBC_SINK=1, into its
# own plugin folder that Connect's plugin.path names only then (35 MB, and Connect starts faster
# without Hibernate on its plugin path).
fetch_jdbc_sink_plugin() {
  fetch_plugin_archive debezium-connector-jdbc "$JDBC_SINK_PLUGINS" "Debezium JDBC sink connector (PDA_STACK_JDBC_SINK=1)"
}

jdbc_sink_wanted() { [[ "${PDA_STACK_JDBC_SINK:-0}" == 1 ]]; }

# unzip when installed, else Python's zipfile (Python 3 is a prerequisite of the repo anyway).
unpack_zip() {
  if command -v unzip >/dev/null; then unzip -q -o "$1" -d "$2"; else python3 -m zipfile -e "$1" "$2"; fi
}

# central_file GROUP ARTIFACT VERSION FILE_NAME: one file of Maven Central into the local Maven
# repository (where Maven would put it), checked against Central's .sha1; prints its path. For
# artifacts Maven itself cannot resolve: their parent POM is not on Central.
central_file() {
  local group_path="${1//.//}" artifact="$2" version="$3" name="$4"
  local dir="$PDA_MAVEN_REPO_LOCAL/$group_path/$artifact/$version"
  local url="$PDA_MAVEN_CENTRAL/$group_path/$artifact/$version/$name"
  if [[ ! -f "$dir/$name" ]]; then
    require_maven_central
    mkdir -p "$dir"
    local expected
    expected="$(curl -fsS --connect-timeout 10 -m 60 "$url.sha1" 2>>"$MAVEN_LOG" | cut -c1-40)" ||
      die "could not download $url.sha1; see $MAVEN_LOG"
    curl -fsS --connect-timeout 10 -m 900 -o "$dir/$name.part" "$url" 2>>"$MAVEN_LOG" ||
      die "could not download $url; see $MAVEN_LOG"
    [[ "$(sha1sum "$dir/$name.part" | cut -d' ' -f1)" == "$expected" ]] ||
      die "$url does not match its .sha1 ($expected); deleted, try again"
    mv "$dir/$name.part" "$dir/$name"
  fi
  printf '%s' "$dir/$name"
}

# Apicurio Registry: the `all` zip of io.apicurio:apicurio-registry-app (109 MB, once) holds a Quarkus
# runner jar and its lib/; unpacked into $REGISTRY_APP.
fetch_registry_app() {
  [[ -f "$REGISTRY_APP/.complete" ]] && return 0
  local v="$PDA_APICURIO_REGISTRY_VERSION" zip
  log "downloading Apicurio Registry $v (109 MB, first run only)"
  zip="$(central_file io.apicurio apicurio-registry-app "$v" "apicurio-registry-app-$v-all.zip")"
  rm -rf "$REGISTRY_APP"
  mkdir -p "$REGISTRY_APP"
  unpack_zip "$zip" "$REGISTRY_APP" >>"$MAVEN_LOG" 2>&1 || die "could not unpack $zip"
  local jar
  jar="$(find "$REGISTRY_APP" -name "apicurio-registry-app-$v-runner.jar" -print -quit)"
  [[ -n "$jar" ]] || die "$zip holds no apicurio-registry-app-$v-runner.jar"
  printf '%s\n' "$jar" >"$REGISTRY_APP/runner-jar"
  touch "$REGISTRY_APP/.complete"
}

# Apicurio's Kafka Connect converter (tar.gz of jars) as a Connect plugin in $CONVERTER_PLUGINS.
# Connect finds plugins through ServiceLoader manifests here (plugin.discovery=service_load, faster
# start) and the archive has none: a one-file jar beside it names the converter class.
fetch_converter_plugin() {
  [[ -f "$CONVERTER_PLUGINS/.complete" ]] && return 0
  command -v mvn >/dev/null || die "Maven (mvn) not found: needed once to download the Apicurio converter (apt-get install -y maven)"
  local v="$PDA_APICURIO_CONVERTER_VERSION" archive_dir="$CONVERTER_PLUGINS.archive"
  local plugin="$CONVERTER_PLUGINS/apicurio-registry-converter"
  log "downloading the Apicurio Registry Kafka Connect converter $v (8 MB, first run only)"
  rm -rf "$CONVERTER_PLUGINS" "$archive_dir"
  mvn_run "org.apache.maven.plugins:maven-dependency-plugin:$PDA_MAVEN_DEPENDENCY_PLUGIN_VERSION:copy" \
    "-Dartifact=io.apicurio:apicurio-registry-distro-connect-converter:$v:tar.gz" "-DoutputDirectory=$archive_dir"
  mkdir -p "$plugin"
  tar -xzf "$archive_dir/apicurio-registry-distro-connect-converter-$v.tar.gz" -C "$plugin" ||
    die "could not unpack the Apicurio converter archive in $archive_dir"
  ls "$plugin"/apicurio-registry-utils-converter-*.jar >/dev/null 2>&1 ||
    die "the Apicurio converter archive holds no apicurio-registry-utils-converter jar"
  local services="$archive_dir/services"
  mkdir -p "$services/META-INF/services"
  echo 'io.apicurio.registry.utils.converter.AvroConverter' >"$services/META-INF/services/org.apache.kafka.connect.storage.Converter"
  (cd "$services" && python3 -m zipfile -c "$plugin/pda-converter-services.jar" META-INF) ||
    die "could not write the converter's ServiceLoader manifest jar"
  rm -rf "$archive_dir"
  touch "$CONVERTER_PLUGINS/.complete"
}

fetch_all() {
  mkdir -p "$PDA_CACHE_DIR" "$LOG_DIR"
  fetch_kafka_libs
  fetch_debezium_plugin
  fetch_converter_plugin
  fetch_registry_app
  if jdbc_sink_wanted; then fetch_jdbc_sink_plugin; fi
}
