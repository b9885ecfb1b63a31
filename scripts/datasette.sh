#!/usr/bin/env bash
# Datasette on a snapshot of the projection files, in the browser, with the data dictionary as its
# metadata (docs/analysts.md, "In the browser"). Never on the live files: a consistent snapshot is
# taken first (pnpm pda projections snapshot), then Datasette serves it read-only (immutable).
#
#   bash scripts/datasette.sh --data-dir .data/demo            # every company: one analysis database
#   bash scripts/datasette.sh --data-dir .data/demo --company <id> --port 8002
#
# Options: --data-dir DIR (default $PDA_DATA_DIR), --company ID (one company's file instead of all),
# --host (default 127.0.0.1), --port (default 8001), --snapshot-dir DIR (where the snapshot and its
# metadata go; default .data/analysts), --install-only (install the pinned Datasette and stop).
# Datasette (pinned in scripts/lib/datasette.sh) is installed from PyPI into ~/.cache/pda-tools once.
set -euo pipefail
caller_dir=$PWD
cd "$(dirname "$0")/.."
repo_root=$PWD
# Paths the caller typed are relative to where they ran the script.
absolute() { case "$1" in /*) echo "$1" ;; *) echo "$caller_dir/$1" ;; esac; }
source scripts/lib/datasette.sh

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; }
fail_usage() {
  echo "datasette: $1" >&2
  usage
  exit 2
}

data_dir="${PDA_DATA_DIR:-}"
company=""
host=127.0.0.1
port=8001
snapshot_dir="$repo_root/.data/analysts"
install_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --data-dir) [ $# -ge 2 ] || fail_usage "--data-dir needs a value"; data_dir=$2; shift 2 ;;
    --company) [ $# -ge 2 ] || fail_usage "--company needs a value"; company=$2; shift 2 ;;
    --host) [ $# -ge 2 ] || fail_usage "--host needs a value"; host=$2; shift 2 ;;
    --port) [ $# -ge 2 ] || fail_usage "--port needs a value"; port=$2; shift 2 ;;
    --snapshot-dir) [ $# -ge 2 ] || fail_usage "--snapshot-dir needs a value"; snapshot_dir=$2; shift 2 ;;
    --install-only) install_only=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) fail_usage "unknown argument $1" ;;
  esac
done

data_dir=${data_dir:+$(absolute "$data_dir")}
snapshot_dir=$(absolute "$snapshot_dir")

datasette=$(ensure_datasette)
if [ "$install_only" = 1 ]; then
  "$datasette" --version
  exit 0
fi
[ -n "$data_dir" ] || fail_usage "no data directory: pass --data-dir DIR or set PDA_DATA_DIR"

source scripts/lib/bootstrap.sh
mkdir -p "$snapshot_dir"
pda() { node "$repo_root/analysts/src/main.ts" projections "$@"; }
if [ -n "$company" ]; then
  name=$company
  pda snapshot --data-dir "$data_dir" --company "$company" --out "$snapshot_dir/$name.sqlite" --force
  kind=company
else
  name=analysis
  pda snapshot --data-dir "$data_dir" --all --out "$snapshot_dir/$name.sqlite" --force
  kind=analysis
fi
pda describe --format datasette --database "$name" --kind "$kind" >"$snapshot_dir/$name.metadata.json"

echo "datasette: http://$host:$port/$name (snapshot $snapshot_dir/$name.sqlite; Ctrl-C stops)" >&2
# -i: immutable, the snapshot is never written; Datasette counts rows and facets without locks.
exec "$datasette" serve -i "$snapshot_dir/$name.sqlite" --metadata "$snapshot_dir/$name.metadata.json" \
  --host "$host" --port "$port" --setting default_page_size 50
