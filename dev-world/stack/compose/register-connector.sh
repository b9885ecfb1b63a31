#!/usr/bin/env bash
# One-shot job of docker-compose.yml: registers dev-world/stack/connector.json (the file the native stack
# registers too) plus "table.include.list": "public.<t1>,public.<t2>,..." from PDA_CAPTURED_TABLES
# (comma-separated, the output of dev-world/stack/captured-tables.ts: the table registry's list), and
# waits, by polling, until the connector's task is RUNNING. Exit 1 on FAILED.
# Plain bash, no jq (the Connect image is not known to ship it): table names are checked to be
# [a-z0-9_] words, so they need no JSON escaping, and the entry goes right after connector.json's
# opening brace (connector.json holds no table.include.list of its own).
set -euo pipefail
url="${PDA_CONNECT_URL:?}"
name="${PDA_CONNECTOR_NAME:-pda-postgres}"
tables="${PDA_CAPTURED_TABLES:?PDA_CAPTURED_TABLES is not set (export PDA_CAPTURED_TABLES=\$(node dev-world/stack/captured-tables.ts) before docker compose up)}"
if [[ ! "$tables" =~ ^[a-z_][a-z0-9_]*(,[a-z_][a-z0-9_]*)*$ ]]; then
  echo "PDA_CAPTURED_TABLES='$tables' is not a comma-separated list of table names" >&2
  exit 1
fi
connector_json="$(<"${PDA_CONNECTOR_JSON:-/pda/connector.json}")"
# PDA_CONNECTOR_FORMAT (default avro, what connector.json holds): json / json-schemaless replace
# connector.json's converter lines (one "key.converter…"/"value.converter…" entry per line, never its
# last) by the entries of /pda/converters/<format>.json, as dev-world/stack/lib/connect.sh does with jq.
format="${PDA_CONNECTOR_FORMAT:-avro}"
if [[ "$format" != avro ]]; then
  converters_file="${PDA_CONVERTERS_DIR:-/pda/converters}/$format.json"
  if [[ ! "$format" =~ ^[a-z-]+$ || ! -f "$converters_file" ]]; then
    echo "PDA_CONNECTOR_FORMAT='$format': expected avro, json or json-schemaless" >&2
    exit 1
  fi
  converters="$(<"$converters_file")"
  converters="${converters#*\{}"
  connector_json="{${converters%\}*},$(grep -Ev '^[[:space:]]*"(key|value)[.]converter' <<<"${connector_json#*\{}")"
fi
# PDA_DATA_PARTITIONS (default 1: connector.json as is) > 1 adds the entries of
# /pda/connector-partitioned.json (company-keyed partitions, dev-world/stack/README.md), its
# "__PDA_DATA_PARTITIONS__" values replaced by the count, as dev-world/stack/lib/connect.sh does with jq:
# connector.json's lines of the keys it sets (never its last line) are dropped first.
partitions="${PDA_DATA_PARTITIONS:-1}"
if [[ ! "$partitions" =~ ^[1-9][0-9]{0,4}$ ]] || ((partitions > 10000)); then
  echo "PDA_DATA_PARTITIONS='$partitions': expected a whole number from 1 to 10000" >&2
  exit 1
fi
overlay_entries=""
if ((partitions > 1)); then
  overlay="$(<"${PDA_CONNECTOR_OVERLAY_JSON:-/pda/connector-partitioned.json}")"
  overlay="${overlay//__PDA_DATA_PARTITIONS__/$partitions}"
  overlay="${overlay#*\{}"
  overlay="${overlay%\}*}"
  overlay_keys=""
  while IFS= read -r line; do
    [[ "$line" =~ ^[[:space:]]*\"([^\"]+)\" ]] && overlay_keys+="${overlay_keys:+|}${BASH_REMATCH[1]//./[.]}"
  done <<<"$overlay"
  connector_json="{$(grep -Ev "^[[:space:]]*\"($overlay_keys)\"[[:space:]]*:" <<<"${connector_json#*\{}")"
  overlay_entries="${overlay%"${overlay##*[![:space:]]}"},"
fi
config="{\"table.include.list\": \"public.${tables//,/,public.}\",$overlay_entries${connector_json#*\{}"
response="$(curl -sS -X PUT -H 'Content-Type: application/json' -w '\n%{http_code}' \
  --data-binary @- "$url/connectors/$name/config" <<<"$config")"
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
