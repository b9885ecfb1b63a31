#!/usr/bin/env bash
# One-shot job of docker-compose.yml: registers ops/stack/connector.json (the file the native stack
# registers too) and waits, by polling, until the connector's task is RUNNING. Exit 1 on FAILED.
set -euo pipefail
url="${PDA_CONNECT_URL:?}"
name="${PDA_CONNECTOR_NAME:-pda-postgres}"
response="$(curl -sS -X PUT -H 'Content-Type: application/json' -w '\n%{http_code}' \
  --data-binary "@${PDA_CONNECTOR_JSON:-/pda/connector.json}" "$url/connectors/$name/config")"
code="${response##*$'\n'}"
if [[ "$code" != 200 && "$code" != 201 ]]; then
  echo "connector registration rejected (HTTP $code): ${response%$'\n'*}" >&2
  exit 1
fi
for _ in $(seq 1 240); do
  status="$(curl -fsS "$url/connectors/$name/status" || true)"
  case "$status" in
  *'"state":"FAILED"'*)
    echo "connector $name FAILED: $status" >&2
    exit 1
    ;;
  *'"tasks":[{"id":0,"state":"RUNNING"'*)
    echo "connector $name RUNNING"
    exit 0
    ;;
  esac
  sleep 0.5
done
echo "connector $name not RUNNING after 120 s: $status" >&2
exit 1
