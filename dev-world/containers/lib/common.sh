# shellcheck shell=bash
# Shared settings of the container scripts (build-images.sh, compose.sh): the pins of the native
# stack (dev-world/stack/versions.env), the Node pin (scripts/lib/runtime.env), image names, helpers.

CONTAINERS_HOME="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REPO_ROOT="$(cd "$CONTAINERS_HOME/../.." && pwd)"

# The native stack's settings and helpers (versions, cache dirs, Maven fetch of the same jars).
# shellcheck source=../../stack/lib/common.sh
source "$REPO_ROOT/dev-world/stack/lib/common.sh"
# shellcheck source=../../../scripts/lib/runtime.env
source "$REPO_ROOT/scripts/lib/runtime.env"

# Image names. The tag of the infrastructure images is the pinned version they carry.
PDA_IMAGE_PREFIX="${PDA_IMAGE_PREFIX:-pda}"
PDA_BASE_IMAGE="${PDA_BASE_IMAGE:-}" # empty: the Debian base made here (below); else e.g. debian:bookworm-slim
PDA_LOCAL_BASE_IMAGE="$PDA_IMAGE_PREFIX/debian:bookworm"
PDA_CONTAINERS_LOG_DIR="${PDA_CONTAINERS_LOG_DIR:-$PDA_CACHE_DIR/container-logs}"

image_node="$PDA_IMAGE_PREFIX/node:$PDA_NODE_VERSION"
image_postgres="$PDA_IMAGE_PREFIX/postgres:$PDA_PG_MAJOR"
image_kafka="$PDA_IMAGE_PREFIX/kafka:$PDA_KAFKA_VERSION"
image_connect="$PDA_IMAGE_PREFIX/connect:$PDA_DEBEZIUM_VERSION"
image_registry="$PDA_IMAGE_PREFIX/registry:$PDA_APICURIO_REGISTRY_VERSION"
image_ingest="$PDA_IMAGE_PREFIX/ingest:latest"
image_api="$PDA_IMAGE_PREFIX/api:latest"

containers_log() { printf 'containers: %s\n' "$*" >&2; }
containers_die() {
  printf 'containers: error: %s\n' "$*" >&2
  exit 1
}
