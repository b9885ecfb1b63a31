# shellcheck shell=bash
# Sourced by the top-level scripts: makes sure Node, the pinned pnpm and the workspace dependencies
# are installed, on a fresh machine too. Idempotent and quick when everything is already there.

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pnpm_version=$(node -p "require('$repo_root/package.json').packageManager.split('@')[1]" 2>/dev/null) || {
  echo "bootstrap: Node.js is required (>= 20.19); install it first" >&2
  exit 1
}

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "bootstrap: Node.js >= 20.19 is required, found $(node --version)" >&2
  exit 1
fi

# corepack's signature check fails on our machines: install the pinned pnpm with npm instead.
if [ "$(pnpm --version 2>/dev/null)" != "$pnpm_version" ]; then
  echo "bootstrap: installing pnpm@$pnpm_version with npm"
  npm install --global --no-fund --no-audit "pnpm@$pnpm_version" >/dev/null 2>&1 || {
    echo "bootstrap: could not install pnpm@$pnpm_version from the npm registry" >&2
    exit 1
  }
fi

# better-sqlite3 compiles from source here (about a minute) the first time.
install_log=$(mktemp)
if ! (cd "$repo_root" && pnpm install --frozen-lockfile >"$install_log" 2>&1); then
  tail -n 30 "$install_log" >&2
  echo "bootstrap: pnpm install failed (full log: $install_log)" >&2
  exit 1
fi
rm -f "$install_log"
