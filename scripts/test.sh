#!/usr/bin/env bash
# The whole test suite, on a fresh machine too: installs pnpm and the dependencies, lints and
# type-checks, starts the real stack (PostgreSQL, Kafka, Kafka Connect + Debezium), runs the unit and
# end-to-end tests and the third-party contract checks, then stops the stack; then builds the
# container images (installing the Docker engine from Debian's packages when missing, as root) and
# runs the container tests (the CDC e2e files on testcontainers, the docker-compose black box).
#
#   bash scripts/test.sh            # everything
#   KEEP_STACK=1 bash scripts/test.sh   # leave the stack running afterwards (faster re-runs)
#   PDA_TEST_CONTAINERS=0 bash scripts/test.sh   # without the container path (machines that cannot
#                                                # run Docker); the closing line says it did not run
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bootstrap.sh

# The shared rate-limit budget is tested against a real redis-server (Debian package), installed
# once and never upgraded (an upgrade under running servers breaks them).
if ! command -v redis-server >/dev/null 2>&1; then
  echo "== installing redis-server from Debian packages"
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-upgrade redis-server; } \
    >/tmp/pda-apt-redis.log 2>&1 || { echo "test: could not install redis-server (see /tmp/pda-apt-redis.log)" >&2; exit 1; }
  # The package starts a system server on 6379; the tests start their own on free ports.
  systemctl disable --now redis-server >/dev/null 2>&1 || service redis-server stop >/dev/null 2>&1 || true
fi

# Two api + ingest nodes are tested behind HAProxy (test/replicas.e2e.test.ts; recipe in
# docs/deployment-replicas.md): Debian's package, installed once; the test starts its own on free ports.
if ! command -v haproxy >/dev/null 2>&1; then
  echo "== installing haproxy from Debian packages"
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-upgrade haproxy; } \
    >/tmp/pda-apt-haproxy.log 2>&1 || { echo "test: could not install haproxy (see /tmp/pda-apt-haproxy.log)" >&2; exit 1; }
  # The package starts a system haproxy (no frontends in its default config); stop it.
  systemctl disable --now haproxy >/dev/null 2>&1 || service haproxy stop >/dev/null 2>&1 || true
fi

# The operators' kit is checked with Prometheus' own tools (promtool; a real prometheus scraping
# ingest and the api in test/monitoring.e2e.test.ts): Debian's package, installed once.
if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
  echo "== installing prometheus (promtool) from Debian packages"
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-upgrade prometheus; } \
    >/tmp/pda-apt-prometheus.log 2>&1 || { echo "test: could not install prometheus (see /tmp/pda-apt-prometheus.log)" >&2; exit 1; }
  # The package may start a system server on 9090; the test starts its own on a free port.
  systemctl disable --now prometheus >/dev/null 2>&1 || service prometheus stop >/dev/null 2>&1 || true
fi

# The analysts' browser view is tested in a real browser (analysts/tests/datasette.test.ts): headless
# Chromium from Debian's packages, installed once. Datasette itself comes from PyPI into the tools
# cache (scripts/lib/datasette.sh), installed here so that the test's time is its own.
if ! command -v chromium >/dev/null 2>&1; then
  echo "== installing chromium from Debian packages"
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-upgrade chromium; } \
    >/tmp/pda-apt-chromium.log 2>&1 || { echo "test: could not install chromium (see /tmp/pda-apt-chromium.log)" >&2; exit 1; }
fi
bash scripts/datasette.sh --install-only >/dev/null || { echo "test: could not install Datasette (scripts/lib/datasette.sh)" >&2; exit 1; }

# kafkajs 2.2.4 sets a `-1 - Date.now()` timer on every connection; Node 24 prints a warning for each
# (ingest's start scripts pass the same flag: ingest/README.md). Inherited by every test process.
export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--disable-warning=TimeoutNegativeWarning"
# CI=true makes vitest colour its output even into a file; a log read later wants plain text.
[ -t 1 ] || export NO_COLOR=1

results_dir=$(mktemp -d)
stack_log="$results_dir/stack-up.log"

# The stack takes a while on a cold machine (Maven downloads): start it in the background while the
# fast checks run, and wait for it before the end-to-end tests.
bash dev-world/stack/stack.sh up >"$stack_log" 2>&1 &
stack_pid=$!
# The tracing test (test/tracing.e2e.test.ts) sends spans to a real OTLP receiver: Jaeger, built once
# from the Go module proxy into the tools cache (scripts/lib/jaeger.sh; several minutes on a fresh
# machine, so in the background too, at low priority).
jaeger_bin_file="$results_dir/jaeger-bin"
(nice -n 10 bash -c 'source scripts/lib/jaeger.sh && ensure_jaeger' >"$jaeger_bin_file" 2>"$results_dir/jaeger-build.log") &
jaeger_pid=$!
stop_stack() {
  if [ "${KEEP_STACK:-0}" != "1" ]; then bash dev-world/stack/stack.sh down >/dev/null 2>&1 || true; fi
}
trap stop_stack EXIT

