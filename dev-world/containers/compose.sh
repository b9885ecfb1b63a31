#!/usr/bin/env bash
# The container path in one command (the native stack, dev-world/stack/stack.sh, stays the default):
#   bash dev-world/containers/compose.sh up      build the images (cached), start the pipeline, seed the
#                                          demo data, issue a demo key, print how to call the api
#   bash dev-world/containers/compose.sh down    stop and remove containers, network and volumes
#   bash dev-world/containers/compose.sh ps | logs [SERVICE] | exec ...   passed to docker-compose
# Host ports (127.0.0.1 only) default to the native stack's: run one or the other, or set
# PDA_PG_PORT, PDA_KAFKA_PORT, PDA_CONNECT_PORT, PDA_REGISTRY_PORT, API_PORT, API_ADMIN_PORT, INGEST_ADMIN_PORT.
# COMPOSE_PROJECT_NAME (default pda) names containers and volumes.
# Secrets (the api's cursor secret, the PostgreSQL passwords) come from PDA_COMPOSE_ENV_FILE (default
# <repo>/.env), which `up` writes with random values when it is missing (lib/secrets.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
source "$CONTAINERS_HOME/lib/engine.sh"
source "$CONTAINERS_HOME/lib/secrets.sh"

export COMPOSE_PROJECT_NAME="${COMPOSE_PROJECT_NAME:-pda}"
export PDA_PG_PORT="${PDA_PG_PORT:-55432}" API_PORT="${API_PORT:-8080}"
export API_PUBLIC_BASE_URL="${API_PUBLIC_BASE_URL:-http://127.0.0.1:$API_PORT}"

compose() {
  "${COMPOSE[@]}" --project-directory "$REPO_ROOT" -f "$REPO_ROOT/docker-compose.yml" \
    --env-file "$REPO_ROOT/dev-world/stack/versions.env" "$@"
}

load_tables() {
  ensure_node
  PDA_CAPTURED_TABLES=$(node "$REPO_ROOT/dev-world/stack/captured-tables.ts") ||
    containers_die "could not read the captured tables from the table registry"
  export PDA_CAPTURED_TABLES
}

# until CMD succeeds, at most SECONDS; WHAT names it in the error.
wait_for() {
  local seconds="$1" what="$2" deadline
  shift 2
  deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || containers_die "$what not ready after ${seconds}s (bash dev-world/containers/compose.sh logs)"
    sleep 1
  done
}

http_200() { [[ "$(curl -s -o /dev/null -w '%{http_code}' "$@")" == 200 ]]; }

# The demo data and a demo key, written into the containers' PostgreSQL by @pda/dev-world and @pda/operator-tools from the host
# (scripts/lib/bootstrap.sh installs Node 24, pnpm and the workspace when missing).
seed_demo() {
  # shellcheck source=../../scripts/lib/bootstrap.sh
  source "$REPO_ROOT/scripts/lib/bootstrap.sh"
  # PDA_PG_PASSWORD: exported from the env file (load_env_file).
  export PDA_PG_HOST=127.0.0.1 PDA_PG_USER=pda PDA_PG_DATABASE=pda
  local count
  count=$(compose exec -T postgres psql -U pda -d pda -tAc 'SELECT count(*) FROM companies' | tr -d '[:space:]')
  if [[ "$count" == 0 ]]; then
    containers_log "seeding demo data (3 companies)"
    (cd "$REPO_ROOT" && pnpm --silent --filter @pda/dev-world seed -- --companies 3 --seed 42) >&2
  fi
  local company
  company=$(compose exec -T postgres psql -U pda -d pda -tAc \
    'SELECT c.id FROM companies c ORDER BY (SELECT count(*) FROM sites s WHERE s.company_id = c.id) DESC, c.id LIMIT 1' | tr -d '[:space:]')
  containers_log "issuing a demo API key for company $company (shown once)"
  (cd "$REPO_ROOT" && pnpm --silent --filter @pda/operator-tools keys -- issue --company "$company" --name "compose demo key" \
    --scopes sites:read,services:read,equipment:read,equipment-categories:read,consumables:read --json) |
    node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>console.log(JSON.parse(s).key))'
}

cmd_up() {
  bash "$CONTAINERS_HOME/build-images.sh"
  load_tables
  ensure_env_file
  load_env_file
  compose up -d
  wait_for 300 "the api" http_200 "http://127.0.0.1:$API_PORT/v1/version"
  local key
  key=$(seed_demo)
  wait_for 180 "the demo key" http_200 -H "Authorization: Bearer $key" "http://127.0.0.1:$API_PORT/v1/me"
  cat <<EOT
The pipeline runs in containers (project $COMPOSE_PROJECT_NAME): PostgreSQL → Debezium → Kafka → ingest → api.
Demo API key (shown once; only its SHA-256 is stored):
  export KEY='$key'
Try:
  curl -s -H "Authorization: Bearer \$KEY" "http://127.0.0.1:$API_PORT/v1/sites?limit=2"
Secrets (the PostgreSQL passwords, the api's cursor secret): $COMPOSE_ENV_FILE, kept by 'down'.
Stop and remove everything: bash dev-world/containers/compose.sh down
EOT
}

ensure_docker_engine
compose_command
case "${1:-}" in
up) cmd_up ;;
down)
  load_tables
  load_env_file
  placeholder_secrets
  compose down -v --remove-orphans
  ;;
ps | logs | exec | restart | stop | start)
  load_tables
  load_env_file
  compose "$@"
  ;;
-h | --help | "") sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
*) containers_die "unknown command '$1' (up, down, ps, logs, exec, restart, stop, start)" ;;
esac
