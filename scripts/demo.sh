#!/usr/bin/env bash
# The product, end to end, on one machine: starts the real stack (PostgreSQL → Debezium → Kafka),
# seeds demo data, issues a demo API key, runs `ingest` and `api`, waits until the key and the data
# are projected, then prints how to call the API. Ctrl-C stops ingest and api (the stack keeps
# running; `bash ops/stack/stack.sh down` stops it).
#
# Environment: DEMO_API_PORT (default 8080), DEMO_DATA_DIR (default .data/demo).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bootstrap.sh
source scripts/lib/stack-env.sh

api_port="${DEMO_API_PORT:-8080}"
data_dir="${DEMO_DATA_DIR:-$PWD/.data/demo}"
admin_port="${DEMO_INGEST_ADMIN_PORT:-9464}"
mkdir -p "$data_dir"

echo "== starting the stack (first run downloads Kafka, Connect and Debezium from Maven Central)"
bash ops/stack/stack.sh up
source_stack_env

company_count=$(psql "postgresql://$PDA_PG_USER:$PDA_PG_PASSWORD@$PDA_PG_HOST:$PDA_PG_PORT/$PDA_PG_DATABASE" \
  -tAc 'SELECT count(*) FROM companies')
if [ "$company_count" = 0 ]; then
  echo "== seeding demo data (3 companies)"
  pnpm --silent --filter @pda/ops seed -- --companies 3 --seed 42
else
  echo "== demo data already present ($company_count companies)"
fi
company_id=$(psql "postgresql://$PDA_PG_USER:$PDA_PG_PASSWORD@$PDA_PG_HOST:$PDA_PG_PORT/$PDA_PG_DATABASE" \
  -tAc 'SELECT c.id FROM companies c ORDER BY (SELECT count(*) FROM sites s WHERE s.company_id = c.id) DESC, c.id LIMIT 1')

echo "== issuing a demo API key for company $company_id (shown once)"
key=$(pnpm --silent --filter @pda/ops keys -- issue --company "$company_id" --name "demo key" \
  --scopes sites:read,services:read,equipment:read,equipment-categories:read,consumables:read --json |
  node -e 'let s="";process.stdin.on("data",(d)=>(s+=d)).on("end",()=>console.log(JSON.parse(s).key))')

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

# The build stamp GET /v1/version reports (what a deploy script does).
bash api/scripts/stamp-version.sh >/dev/null 2>&1 || true

echo "== starting ingest (log: $data_dir/ingest.log) and api (log: $data_dir/api.log)"
INGEST_KAFKA_BROKERS="$PDA_KAFKA_BROKERS" INGEST_DATA_DIR="$data_dir" INGEST_GROUP_ID=pda-demo \
  INGEST_SCHEMA_REGISTRY_URL="$PDA_SCHEMA_REGISTRY_URL" \
  INGEST_ADMIN_PORT="$admin_port" \
  pnpm --silent --filter @pda/ingest start >"$data_dir/ingest.log" 2>&1 &
pids+=($!)
API_DATA_DIR="$data_dir" API_PORT="$api_port" API_HOST=127.0.0.1 \
  API_PUBLIC_BASE_URL="http://127.0.0.1:$api_port" API_CURSOR_SECRET="$(node -e "console.log(require('crypto').randomBytes(32).toString('hex'))")" \
  pnpm --silent --filter @pda/api start >"$data_dir/api.log" 2>&1 &
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
  psql postgresql://$PDA_PG_USER:$PDA_PG_PASSWORD@$PDA_PG_HOST:$PDA_PG_PORT/$PDA_PG_DATABASE \\
    -c "UPDATE sites SET name = 'Renamed' WHERE id = (SELECT id FROM sites WHERE company_id = '$company_id' ORDER BY id LIMIT 1)"

Ingest metrics: http://127.0.0.1:$admin_port/metrics   readiness: http://127.0.0.1:$admin_port/readyz
Ctrl-C stops ingest and api; \`bash ops/stack/stack.sh down\` stops the stack.
EOT
wait -n "${pids[@]}"
