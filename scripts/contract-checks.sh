#!/usr/bin/env bash
# Third-party contract checks, run by scripts/test.sh after the end-to-end tests (stack up,
# <stack dir>/env written):
#   1. Spectral (OAS + OWASP rulesets, api/.spectral.yaml) lints api/openapi.yaml clean;
#   2. Schemathesis (`st run --checks all`, pinned, in .venv/) against a RUNNING api serving real
#      data through the real pipeline: a company seeded in PostgreSQL, captured by Debezium, applied
#      by ingest into projection files, with a key issued by the operator tools' keys CLI.
# Starts and stops its own ingest and api on free ports, every wait bounded; exits non-zero on any
# failure. Environment: CONTRACT_MAX_EXAMPLES (default 50 per operation), CONTRACT_SEED
# (Schemathesis seed; default fixed so CI is reproducible, `random` for a new one each run).
set -euo pipefail
cd "$(dirname "$0")/.."
repo_root=$PWD
source scripts/lib/contract-schemathesis.sh
source scripts/lib/contract-pipeline.sh
source scripts/lib/stack-env.sh

echo "== Spectral: api/openapi.yaml with the OAS and OWASP rulesets"
pnpm --silent --filter @pda/api run lint:contract

st=$(ensure_schemathesis "$repo_root")

source_stack_env

run_id="contract-$(date +%s)-$$"
work=$(mktemp -d)
data_dir="$work/data"
mkdir -p "$data_dir" .data/contract-checks
pids=()
company_id=""
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  # Both drain on SIGTERM; whatever still runs after 15 s is killed.
  local deadline=$((SECONDS + 15))
  for pid in "${pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ -n "$company_id" ]; then delete_company "$company_id" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== real data: seed one company (seed $run_id), issue a key"
company_id=$(seed_company "$run_id")
[ -n "$company_id" ] || { echo "contract-checks: seeding created no company" >&2; exit 1; }
key=$(issue_key "$company_id")
[ -n "$key" ] || { echo "contract-checks: issuing the key failed" >&2; exit 1; }

api_port=$(free_port)
admin_port=$(free_port)
api="http://127.0.0.1:$api_port"
echo "== ingest (group $run_id) and api ($api) on the projection files in $data_dir"
# `exec node` (what `pnpm start` runs, without pnpm): $! is then the server process itself, which
# the cleanup's SIGTERM stops (pnpm would leave its grandchildren running).
(cd ingest && INGEST_KAFKA_BROKERS="$PDA_KAFKA_BROKERS" INGEST_TOPIC_PREFIX="${PDA_TOPIC_PREFIX:-pda}" \
  INGEST_GROUP_ID="$run_id" INGEST_CLIENT_ID="$run_id" INGEST_DATA_DIR="$data_dir" \
  INGEST_SCHEMA_REGISTRY_URL="$PDA_SCHEMA_REGISTRY_URL" \
  INGEST_ADMIN_PORT="$admin_port" INGEST_READY_MAX_LAG=0 INGEST_LOG_LEVEL=warn \
  exec node src/main.ts) >"$work/ingest.log" 2>&1 &
pids+=($!)
wait_until 300 "ingest creating control.sqlite" test -f "$data_dir/control.sqlite" || {
  tail -n 20 "$work/ingest.log" >&2
  exit 1
}
# The budget is raised for this run: Schemathesis sends ~2,000 requests in a minute, and 429s would
# stand in for the answers under test (rate limiting has its own tests in api/tests/rate-limit*).
cursor_secret=$(node -e 'console.log(require("crypto").randomBytes(32).toString("hex"))')
# start_api <port> <log> [NAME=VALUE ...]: an api on the projection files (its admin port any free
# one), with the settings given on top; node replaces the subshell, so the cleanup's SIGTERM stops it.
start_api() {
  local port=$1 log=$2
  shift 2
  (cd api && exec env API_DATA_DIR="$data_dir" API_HOST=127.0.0.1 API_PORT="$port" \
    API_PUBLIC_BASE_URL="http://127.0.0.1:$port" API_ADMIN_PORT=0 API_CURSOR_SECRET="$cursor_secret" \
    API_RATE_LIMIT_MAX=1000000 API_LOG_LEVEL=warn "$@" node src/main.ts) >"$log" 2>&1 &
  pids+=($!)
}
start_api "$api_port" "$work/api.log"

echo "== waiting until the key and the data are projected and ingest has caught up"
if ! wait_until 300 "the key answering /v1/me" http_ok "$api/v1/me" "Authorization: Bearer $key" ||
  ! wait_until 300 "the company's sites being served" has_sites "$api" "$key" ||
  ! wait_until 300 "ingest catching up (/readyz)" http_ok "http://127.0.0.1:$admin_port/readyz"; then
  tail -n 20 "$work/ingest.log" "$work/api.log" >&2
  exit 1
fi

