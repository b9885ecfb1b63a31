# shellcheck shell=bash
# Sourced by the top-level scripts: makes sure Node 24, the pinned pnpm and the workspace
# dependencies are installed, on a fresh machine too, and puts them first on PATH for the caller.
# Idempotent and quick when everything is already there. Versions: scripts/lib/runtime.env; Node
# itself (ensure_node) lives in scripts/lib/node.sh, which the native stack sources too.

# shellcheck source=node.sh
source "$(dirname "${BASH_SOURCE[0]}")/node.sh"

# Runs "$@" with its output in a log, printing a line every 15 s so a long step never looks hung.
bootstrap_run_logged() {
  local log="$1" what="$2"
  shift 2
  local started=$SECONDS
  "$@" >"$log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if (((SECONDS - started) % 15 == 0)) && ((SECONDS > started)); then
      bootstrap_say "  … still $what ($((SECONDS - started)) s; last: $(tail -n 1 "$log" | cut -c1-100))"
    fi
  done
  wait "$pid"
}

# pnpm: corepack's signature check fails on our machines, so the pinned pnpm is installed with npm,
# next to the Node that runs it.
ensure_pnpm() {
  local pnpm_version
  pnpm_version=$(node -p "require('$repo_root/package.json').packageManager.split('@')[1]")
  if [ "$(pnpm --version 2>/dev/null)" = "$pnpm_version" ]; then return 0; fi
  local pnpm_home="$pda_tools_cache/pnpm-$pnpm_version"
  if [ ! -x "$pnpm_home/bin/pnpm" ]; then
    bootstrap_say "installing pnpm@$pnpm_version with npm into $pnpm_home"
    npm install --global --prefix "$pnpm_home" --no-fund --no-audit "pnpm@$pnpm_version" >/dev/null 2>&1 ||
      bootstrap_fail "could not install pnpm@$pnpm_version from the npm registry"
  fi
  export PATH="$pnpm_home/bin:$PATH"
}

# node-gyp must compile better-sqlite3 against the headers of the Node that will load it (no
# prebuilt binary is reachable here); the machine's npm config may point at another Node's.
node_headers_dir() {
  node -p 'require("path").dirname(require("path").dirname(process.execPath))'
}

better_sqlite3_loads() {
  (cd "$repo_root/projections" && node -e 'new (require("better-sqlite3"))(":memory:").close()') >/dev/null 2>&1
}

ensure_dependencies() {
  local log
  log=$(mktemp)
  export npm_config_nodedir
  npm_config_nodedir=$(node_headers_dir)
  if [ ! -d "$repo_root/node_modules/.pnpm" ]; then
    bootstrap_say "installing the workspace dependencies (first run: ~1 min download, then ~1 min compiling better-sqlite3 for Node $(node --version))"
  fi
  if ! (cd "$repo_root" && bootstrap_run_logged "$log" "installing dependencies" pnpm install --frozen-lockfile --reporter=append-only); then
    tail -n 30 "$log" >&2
    bootstrap_fail "pnpm install failed (full log: $log)"
  fi
  # A node_modules built by an older Node holds a better-sqlite3 addon this Node cannot load.
  if ! better_sqlite3_loads; then
    bootstrap_say "compiling better-sqlite3 for Node $(node --version) (~1 min)"
    (cd "$repo_root" && bootstrap_run_logged "$log" "compiling better-sqlite3" pnpm rebuild better-sqlite3) || {
      tail -n 30 "$log" >&2
      bootstrap_fail "better-sqlite3 did not compile (full log: $log)"
    }
    better_sqlite3_loads || bootstrap_fail "better-sqlite3 still does not load under Node $(node --version)"
  fi
  rm -f "$log"
}

ensure_node
ensure_pnpm
ensure_dependencies
