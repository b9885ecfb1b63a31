#!/usr/bin/env bash
# Builds every image of the container path, in order, idempotent and cached:
#   pda/debian:bookworm   the Debian base (debootstrap; skipped when PDA_BASE_IMAGE names one)
#   pda/node:<v>          Node 24 + pnpm toolbox (the Node the scripts pin)
#   pda/postgres:15       PostgreSQL with logical decoding
#   pda/kafka:<v>         Kafka (KRaft) from the native stack's jars
#   pda/connect:<v>       Kafka Connect + the Debezium PostgreSQL connector + the Apicurio converter
#   pda/registry:<v>      Apicurio schema registry (SQL storage on PostgreSQL)
#   pda/ingest:latest     the ingest deployable      } also tagged with the git revision
#   pda/api:latest        the api deployable         }
# Usage: bash dev-world/containers/build-images.sh [--only NAME...]   (dev-world/containers/README.md)
# Installs and starts the Docker engine from Debian's packages when missing (root).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$CONTAINERS_HOME/lib/engine.sh"
source "$CONTAINERS_HOME/lib/base-image.sh"
source "$CONTAINERS_HOME/lib/context.sh"
source "$REPO_ROOT/dev-world/stack/lib/fetch.sh"

only=()
while (($# > 0)); do
  case "$1" in
  --only)
    shift
    while (($# > 0)) && [[ "$1" != --* ]]; do
      only+=("$1")
      shift
    done
    ;;
  -h | --help)
    sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *) containers_die "unknown argument '$1' (usage: build-images.sh [--only node postgres kafka connect registry ingest api])" ;;
  esac
done
wanted() { ((${#only[@]} == 0)) || [[ " ${only[*]} " == *" $1 "* ]]; }

revision=$(git -C "$REPO_ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
short_revision=${revision:0:12}
branch=$(git -C "$REPO_ROOT" rev-parse --abbrev-ref HEAD 2>/dev/null || true)
[[ "$branch" == HEAD ]] && branch=""
tag=$(git -C "$REPO_ROOT" describe --tags --exact-match 2>/dev/null || true)
version=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$REPO_ROOT/api/package.json" | head -n 1)
mkdir -p "$PDA_CONTAINERS_LOG_DIR"

# build IMAGE CONTEXT [docker build args...]: one `docker build`, its output in a log, one line of
# progress per step so a long build never looks hung, the image's size at the end.
build() {
  local image="$1" context="$2" started=$SECONDS log
  shift 2
  log="$PDA_CONTAINERS_LOG_DIR/build-${image//[\/:]/_}.log"
  containers_log "building $image (log: $log)"
  if ! docker build --network host --build-arg "BASE_IMAGE=$BASE_IMAGE" --build-arg "REVISION=$revision" \
    -t "$image" "$@" "$context" 2>&1 | tee "$log" | grep --line-buffered -E '^Step [0-9]+/[0-9]+' |
    sed -u 's/^/    /' >&2; then
    tail -n 30 "$log" >&2
    containers_die "building $image failed; see $log"
  fi
  docker image inspect "$image" >/dev/null 2>&1 || containers_die "building $image failed; see $log"
  local size
  size=$(docker image inspect -f '{{.Size}}' "$image")
  containers_log "built $image in $((SECONDS - started)) s ($((size / 1000000)) MB)"
}

started=$SECONDS
ensure_docker_engine
ensure_base_image
ensure_node
ensure_pnpm_home() {
  PNPM_VERSION=$(sed -n 's/.*"packageManager": *"pnpm@\([^"]*\)".*/\1/p' "$REPO_ROOT/package.json")
  PNPM_HOME_DIR="$pda_tools_cache/pnpm-$PNPM_VERSION/lib/node_modules/pnpm"
  if [[ ! -f "$PNPM_HOME_DIR/package.json" ]]; then
    containers_log "installing pnpm@$PNPM_VERSION with npm into $pda_tools_cache (first run only)"
    npm install --global --prefix "$pda_tools_cache/pnpm-$PNPM_VERSION" --no-fund --no-audit "pnpm@$PNPM_VERSION" >/dev/null 2>&1 ||
      containers_die "could not install pnpm@$PNPM_VERSION from the npm registry"
  fi
}
ensure_pnpm_home

if wanted node; then
  ctx=$(stage_context node)
  stage_copy "$pda_tools_cache/node-$PDA_NODE_VERSION" "$ctx/node"
  stage_copy "$PNPM_HOME_DIR" "$ctx/pnpm"
  build "$image_node" "$ctx"
fi

if wanted postgres; then
  ctx=$(stage_context postgres)
  build "$image_postgres" "$ctx" --build-arg "PG_MAJOR=$PDA_PG_MAJOR"
fi

if wanted kafka || wanted connect || wanted registry; then
  # The native stack's jars, Debezium plugin, Apicurio converter and registry (Maven Central, cached
  # in $PDA_CACHE_DIR).
  fetch_all
  ctx=$(stage_context kafka)
  stage_copy "$KAFKA_LIBS" "$ctx/libs"
  rm -f "$ctx/libs/.complete"
  stage_copy "$CONNECT_PLUGINS" "$ctx/plugins"
  rm -f "$ctx/plugins/.complete"
  stage_copy "$CONVERTER_PLUGINS/apicurio-registry-converter" "$ctx/plugins/apicurio-registry-converter"
  stage_copy "$REGISTRY_APP" "$ctx/registry"
  rm -f "$ctx/registry/.complete" "$ctx/registry/runner-jar"
  cp "$REPO_ROOT/dev-world/stack/conf/log4j2.properties" "$ctx/log4j2.properties"
  args=(--build-arg "KAFKA_VERSION=$PDA_KAFKA_VERSION" --build-arg "DEBEZIUM_VERSION=$PDA_DEBEZIUM_VERSION"
    --build-arg "APICURIO_REGISTRY_VERSION=$PDA_APICURIO_REGISTRY_VERSION")
  if wanted kafka; then build "$image_kafka" "$ctx" --target kafka "${args[@]}"; fi
  if wanted connect; then build "$image_connect" "$ctx" --target connect "${args[@]}"; fi
  if wanted registry; then build "$image_registry" "$ctx" --target registry "${args[@]}"; fi
fi

if wanted ingest || wanted api; then
  docker image inspect "$image_node" >/dev/null 2>&1 || containers_die "$image_node is missing: build it first (--only node)"
  # The build stages that download (pnpm from the npm registry) trust the build machine's extra CAs.
  ca_dir="$REPO_ROOT/dev-world/containers/.build/ca"
  rm -rf "$ca_dir"
  stage_extra_ca "$ca_dir"
  args=(-f "$CONTAINERS_HOME/app/Dockerfile" --build-arg "NODE_IMAGE=$image_node"
    --build-arg "VERSION=$version" --build-arg "BRANCH=$branch" --build-arg "TAG=$tag"
    --build-arg "BUILT_AT=$(LC_ALL=C date -u '+%a %d %b %Y %H:%M:%S UTC')")
  for app in ingest api; do
    wanted "$app" || continue
    image_var="image_$app"
    build "${!image_var}" "$REPO_ROOT" --target "$app" "${args[@]}"
    docker tag "${!image_var}" "$PDA_IMAGE_PREFIX/$app:$short_revision"
  done
fi
containers_log "images ready in $((SECONDS - started)) s"