seed_option=(--seed "${CONTRACT_SEED:-20261122}")
[ "${CONTRACT_SEED:-}" = random ] && seed_option=()
echo "== Schemathesis $SCHEMATHESIS_VERSION: st run --checks all against $api with the real key"
st_status=0
# judge_schemathesis <st log> <api log> <exit status> [what]: on a failure the log's end, the api's
# errors and exit 1; else Schemathesis's summary with its banners made plain text.
judge_schemathesis() {
  local st_log=$1 api_log=$2 status=$3 what=${4:-}
  if [ "$status" != 0 ]; then
    plain_banners <"$st_log" | cut -c1-2000
    grep -iE '"level":(50|60)' "$api_log" | tail -n 20 >&2 || true
    echo "contract-checks: Schemathesis failed${what:+ on $what} (exit $status)" >&2
    exit 1
  fi
  sed -n '/SUMMARY/,$p' "$st_log" | plain_banners
}
SCHEMATHESIS_HOOKS="$repo_root/scripts/lib/contract-schemathesis-hooks.py" timeout 900 \
  "$st" run api/openapi.yaml --url "$api" --header "Authorization: Bearer $key" --checks all \
  --max-examples "${CONTRACT_MAX_EXAMPLES:-50}" "${seed_option[@]}" --request-timeout 10 \
  --generation-database "$repo_root/.data/contract-checks/examples" --no-color \
  >"$work/schemathesis.log" 2>&1 || st_status=$?
judge_schemathesis "$work/schemathesis.log" "$work/api.log" "$st_status"

# The fair-shares pass: a second api on the same files whose per-key in-progress cap is 1 and
# whose pages are read by a reader thread, six Schemathesis workers at once (valid data only),
# and every third GET /v1/sites steered to a since page that the scan budget cuts short (below;
# scripts/lib/contract-schemathesis-hooks.py), and every third GET /v1/changes asked as an NDJSON
# stream (each line judged). The hooks count what the api answered; each documented answer must
# have been seen and judged.
fair_port=$(free_port)
fair_api="http://127.0.0.1:$fair_port"
echo "== Schemathesis, fair-shares pass: $fair_api with API_MAX_IN_PROGRESS_PER_KEY=1, API_READ_THREADS=1, 6 workers"
# The overlap is 0 so that the since below matches exactly the sites changed after it.
start_api "$fair_port" "$work/api-fair.log" \
  API_MAX_IN_PROGRESS_PER_KEY=1 API_READ_THREADS=1 API_UPDATED_SINCE_OVERLAP_MS=0
if ! wait_until 60 "the fair-shares api answering /v1/me" http_ok "$fair_api/v1/me" "Authorization: Bearer $key"; then
  tail -n 20 "$work/api-fair.log" >&2
  exit 1
fi
# Short pages need matches gathered at the far end of the sort: the newest 400 of the 2,000 sites
# by created_at change again, and a since page sorted by created_at passes the 1,600 others first
# (more than its budget of 272 for one row; more than 272 match, so the walk is the plan taken).
since=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
sleep 1
touch_newest_sites "$company_id" 400
if ! wait_until 120 "the 400 changed sites being served" lists_changed_since "$fair_api" "$key" "$since" 400; then
  echo "contract-checks: the api lists $(changed_since_count "$fair_api" "$key" "$since") sites changed since $since, not 400" >&2
  exit 1
fi
outcomes="$work/fair-outcomes.json"
st_status=0
PDA_CONTRACT_OUTCOMES="$outcomes" PDA_CONTRACT_SINCE="$since" SCHEMATHESIS_HOOKS="$repo_root/scripts/lib/contract-schemathesis-hooks.py" \
  timeout 600 "$st" run api/openapi.yaml --url "$fair_api" --header "Authorization: Bearer $key" \
  --checks all --mode positive --workers 6 --phases examples,coverage,fuzzing \
  --max-examples "${CONTRACT_FAIR_MAX_EXAMPLES:-20}" "${seed_option[@]}" --request-timeout 10 --no-color \
  >"$work/schemathesis-fair.log" 2>&1 || st_status=$?
judge_schemathesis "$work/schemathesis-fair.log" "$work/api-fair.log" "$st_status" "the fair-shares pass"
if ! node -e '
  const o = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`contract-checks: the fair-shares pass saw ${o.short_pages} short pages, ${o.in_progress_refusals} in-progress refusals (429) and ${o.streams} whole change-feed streams (${o.bad_streams} malformed) in ${o.calls} calls`);
  process.exit(o.short_pages > 0 && o.in_progress_refusals > 0 && o.streams > 0 && o.bad_streams === 0 ? 0 : 1);
' "$outcomes"; then
  echo "contract-checks: the fair-shares pass did not see a short page, a 429 too_many_requests_in_progress and a well-formed change-feed stream (and no malformed one)" >&2
  exit 1
fi
echo "contract-checks: Spectral and Schemathesis passed"
