#!/usr/bin/env bash
# The product, end to end, on one machine: starts the real stack (PostgreSQL → Debezium → Kafka),
# seeds demo data, issues a demo API key, runs `ingest` and `api`, waits until the key and the data
# are projected, then prints how to call the API. Ctrl-C or SIGTERM stops ingest and api (the stack
# keeps running; `bash dev-world/stack/stack.sh down` stops it).
#
# Environment: DEMO_API_PORT (default 8080), DEMO_DATA_DIR (default .data/demo),
# DEMO_INGEST_ADMIN_PORT (default 9464), DEMO_INGEST_GROUP_ID (default pda-demo; the group's
# offsets belong with the data directory: a new directory needs a new group).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bootstrap.sh
source scripts/lib/stack-env.sh

api_port="${DEMO_API_PORT:-8080}"
data_dir="${DEMO_DATA_DIR:-$PWD/.data/demo}"
admin_port="${DEMO_INGEST_ADMIN_PORT:-9464}"
group_id="${DEMO_INGEST_GROUP_ID:-pda-demo}"
mkdir -p "$data_dir"
data_dir=$(cd "$data_dir" && pwd) # absolute: ingest and api start in their own folders

echo "== starting the stack (first run downloads Kafka, Connect and Debezium from Maven Central)"
bash dev-world/stack/stack.sh up
source_stack_env

# The password in psql's environment, not on its command line (`ps` shows those to every user).
stack_psql() {
  PGPASSWORD="$PDA_PG_PASSWORD" psql -h "$PDA_PG_HOST" -p "$PDA_PG_PORT" -U "$PDA_PG_USER" -d "$PDA_PG_DATABASE" "$@"
}
company_count=$(stack_psql -tAc 'SELECT count(*) FROM companies')
if [ "$company_count" = 0 ]; then
  echo "== seeding demo data (3 companies)"
  pnpm --silent --filter @pda/dev-world seed -- --companies 3 --seed 42
else
  echo "== demo data already present ($company_count companies)"
fi
company_id=$(stack_psql \
  -tAc 'SELECT c.id FROM companies c ORDER BY (SELECT count(*) FROM sites s WHERE s.company_id = c.id) DESC, c.id LIMIT 1')

echo "== issuing a demo API key for company $company_id (shown once)"
key=$(pnpm --silent --filter @pda/operator-tools keys -- issue --company "$company_id" --name "demo key" \
  --scopes sites:read,services:read,equipment:read,equipment-categories:read,consumables:read --json |
  node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>console.log(JSON.parse(s).key))')

# ingest and api run as `exec node …` in a subshell, so $! is the node process itself: a signal to
# it reaches the server (`pnpm start` would not pass it on and leave the server running). On exit,
# Ctrl-C or SIGTERM they are stopped; ingest's drain is bounded (INGEST_DRAIN_TIMEOUT_MS, 15 s), and
# whatever still runs after 20 s is killed.
pids=()
cleanup() {
  ((${#pids[@]} > 0)) || return 0
  echo "== stopping ingest and api"
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  local deadline=$((SECONDS + 20))
  for pid in "${pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  done
  pids=()
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The build stamp GET /v1/version reports (what a deploy script does).
bash api/scripts/stamp-version.sh >/dev/null 2>&1 || true

echo "== starting ingest (log: $data_dir/ingest.log) and api (log: $data_dir/api.log)"
# The node options are those of `pnpm --filter @pda/ingest start` (ingest/package.json).
(cd ingest && INGEST_KAFKA_BROKERS="$PDA_KAFKA_BROKERS" INGEST_DATA_DIR="$data_dir" INGEST_GROUP_ID="$group_id" \
  INGEST_SCHEMA_REGISTRY_URL="$PDA_SCHEMA_REGISTRY_URL" \
  INGEST_ADMIN_PORT="$admin_port" \
  exec node --max-semi-space-size=64 --disable-warning=TimeoutNegativeWarning src/main.ts) >"$data_dir/ingest.log" 2>&1 &
pids+=($!)
cursor_secret=$(node -e "console.log(require('crypto').randomBytes(32).toString('hex'))")
(cd api && API_DATA_DIR="$data_dir" API_PORT="$api_port" API_HOST=127.0.0.1 \
  API_PUBLIC_BASE_URL="http://127.0.0.1:$api_port" API_CURSOR_SECRET="$cursor_secret" \
  exec node src/main.ts) >"$data_dir/api.log" 2>&1 &
pids+=($!)

# Polls until `curl ARGS...` answers 200; gives up after TIMEOUT seconds or when ingest or api exits.
wait_for_200() {
  local timeout="$1" failure="$2"
  shift 2
  local deadline=$((SECONDS + timeout))
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "$@")" = 200 ]; do
    if ((SECONDS >= deadline)); then
      echo "demo: $failure" >&2
      exit 1
    fi
    for pid in "${pids[@]}"; do
      kill -0 "$pid" 2>/dev/null || { echo "demo: a process exited; see $data_dir/*.log" >&2; exit 1; }
    done
    sleep 1
  done
}

echo "== waiting until the demo key and the data are projected"
wait_for_200 180 "the api did not answer /v1/me with the demo key within 180 s; see $data_dir/*.log" \
  -H "Authorization: Bearer $key" "http://127.0.0.1:$api_port/v1/me"
# The key answers as soon as control.sqlite has it; the examples below also need the rows: wait
# until ingest reports it has caught up (/readyz: summed consumer lag within its bound).
echo "== waiting until ingest has caught up with the topics (/readyz)"
wait_for_200 600 "ingest did not catch up within 600 s; see $data_dir/ingest.log and http://127.0.0.1:$admin_port/metrics" \
  "http://127.0.0.1:$admin_port/readyz"

cat <<EOT

The pipeline is running: PostgreSQL → Debezium → Kafka → ingest → SQLite ($data_dir) → api.

Demo API key (shown once; only its SHA-256 is stored):
  export KEY='$key'

Try:
  curl -s http://127.0.0.1:$api_port/v1/health
  curl -s -H "Authorization: Bearer \$KEY" http://127.0.0.1:$api_port/v1/me
  curl -s -H "Authorization: Bearer \$KEY" 'http://127.0.0.1:$api_port/v1/sites?limit=2&include=contacts'
  curl -s -H "Authorization: Bearer \$KEY" 'http://127.0.0.1:$api_port/v1/equipment?include=category&sort=-updated_at'
  curl -sg -H "Authorization: Bearer \$KEY" 'http://127.0.0.1:$api_port/v1/services?fields[services]=name,client'

Change a row and watch it arrive (under a second):
  source $(stack_env_file)
  PGPASSWORD=\$PDA_PG_PASSWORD psql -h \$PDA_PG_HOST -p \$PDA_PG_PORT -U \$PDA_PG_USER -d \$PDA_PG_DATABASE \\
    -c "UPDATE sites SET name = 'Renamed' WHERE id = (SELECT id FROM sites WHERE company_id = '$company_id' ORDER BY id LIMIT 1)"

Ingest metrics: http://127.0.0.1:$admin_port/metrics   readiness: http://127.0.0.1:$admin_port/readyz
Ctrl-C (or SIGTERM to this script) stops ingest and api; \`bash dev-world/stack/stack.sh down\` stops the stack.
EOT
wait -n "${pids[@]}"
