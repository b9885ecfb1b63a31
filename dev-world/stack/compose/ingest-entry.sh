#!/usr/bin/env bash
# The ingest container's entry point in docker-compose.yml. With company-keyed partitions
# (PDA_DATA_PARTITIONS > 1) the one ingest of a compose project is the single writer of a split
# deployment (docs/scaling.md, "Split the writer by company"): an ownership file gives it every
# partition. That is also how it learns N: the database is empty when the project starts, so the
# connector has created no topic yet, and ingest creates the missing tenant topics itself, with N
# partitions (with one, PartitionRouting's events for partitions 1..N-1 could not be written).
set -euo pipefail
n="${PDA_DATA_PARTITIONS:-1}"
if [[ ! "$n" =~ ^[1-9][0-9]{0,4}$ ]] || ((n > 10000)); then
  echo "ingest-entry: PDA_DATA_PARTITIONS='$n': expected a whole number from 1 to 10000" >&2
  exit 2
fi
if ((n > 1)) && [[ -z "${INGEST_OWNERSHIP_FILE:-}" ]]; then
  file=/tmp/pda-ownership.json
  printf '{"partitions":%d,"writers":[{"name":"compose","api":"http://api:8080","serves":[%s]}]}\n' \
    "$n" "$(seq -s, 0 $((n - 1)))" >"$file"
  export INGEST_OWNERSHIP_FILE="$file" INGEST_WRITER_NAME=compose
fi
exec "$@"