# Runs one vitest project into $results_dir/PROJECT.json; its exit status lands in run_status.
# V8 in Node 24 can abort a test process on its own (scripts/lib/test-process-died.ts says when and
# why); the run then leaves no report. Only then — no report, and V8's banner or the pool's lost
# channel in the output — the project runs once more, saying so. Failed tests are never re-run.
reruns=()
run_vitest_project() {
  local project=$1 report="$results_dir/$1.json" log="$results_dir/$1.log" attempt
  for attempt in 1 2; do
    run_status=0
    pnpm exec vitest run --project "$project" --reporter=default --reporter=json \
      --outputFile.json="$report" 2>&1 | tee "$log" || run_status=$?
    if [ "$attempt" = 2 ] || [ "$run_status" = 0 ] || ! node scripts/lib/test-process-died.ts "$report" "$log"; then
      return 0
    fi
    echo "test: the $project test process died without a report (a V8 abort, not a test failure); running $project once more"
    reruns+=("$project")
  done
}

echo "== lint and type-check"
pnpm exec biome check .
bash scripts/lib/check-doc-pointers.sh
pnpm -r --workspace-concurrency=2 typecheck

echo "== unit tests"
run_vitest_project unit
unit_status=$run_status

echo "== waiting for the stack"
if ! wait "$stack_pid"; then
  cat "$stack_log" >&2
  echo "test: the stack did not start" >&2
  exit 1
fi
tail -n 3 "$stack_log"

if ! wait "$jaeger_pid"; then
  cat "$results_dir/jaeger-build.log" >&2
  echo "test: could not build Jaeger, the OTLP receiver of the tracing test (scripts/lib/jaeger.sh)" >&2
  exit 1
fi
PDA_JAEGER_BIN=$(tail -n 1 "$jaeger_bin_file")
export PDA_JAEGER_BIN

echo "== end-to-end tests (real stack)"
run_vitest_project e2e
e2e_status=$run_status

# A missing script fails the step (bash exits 127): it is never counted as passed.
contract_status=0
echo "== contract checks (Spectral, Schemathesis)"
bash scripts/contract-checks.sh || contract_status=$?

# The container path: the native stack is stopped first (two cores; the compose test uses ports of
# its own either way).
containers_status=0
container_results=()
if [ "${PDA_TEST_CONTAINERS:-1}" = 1 ]; then
  stop_stack
  echo "== container images (dev-world/containers/build-images.sh)"
  images_status=0
  bash dev-world/containers/build-images.sh || images_status=$?
  container_results+=("step:container-images:$images_status")
  if [ "$images_status" = 0 ]; then
    # One project at a time: vitest would run the two projects' files side by side on two cores.
    echo "== the CDC e2e files on a testcontainers stack"
    run_vitest_project e2e-containers
    e2e_containers_status=$run_status
    echo "== container tests (docker-compose black box)"
    run_vitest_project containers
    compose_status=$run_status
    container_results+=("$results_dir/e2e-containers.json:$e2e_containers_status" "$results_dir/containers.json:$compose_status")
    [ "$e2e_containers_status" = 0 ] && [ "$compose_status" = 0 ] || containers_status=1
  else
    containers_status=1
    echo "test: building the container images failed (exit $images_status); the container tests did not run" >&2
    # Their reports are missing, so the closing line counts them as failures too.
    container_results+=("$results_dir/e2e-containers.json:1" "$results_dir/containers.json:1")
  fi
else
  echo "== container tests NOT run (PDA_TEST_CONTAINERS=$PDA_TEST_CONTAINERS)"
  container_results+=("not-run:e2e-containers" "not-run:containers")
fi

# One plain closing line for CI, the last line of the run (scripts/lib/summarize-results.ts says
# what counts): vitest's own summary is per project.
[ "$containers_status" = 0 ] || echo "test: the container path failed"
[ "${#reruns[@]}" = 0 ] || echo "test: run once more after their test process died: ${reruns[*]}"
node scripts/lib/summarize-results.ts "$results_dir/unit.json:$unit_status" "$results_dir/e2e.json:$e2e_status" \
  "step:contract-checks:$contract_status" "${container_results[@]}"

[ "$unit_status" = 0 ] && [ "$e2e_status" = 0 ] && [ "$contract_status" = 0 ] && [ "$containers_status" = 0 ]
