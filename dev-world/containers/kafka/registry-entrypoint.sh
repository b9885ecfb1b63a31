#!/usr/bin/env bash
# Apicurio Registry with SQL storage on PostgreSQL, configured like the native stack's
# (dev-world/stack/lib/registry.sh): REGISTRY_DATASOURCE_URL (jdbc:postgresql://host:port/db, required),
# REGISTRY_DATASOURCE_USERNAME (default pda_registry), REGISTRY_DATASOURCE_PASSWORD or
# REGISTRY_DATASOURCE_PASSWORD_FILE (a file holding it, e.g. a compose or Kubernetes secret; one of
# them required, no default), REGISTRY_COMPATIBILITY (the global compatibility rule, default
# BACKWARD_TRANSITIVE), REGISTRY_PORT (default 8080), REGISTRY_HEAP.
# The password reaches the JVM through its environment (Quarkus reads apicurio.datasource.password
# from APICURIO_DATASOURCE_PASSWORD), never its command line, which `ps` shows to every user.
set -euo pipefail
if [[ -n "${REGISTRY_DATASOURCE_PASSWORD_FILE:-}" ]]; then
  APICURIO_DATASOURCE_PASSWORD="$(<"$REGISTRY_DATASOURCE_PASSWORD_FILE")"
else
  APICURIO_DATASOURCE_PASSWORD="${REGISTRY_DATASOURCE_PASSWORD:?REGISTRY_DATASOURCE_PASSWORD (or REGISTRY_DATASOURCE_PASSWORD_FILE) is required}"
fi
export APICURIO_DATASOURCE_PASSWORD
unset REGISTRY_DATASOURCE_PASSWORD
jar=$(find "${REGISTRY_HOME:-/opt/registry}" -maxdepth 1 -name 'apicurio-registry-app-*-runner.jar' -print -quit)
# shellcheck disable=SC2086 # REGISTRY_HEAP holds several JVM options
exec java ${REGISTRY_HEAP:--Xms128m -Xmx512m} -XX:+UseG1GC -Djava.awt.headless=true \
  -Dquarkus.http.host=0.0.0.0 "-Dquarkus.http.port=${REGISTRY_PORT:-8080}" \
  -Dquarkus.http.access-log.enabled=false '-Dquarkus.log.category."io.apicurio".level=INFO' \
  '-Dquarkus.log.console.format=%d{yyyy-MM-dd HH:mm:ss} %p [%c{2.}] %m%n' '-Dapicurio.app.name=Apicurio Registry' \
  -Dapicurio.storage.kind=sql -Dapicurio.storage.sql.kind=postgresql \
  "-Dapicurio.datasource.url=${REGISTRY_DATASOURCE_URL:?REGISTRY_DATASOURCE_URL is required}" \
  "-Dapicurio.datasource.username=${REGISTRY_DATASOURCE_USERNAME:-pda_registry}" \
  -Dapicurio.datasource.jdbc.initial-size=2 -Dapicurio.datasource.jdbc.min-size=2 -Dapicurio.datasource.jdbc.max-size=10 \
  "-Dapicurio.rules.global.compatibility=${REGISTRY_COMPATIBILITY:-BACKWARD_TRANSITIVE}" \
  -jar "$jar"
